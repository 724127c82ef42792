import { createArtifactStore } from '@benchfleet/artifacts';
import { createCliProgram, errorMessage, runCliProgram } from '@benchfleet/core';
import {
  BytebotClient,
  BytebotDesktopClient,
  cancelLeftoverTasks,
  osworldBenchmark,
} from '@benchfleet/osworld';
import { startBenchmarkWorker, workerProcessSettings } from '@benchfleet/runs';
import { loadOsworldWorkerConfig, type OsworldWorkerFlags } from './config.js';
import { createOsworldTaskHandler } from './handlers/osworld-task.js';

const program = createCliProgram(
  'worker-osworld',
  'runs OSWorld tasks on one Bytebot stack, one at a time, with the original benchmark semantics',
)
  .option(
    '--bytebot-url <url>',
    'bytebot-agent base URL, e.g. http://127.0.0.1:9991 (or BYTEBOT_URL)',
  )
  .option(
    '--desktop-url <url>',
    'bytebotd base URL, e.g. http://127.0.0.1:9990, probed before and during each task (or BYTEBOT_DESKTOP_URL)',
  )
  .option(
    '--stack-id <name>',
    'name of this stack, used as the worker id (default stack-<hostname>)',
  )
  .option(
    '--grace-s <n>',
    'seconds an active task may finish after SIGTERM before it is handed back (default 10800)',
  )
  .option(
    '--metrics-port <port>',
    'serve /metrics and /healthz on this port, 0 for any free one (or BENCHFLEET_METRICS_PORT)',
  )
  .option(
    '--metrics-host <host>',
    'address /metrics and /healthz listen on (default 127.0.0.1; 0.0.0.0 for probes from outside; or BENCHFLEET_METRICS_HOST)',
  )
  .option('--no-events', 'follow tasks by REST polling only (no Socket.IO)')
  .action(async (flags: OsworldWorkerFlags) => {
    const config = loadOsworldWorkerConfig(flags);
    const artifacts = createArtifactStore(config.artifactsUri, config.artifactSettings);
    const client = new BytebotClient({ baseUrl: config.bytebotUrl });
    const desktop = config.desktopUrl ? new BytebotDesktopClient(config.desktopUrl) : undefined;
    const running = await startBenchmarkWorker(
      osworldBenchmark,
      {
        app: 'worker-osworld',
        ...workerProcessSettings(config),
        concurrency: 1,
        artifactStore: artifacts,
        // A dead stack pauses this worker instead of failing the tasks it would take.
        healthCheck: async () => {
          const agentProblem = await client.healthProblem();
          if (agentProblem) return { ok: false, reason: agentProblem };
          const desktopProblem = await desktop?.healthProblem();
          return desktopProblem ? { ok: false, reason: desktopProblem } : { ok: true };
        },
      },
      async ({ taskDeps, logger }) => {
        // What an earlier run of this worker left on its stack goes first (and before every task).
        await cancelLeftoverTasks(client, logger).catch((error: unknown) =>
          logger.warn(
            { reason: errorMessage(error) },
            'could not look for tasks left on the stack; will look again before the first task',
          ),
        );
        return createOsworldTaskHandler({
          taskDeps,
          client,
          artifacts,
          events: config.events,
          ...(desktop ? { desktop } : {}),
        });
      },
    );
    await running.finished;
  });

await runCliProgram(program, process.argv);
