export * from './artifact-store.js';
