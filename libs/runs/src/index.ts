// What a run is, whatever its benchmark: planned, enqueued, followed, resumed, cancelled,
// summarised and exported. The scheduler and the dashboard are wiring around this.
export * from './task-ids.js';
export * from './run-planning.js';
export * from './run-enqueuer.js';
export * from './run-summary.js';
export * from './run-status.js';
export * from './run-cancel.js';
export * from './run-export.js';
export * from './atif/index.js';
export * from './example-queries.js';
export * from './benchmark-worker.js';
export * from './run-reconciler.js';
