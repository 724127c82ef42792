import type { Logger } from '@benchfleet/core';
import { runNamedQuery, type Database, type NamedQuery } from '@benchfleet/db';
import type { RunFeedEvent } from '../shared/view-rows.js';
import type { BenchmarkViews } from './benchmark-views.js';
import { runBenchmarkQuery } from './run-queries.js';

type Listener = (event: RunFeedEvent) => void;

interface Watched {
  listeners: Set<Listener>;
  cursor: string | undefined;
  down: boolean;
  timer: NodeJS.Timeout | undefined;
  /** The run's cursor query, by its benchmark: found on the first poll. */
  query: NamedQuery<'run'> | undefined;
}

/**
 * Live updates without a trigger on the hot tables: one cheap query per watched run and poll
 * period, however many pages are open, and an event to each of them only when its cursor moved.
 */
export class RunFeed {
  private readonly runs = new Map<string, Watched>();

  constructor(
    private readonly db: Database,
    private readonly pollMs: number,
    private readonly logger: Logger,
    private readonly benchmarks: BenchmarkViews,
  ) {}

  /** Calls `listener` with the current cursor at once, then on every change; returns the unsubscribe. */
  subscribe(runId: string, listener: Listener): () => void {
    let watched = this.runs.get(runId);
    if (!watched) {
      watched = {
        listeners: new Set(),
        cursor: undefined,
        down: false,
        timer: undefined,
        query: undefined,
      };
      this.runs.set(runId, watched);
      this.schedule(runId, watched, 0);
    } else if (watched.cursor !== undefined) {
      listener({ kind: 'changed', cursor: watched.cursor });
    }
    watched.listeners.add(listener);
    return () => {
      watched.listeners.delete(listener);
      if (watched.listeners.size === 0) {
        clearTimeout(watched.timer);
        this.runs.delete(runId);
      }
    };
  }

  watchedRuns(): number {
    return this.runs.size;
  }

  close(): void {
    for (const watched of this.runs.values()) clearTimeout(watched.timer);
    this.runs.clear();
  }

  private schedule(runId: string, watched: Watched, delayMs: number): void {
    watched.timer = setTimeout(() => void this.poll(runId, watched), delayMs);
  }

  private async poll(runId: string, watched: Watched): Promise<void> {
    if (this.runs.get(runId) !== watched) return;
    try {
      if (!watched.query) {
        const [run] = await runNamedQuery<{ benchmark: string }, 'run'>(
          this.db,
          runBenchmarkQuery,
          { run: runId },
        );
        watched.query = this.benchmarks.queriesOf(run?.benchmark ?? '').cursor;
      }
      const [row] = await runNamedQuery<Record<string, unknown>, 'run'>(this.db, watched.query, {
        run: runId,
      });
      const cursor = JSON.stringify(row ?? {});
      if (cursor !== watched.cursor || watched.down) {
        watched.cursor = cursor;
        watched.down = false;
        for (const listener of watched.listeners) listener({ kind: 'changed', cursor });
      }
    } catch (error) {
      if (!watched.down) {
        watched.down = true;
        this.logger.warn({ run: runId, err: error }, 'live cursor query failed');
        for (const listener of watched.listeners)
          listener({ kind: 'database-down', message: 'Postgres does not answer' });
      }
    }
    if (this.runs.get(runId) === watched) this.schedule(runId, watched, this.pollMs);
  }
}
