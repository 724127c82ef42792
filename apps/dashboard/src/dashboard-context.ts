import type { Logger } from '@benchfleet/core';
import type { Database } from '@benchfleet/db';
import type { LlmGovernor } from '@benchfleet/llm-governor';
import type { BenchmarkViews } from './benchmark-views.js';
import type { FleetObserver } from './fleet-view.js';
import type { RunDownloads } from './run-downloads.js';
import type { RunFeed } from './run-feed.js';
import type { ArtifactReader } from './artifact-reader.js';

/** What the dashboard's pages read from; each page's routes take the parts they use. */
export interface DashboardContext {
  readonly db: Database;
  readonly benchmarks: BenchmarkViews;
  readonly fleet: FleetObserver;
  readonly feed: RunFeed;
  readonly artifacts: ArtifactReader;
  /** Read only: the LLM governor's lanes and spend, from Redis. */
  readonly governor: LlmGovernor;
  readonly downloads: RunDownloads;
  readonly logger: Logger;
}
