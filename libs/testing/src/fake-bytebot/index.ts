export {
  startFakeBytebot,
  type FakeBytebot,
  type FakeBytebotOptions,
} from './fake-bytebot-server.js';
export { withFakeScenario, type FakeBytebotScenario } from './fake-bytebot-scenarios.js';
export { startFakeBytebotDesktop, type FakeBytebotDesktop } from './fake-bytebot-desktop.js';
export { fakeScreenshotPng, solidColorPng } from './fake-screenshot-png.js';
export { osworldTestTask, writeOsworldTestDataset } from './osworld-test-dataset.js';
export { BYTEBOT_PROXY_TOOLS, bytebotChatMessages } from './fake-bytebot-proxy.js';
