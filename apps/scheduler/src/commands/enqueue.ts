import { Option, type Command } from 'commander';
import type { EnqueueOptions } from '../run-planning.js';

interface EnqueueFlags extends EnqueueOptions {
  json?: boolean;
}

export function registerEnqueue(program: Command): void {
  program
    .command('enqueue')
    .description('turn a benchmark into one job per task: run and task rows in Postgres, then the jobs, all or nothing')
    .option('--domain <domains...>', 'domains to run (repeatable or comma-separated); the benchmark is inferred from them', [])
    .addOption(new Option('--benchmark <name>', 'benchmark').choices(['osworld', 'webshop']))
    .option('--dataset <path>', 'OSWorld: an extracted dataset JSON (scheduler osworld extract) or an OSWorld directory')
    .option('--osworld-dir <dir>', 'OSWorld: a checkout or its evaluation_examples directory (default: $OSWORLD_DIR)')
    .option('--max-tasks <n>', 'at most this many tasks (default: all)', positiveInt)
    .option('--max-steps <n>', 'step limit per task (OSWorld default 100, WebShop default 15)', positiveInt)
    .option('--stall-timeout-s <n>', 'OSWorld: cancel a task after this many seconds without a new message (default 300)', positiveInt)
    .option('--model <json>', 'OSWorld: the Bytebot model, e.g. {"provider":"anthropic","name":"claude-sonnet-4","title":"Claude Sonnet 4"} (default: the first the stack offers)')
    .addOption(new Option('--agent <kind>', 'WebShop agent').choices(['rule', 'llm']))
    .option('--llm-base-url <url>', 'WebShop llm agent: OpenAI-compatible base URL (the key comes from LLM_API_KEY on the workers)')
    .option('--llm-model <name>', 'WebShop llm agent: model name')
    .option('--llm-temperature <t>', 'WebShop llm agent: sampling temperature', Number)
    .addOption(new Option('--split <split>', 'WebShop goal split (default test)').choices(['test', 'eval', 'train']))
    .option('--goals <ranges>', 'WebShop goal indexes, e.g. 0-499 or 0-9,20-29 (instead of --split)')
    .option('--catalog <id>', 'WebShop catalog id (default: the latest imported)')
    .addOption(new Option('--observation-mode <mode>', 'WebShop observation mode').choices(['text', 'text_rich']))
    .option('--run-name <name>', 'a name for the run')
    .option('--json', 'print the result as JSON')
    .action(async (flags: EnqueueFlags) => {
      const [{ withSchedulerServices }, { enqueueRun }, { inferBenchmark, planOsworldRun, planWebshopRun, splitList }, { createProgressReporter }] = await Promise.all([
        import('../config.js'),
        import('../run-enqueuer.js'),
        import('../run-planning.js'),
        import('../progress-reporter.js'),
      ]);
      const domains = splitList(flags.domain);
      const benchmark = inferBenchmark(flags, domains);
      // OSWorld input is checked before any service is touched.
      const osworldPlan =
        benchmark === 'osworld' ? await planOsworldRun({ ...flags, osworldDir: flags.osworldDir ?? (process.env.OSWORLD_DIR || undefined) }) : undefined;
      await withSchedulerServices({ redis: true }, async ({ config, db, producer }) => {
        const plan = osworldPlan ?? (await planWebshopRun(db, flags));
        const progress = createProgressReporter('enqueue', plan.tasks.length, { quiet: flags.json === true });
        const runId = await enqueueRun({ db, producer, codeVersion: config.codeVersion, onProgress: (done) => progress.update(done) }, plan);
        progress.stop();
        const domainCounts: Record<string, number> = {};
        for (const task of plan.tasks) domainCounts[task.domain] = (domainCounts[task.domain] ?? 0) + 1;
        if (flags.json) {
          process.stdout.write(`${JSON.stringify({ runId, name: plan.name, benchmark: plan.benchmark, tasks: plan.tasks.length, domains: domainCounts })}\n`);
        } else {
          const domainText = Object.entries(domainCounts)
            .map(([domain, n]) => `${domain} ${n}`)
            .join(', ');
          process.stdout.write(`${runId}\n`);
          process.stderr.write(`enqueued ${plan.tasks.length} ${plan.benchmark} task(s) as run ${runId} (${plan.name}): ${domainText}\n`);
        }
      });
    });
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`expected a positive whole number, got "${value}"`);
  return n;
}
