// The demo's benchmark wiring (`scheduler demo`): which benchmark it runs, with what data and workers.
export * from './webshop-demo.js';
