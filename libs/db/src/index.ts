export * from './schema.js';
export * from './database.js';
export * from './migrate.js';
export * from './runs-repository.js';
export * from './tasks-repository.js';
export * from './steps-repository.js';
export * from './webshop-catalog-repository.js';
export * from './named-query.js';
export { prepared } from './prepared-statements.js';
