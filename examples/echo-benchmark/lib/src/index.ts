export { echoBenchmark } from './echo-benchmark.js';
