import type { BenchmarkRegistry, ToolContext } from '@benchfleet/benchmark-kit';
import { loadSchedulerConfig, withSchedulerServices } from './config.js';

/** What a benchmark's tools get from the scheduler: its services, checked as every command's are. */
export function toolContext(registry: BenchmarkRegistry): ToolContext {
  return {
    withDatabase: (body) =>
      withSchedulerServices({ redis: false, schema: registry.migrations }, ({ db }) => body(db)),
    checkDatabase: async () => {
      await loadSchedulerConfig({ database: true });
    },
  };
}
