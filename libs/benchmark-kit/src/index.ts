export * from './benchmark-descriptor.js';
export * from './benchmark-registry.js';
export * from './benchmark-worker-part.js';
export * from './benchmark-tools.js';
export * from './episode-context.js';
export * from './run-summary.js';
export * from './owned-json.js';
export * from './run-numbers.js';
