export {
  startFakeBytebot,
  type FakeBytebot,
  type FakeBytebotOptions,
  type FakeBytebotStats,
  type FakeBytebotModel,
  type FakeBytebotTaskRow,
  type FakeBytebotMessageRow,
} from './fake-bytebot-server.js';
export {
  FAKE_BYTEBOT_SCENARIOS,
  withFakeScenario,
  fakeScenarioMarkerOf,
  type FakeBytebotScenario,
  type FakeBytebotScenarioName,
  type FakeBytebotEnding,
} from './fake-bytebot-scenarios.js';
export {
  startFakeBytebotDesktop,
  type FakeBytebotDesktop,
  type FakeBytebotDesktopOptions,
  type FakeBytebotDesktopStats,
} from './fake-bytebot-desktop.js';
export { fakeScreenshotPng, solidColorPng } from './fake-screenshot-png.js';
export { osworldTestTask, writeOsworldTestDataset } from './osworld-test-dataset.js';
export {
  BYTEBOT_PROXY_API_KEY,
  BYTEBOT_PROXY_CONTEXT_WINDOW,
  BYTEBOT_PROXY_TOOLS,
  type FakeBytebotLlmCall,
} from './fake-bytebot-proxy.js';
