import type { BenchmarkTools } from '@benchfleet/benchmark-kit';

/** The echo benchmark's tools, `scheduler echo …`: light, their commands loaded only when one runs. */
export const echoTools: BenchmarkTools = {
  description: 'echo benchmark tools (an example)',
  load: async () => (await import('./echo-tool-commands.js')).configureEchoTools,
};
