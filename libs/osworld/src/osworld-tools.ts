import type { BenchmarkTools } from '@benchfleet/benchmark-kit';

/** OSWorld's tools, `scheduler osworld …`: light, their commands loaded only when one runs. */
export const osworldTools: BenchmarkTools = {
  description: 'OSWorld dataset tools',
  load: async () => (await import('./osworld-tool-commands.js')).configureOsworldTools,
};
