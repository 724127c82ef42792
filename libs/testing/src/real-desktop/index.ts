export {
  buildDesktopImages,
  startRealDesktop,
  type DesktopLabel,
  type RealDesktop,
  type RealDesktopStart,
} from './real-desktop.js';
export {
  OSWORLD_TASK_SCRIPTS,
  type OsworldTaskScript,
  type ScriptedTrajectory,
} from './osworld-task-scripts.js';
export {
  startScriptedBytebot,
  type ScriptedBytebot,
  type ScriptedPath,
} from './scripted-bytebot.js';
export { osworldExampleTask } from './osworld-example-task.js';
