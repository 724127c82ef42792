export {
  startFakeOsworldVm,
  type FakeOsworldVm,
  type FakeOsworldVmOptions,
  type FakeVmEndpoint,
  type FakeVmRequest,
  type FakeVmLaunch,
  type FakeVmWindowAction,
  type FakeVmAnswer,
} from './fake-osworld-vm-server.js';
export { startFakeWebServer, type FakeWebServer } from './fake-web-server.js';
export { shlexSplit } from './python-shlex.js';
export {
  startFakeGradedStack,
  type FakeGradedStack,
  type FakeGradedStackOptions,
} from './fake-graded-stack.js';
