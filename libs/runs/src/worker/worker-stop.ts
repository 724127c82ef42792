import type { Logger } from '@benchfleet/core';
import type { PostgresHealthProbe } from '@benchfleet/db';
import type { WorkerRuntime } from '@benchfleet/queue';
import type { Telemetry } from '@benchfleet/telemetry';
import type { MetricsServer } from './worker-metrics.js';
import type { WorkerResources } from './worker-resources.js';

/** What a worker process releases when it stops, besides its resources. */
export interface WorkerParts {
  runtime: WorkerRuntime;
  probe: PostgresHealthProbe;
  metricsServer: MetricsServer | undefined;
  telemetry: Telemetry;
  /** The benchmark's own writes left queued (the LLM calls' inputs), before the pool closes. */
  flush: (() => Promise<void>) | undefined;
}

/**
 * The graceful stop of a worker process, in order: the runtime (jobs finished or handed back),
 * the last steps and the benchmark's writes, the attempt records Postgres did not take, then
 * every connection; tracing last.
 */
export async function stopWorker(resources: WorkerResources, parts: WorkerParts): Promise<void> {
  const { logger, steps, records, repeated, producer, db } = resources;
  await parts.runtime.shutdown();
  await steps
    .flush()
    .catch((error: unknown) => logger.error({ err: error }, 'could not write the last steps'));
  await parts.flush?.();
  const left = await records.flush();
  if (left > 0)
    logger.error(
      { left },
      'Postgres did not take these attempt records before exit: their attempts will read "worker lost"',
    );
  records.close();
  repeated.flush();
  await parts.probe.close();
  await producer.close();
  await parts.metricsServer?.close();
  await db.destroy();
  // Last: the attempts handed back above end their spans as they go.
  await parts.telemetry.shutdown();
}

/** SIGTERM and SIGINT stop the worker gracefully. */
export function stopOnSignals(stop: () => Promise<void>, logger: Logger): void {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      logger.info({ signal }, 'signal received');
      void stop();
    });
  }
}

/**
 * Stops as on SIGTERM when the `npx` that started the worker goes away: `kill $!` after
 * `npx worker-… &` reaches npm, which dies without passing the signal on.
 */
export function stopWhenLauncherExits(
  stop: () => Promise<void>,
  finished: Promise<void>,
  logger: Logger,
): void {
  const launcher = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === launcher) return;
    clearInterval(watch);
    logger.info(
      { launcher },
      'the npx that started this worker has exited (killed): shutting down as on SIGTERM',
    );
    void stop();
  }, 1_000);
  watch.unref();
  void finished.then(() => clearInterval(watch));
}
