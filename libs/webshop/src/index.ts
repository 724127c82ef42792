export * from './catalog/index.js';
export * from './search/index.js';
export * from './reward/index.js';
export * from './store/index.js';
export * from './demo-catalog/index.js';
export * from './episode/webshop-episode-runner.js';
