export * from './statuses.js';
export * from './config.js';
export * from './logger.js';
export * from './errors.js';
export * from './ids.js';
export * from './cli-exit.js';
export * from './listen.js';
