export * from './job-catalog.js';
export * from './redis-connection.js';
export * from './job-producer.js';
export * from './worker-runtime.js';
export * from './task-processor.js';
export { UnrecoverableError } from 'bullmq';
export * from './worker-metrics.js';
export * from './worker-process.js';
export * from './lost-job-watcher.js';
