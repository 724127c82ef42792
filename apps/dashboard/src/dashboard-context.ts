import type { Logger } from '@benchfleet/core';
import type { Database } from '@benchfleet/db';
import type { BenchmarkViews } from './benchmark-views.js';
import type { FleetObserver } from './fleet-view.js';
import type { RunFeed } from './run-feed.js';
import type { ScreenshotReader } from './screenshot-reader.js';

/** What the dashboard's pages read from; each page's routes take the parts they use. */
export interface DashboardContext {
  readonly db: Database;
  readonly benchmarks: BenchmarkViews;
  readonly fleet: FleetObserver;
  readonly feed: RunFeed;
  readonly screenshots: ScreenshotReader;
  readonly logger: Logger;
}
