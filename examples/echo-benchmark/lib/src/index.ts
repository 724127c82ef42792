export { echoBenchmark, runEchoEpisode } from './echo-benchmark.js';
