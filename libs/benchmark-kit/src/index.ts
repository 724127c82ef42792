export * from './benchmark-descriptor.js';
export * from './benchmark-display.js';
export * from './benchmark-registry.js';
export * from './benchmark-task-handler.js';
export * from './run-summary.js';
export * from './owned-json.js';
export * from './run-numbers.js';
export * from './task-panel.js';
