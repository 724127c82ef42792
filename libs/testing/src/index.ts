export * from './test-database.js';
export * from './test-services.js';
export * from './fake-llm/index.js';
export * from './process-harness.js';
export * from './fake-bytebot/index.js';
export * from './fake-s3/index.js';
export * from './test-runs.js';
export * from './echo-benchmark/index.js';
