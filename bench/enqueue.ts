// Enqueue throughput: all 12,087 WebShop goals and all 369 OSWorld tasks, Postgres rows included.
// Run: npx tsx bench/enqueue.ts   (uses DATABASE_URL/REDIS_URL when set, else provisions its own)
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { benchmarks } from '@benchfleet/benchmarks';
import { JobProducer } from '@benchfleet/queue';
import { enqueueRun, planRun, type PlannedRun } from '@benchfleet/runs';
import { benchServices, printTable } from './bench-services.js';

const humanGoals = JSON.parse(
  readFileSync(
    fileURLToPath(new URL('../../shared/webshop/data/human_goals.json', import.meta.url)),
    'utf8',
  ),
) as string[];
const osworldDir = fileURLToPath(
  new URL('../../shared/osworld/evaluation_examples', import.meta.url),
);

const bench = await benchServices('enqueue');
const producer = new JobProducer(bench.services.redisUrl, bench.prefix);
try {
  // Planned directly: the bench has no catalog of 12,087 goals, only their instructions.
  const webshopPlan: PlannedRun = {
    benchmark: benchmarks.get('webshop'),
    name: 'bench-webshop-all',
    config: {
      catalog_id: 'bench',
      split: null,
      goals: null,
      max_steps: 15,
      observation_mode: 'text',
    },
    model: null,
    agent: { kind: 'rule' },
    tasks: humanGoals.map((instruction, goalIndex) => ({
      taskId: `goal-${String(goalIndex).padStart(5, '0')}`,
      domain: goalIndex < 500 ? 'test' : goalIndex < 1500 ? 'eval' : 'train',
      instruction,
      spec: {
        goal_index: goalIndex,
        split: goalIndex < 500 ? 'test' : goalIndex < 1500 ? 'eval' : 'train',
        asin: 'B000000000',
      },
    })),
  };
  const osworldPlan = await planRun(
    benchmarks,
    { benchmark: 'osworld', domains: [], flags: { osworldDir } },
    { db: bench.db, env: {} },
  );
  const rows: Record<string, string | number>[] = [];
  for (const plan of [webshopPlan, osworldPlan]) {
    const started = performance.now();
    await enqueueRun({ db: bench.db, producer }, plan);
    const seconds = (performance.now() - started) / 1000;
    rows.push({
      benchmark: plan.benchmark.name,
      jobs: plan.tasks.length,
      seconds: seconds.toFixed(3),
      'jobs/s': Math.round(plan.tasks.length / seconds),
    });
  }
  const total = rows.reduce((sum, row) => sum + Number(row.jobs), 0);
  const seconds = rows.reduce((sum, row) => sum + Number(row.seconds), 0);
  rows.push({
    benchmark: 'all',
    jobs: total,
    seconds: seconds.toFixed(3),
    'jobs/s': Math.round(total / seconds),
  });
  const counts = await Promise.all([producer.counts('webshop'), producer.counts('osworld')]);
  printTable(rows);
  process.stdout.write(
    `queued in Redis: webshop ${counts[0].wait}, osworld ${counts[1].wait} (target: at least 10,000 jobs/s, run and task rows included)\n`,
  );
} finally {
  await producer.queue('webshop').obliterate({ force: true });
  await producer.queue('osworld').obliterate({ force: true });
  await producer.close();
  await bench.close();
}
