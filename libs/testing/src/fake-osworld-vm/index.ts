export { startFakeOsworldVm, type FakeOsworldVm } from './fake-osworld-vm-server.js';
export { startFakeWebServer, type FakeWebServer } from './fake-web-server.js';
export { startFakeGradedStack, type FakeGradedStack } from './fake-graded-stack.js';
