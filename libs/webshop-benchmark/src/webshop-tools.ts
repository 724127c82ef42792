import type { BenchmarkTools } from '@benchfleet/benchmark-kit';

/** WebShop's tools, `scheduler webshop …`: light, their commands loaded only when one runs. */
export const webshopTools: BenchmarkTools = {
  description: 'WebShop catalog and parity tools',
  load: async () => (await import('./webshop-tool-commands.js')).configureWebshopTools,
};
