// Postgres and Redis on this machine when none is given: the demo's default, and the tests' and benches'.
export * from './service-provisioning.js';
export * from './local-postgres.js';
export * from './local-redis.js';
export { freePort } from './local-process.js';
