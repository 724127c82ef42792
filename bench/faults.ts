// The faults of a week-long run, each done to a fleet of real processes on a Postgres and a Redis
// of its own, and how the fleet came through: tasks, lost (ended as an infrastructure error),
// double (two outcomes), stuck (no outcome) and the seconds from the end of the fault to every task
// settled and the run summarised.
//
// Run: npx tsx bench/faults.ts [--only kill-webshop,postgres-10s,…] [--baseline DIR [--baseline-timeout-s 60]]
// With --baseline, the same faults are done to a fleet running DIR's CLIs (a checkout of an earlier
// commit, with its own npm ci), side by side; "never" is a fleet that had not converged in time.
import { parseArgs } from 'node:util';
import {
  cancelDuringARun,
  keeperDownWhileAJobIsLost,
  killOsworldWorker,
  killWebshopWorker,
  restartPostgres,
  restartRedis,
  resumesDuringARun,
  useScenarioOptions,
  type FaultResult,
} from '@benchfleet/testing';
import { printTable } from './bench-services.js';

const SCENARIOS: Array<{ name: string; run: () => Promise<FaultResult>; baseline: boolean }> = [
  { name: 'kill-webshop', run: killWebshopWorker, baseline: true },
  { name: 'kill-osworld', run: killOsworldWorker, baseline: true },
  { name: 'postgres-10s', run: () => restartPostgres(10_000), baseline: true },
  { name: 'postgres-70s', run: () => restartPostgres(70_000), baseline: true },
  { name: 'redis-lost', run: () => restartRedis(false), baseline: true },
  { name: 'redis-aof', run: () => restartRedis(true), baseline: true },
  // Its stall-intolerant worker is this checkout's: not comparable with another build's jobs.
  { name: 'keeper-down-lost-job', run: keeperDownWhileAJobIsLost, baseline: false },
  { name: 'resumes', run: resumesDuringARun, baseline: true },
  { name: 'cancel', run: cancelDuringARun, baseline: true },
];

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    baseline: { type: 'string' },
    'baseline-timeout-s': { type: 'string', default: '60' },
  },
});
const only = values.only ? new Set(values.only.split(',')) : undefined;
const chosen = SCENARIOS.filter((scenario) => !only || only.has(scenario.name));
const seconds = (result: FaultResult | undefined) =>
  result === undefined ? 'n/a' : Number.isNaN(result.seconds) ? 'never' : result.seconds.toFixed(1);
const count = (result: FaultResult | undefined, key: 'lost' | 'double' | 'stuck') =>
  result === undefined ? 'n/a' : result[key];

const rows: Record<string, string | number>[] = [];
for (const scenario of chosen) {
  process.stderr.write(`${scenario.name}…\n`);
  useScenarioOptions({});
  const now = await scenario.run();
  let before: FaultResult | undefined;
  if (values.baseline && scenario.baseline) {
    process.stderr.write(`${scenario.name} (baseline ${values.baseline})…\n`);
    useScenarioOptions({
      codeDir: values.baseline,
      convergeTimeoutMs: Number(values['baseline-timeout-s']) * 1000,
    });
    before = await scenario.run().catch((error: unknown) => {
      process.stderr.write(`  baseline: ${String(error)}\n`);
      return undefined;
    });
  }
  rows.push({
    fault: now.fault,
    tasks: now.tasks,
    lost: now.lost,
    double: now.double,
    stuck: now.stuck,
    'converged (s)': seconds(now),
    ...(values.baseline
      ? {
          'baseline lost': count(before, 'lost'),
          'baseline double': count(before, 'double'),
          'baseline stuck': count(before, 'stuck'),
          'baseline (s)': seconds(before),
        }
      : {}),
  });
}
printTable(rows);
process.stdout.write(
  'lost: ended as an infrastructure error (by design only for the job BullMQ failed as lost); double: two outcomes; stuck: no outcome\n',
);
