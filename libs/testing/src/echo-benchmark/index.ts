import { fileURLToPath } from 'node:url';

export { echoBenchmark, runEchoEpisode } from './echo-benchmark.js';

/** Entry scripts of the echo benchmark's worker and of a scheduler that knows it (run with `node --import tsx`). */
export const ECHO_ENTRIES = {
  worker: fileURLToPath(new URL('./echo-worker.entry.ts', import.meta.url)),
  scheduler: fileURLToPath(new URL('./echo-scheduler.entry.ts', import.meta.url)),
};
