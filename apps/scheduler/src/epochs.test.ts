import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { JobProducer, taskJobId } from '@benchfleet/queue';
import { RunRows, TestClis, useTestServices, waitForWorkerReady } from '@benchfleet/testing';
import { demoCatalogRequest, importWebshopCatalog } from '@benchfleet/webshop-benchmark';

// Epochs end to end on WebShop with the rule agent: rows and jobs per sample, pass@k and pass^k
// against a hand computation from the rows, the flip rate, status, the SQL views, and compare
// against a fourth run. Expected numbers are computed here with exact binomials in BigInt.

const services = useTestServices();
const runRows = new RunRows(services);
const clis = new TestClis(services, { LOG_LEVEL: 'info' });
let producer: JobProducer;
const GOALS = 12;

function binomial(n: number, k: number): bigint {
  if (k < 0 || k > n) return 0n;
  let value = 1n;
  for (let i = 1; i <= k; i += 1) value = (value * BigInt(n - k + i)) / BigInt(i);
  return value;
}

/** An exact fraction to a float. */
const ratio = (num: bigint, den: bigint) => Number((num * 10n ** 15n) / den) / 1e15;

const RULE_RUN = ['--benchmark', 'webshop', '--goals', `0-${GOALS - 1}`, '--agent', 'rule'];

function enqueueRule(args: string[]): Promise<string> {
  return clis.enqueue([...RULE_RUN, ...args]);
}

beforeAll(async () => {
  producer = new JobProducer(services.redisUrl, services.prefix);
  await importWebshopCatalog(services.db, demoCatalogRequest({ seed: 0, products: 300 }));
});

afterEach(async () => {
  await clis.killLeftovers();
});

afterAll(async () => {
  await producer.close();
});

describe('enqueue --epochs: bad input', () => {
  it('refuses 0 and more than 100 in one line, exit 2, nothing written', async () => {
    for (const [value, message] of [
      ['0', /--epochs/],
      ['101', /--epochs 101: expected a whole number from 1 to 100/],
    ] as const) {
      const result = await clis.scheduler([
        'enqueue',
        '--benchmark',
        'webshop',
        '--goals',
        '0-1',
        '--agent',
        'rule',
        '--epochs',
        value,
      ]);
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(message);
    }
    expect(await services.db.selectFrom('runs').select('id').execute()).toEqual([]);
  });
});

describe('a three-epoch WebShop run', () => {
  it('runs every task three times, reports pass@k, pass^k and flip rate as computed by hand, and compares against a fourth run', async () => {
    const enqueued = await clis.scheduler([
      'enqueue',
      '--benchmark',
      'webshop',
      '--goals',
      `0-${GOALS - 1}`,
      '--agent',
      'rule',
      '--epochs',
      '3',
      '--json',
    ]);
    expect(enqueued.code, enqueued.stderr).toBe(0);
    const answer = JSON.parse(enqueued.stdout) as {
      runId: string;
      tasks: number;
      epochs: number;
      samples: number;
    };
    expect(answer).toMatchObject({ tasks: GOALS, epochs: 3, samples: 3 * GOALS });
    const runId = answer.runId;

    // One row and one job per sample, epoch by epoch; epoch 1 keeps the benchmark's task id.
    const rows = await runRows.tasksOf(runId);
    expect(rows).toHaveLength(3 * GOALS);
    const bases = [...new Set(rows.map((row) => row.base_task_id))];
    expect(bases).toHaveLength(GOALS);
    rows.forEach((row, seq) => {
      const epoch = Math.floor(seq / GOALS) + 1;
      expect(row.epoch).toBe(epoch);
      expect(row.task_id).toBe(
        epoch === 1 ? row.base_task_id : `${row.base_task_id}.epoch${epoch}`,
      );
    });
    const run = await services.db
      .selectFrom('runs')
      .select('epochs')
      .where('id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(run.epochs).toBe(3);
    const jobIds = (await producer.queue('webshop').getJobs(['waiting', 'prioritized'])).map(
      (job) => job.id,
    );
    expect(new Set(jobIds)).toEqual(new Set(rows.map((row) => taskJobId(runId, row.task_id))));

    clis.start('scheduler', ['worker', '--worker-id', 'keeper', '--metrics-port', '0']);
    await waitForWorkerReady(
      clis.start('worker-webshop', ['--worker-id', 'epochs', '--concurrency', '6']),
    );
    const tasks = await runRows.settled(runId);
    // Each sample ran once: one attempt each, with its own steps.
    const attempts = await services.db
      .selectFrom('attempts')
      .select(['task_id', 'attempt'])
      .where('run_id', '=', runId)
      .execute();
    expect(attempts.map((a) => a.task_id).sort()).toEqual(tasks.map((t) => t.task_id).sort());
    const stepped = await services.db
      .selectFrom('steps')
      .select('task_id')
      .distinct()
      .where('run_id', '=', runId)
      .execute();
    expect(stepped).toHaveLength(3 * GOALS);
    expect(tasks.every((t) => t.status === 'success' || t.status === 'failed')).toBe(true);

    // By hand: c of n = 3 per task from the rows, then the binomial fractions.
    const passed = bases.map(
      (base) => tasks.filter((t) => t.base_task_id === base && t.status === 'success').length,
    );
    const expectedAt = (k: number) =>
      passed.reduce((sum, c) => sum + (1 - ratio(binomial(3 - c, k), binomial(3, k))), 0) / GOALS;
    const expectedHat = (k: number) =>
      passed.reduce((sum, c) => sum + ratio(binomial(c, k), binomial(3, k)), 0) / GOALS;
    const flips = passed.filter((c) => c > 0 && c < 3).length;

    const summary = await runRows.storedSummary(runId);
    expect(summary.summary.total_tasks).toBe(3 * GOALS);
    const epochs = summary.epochs;
    expect(epochs).toMatchObject({ epochs: 3, tasks: GOALS });
    for (const k of [1, 2, 3]) {
      const row = epochs?.by_k[k - 1];
      expect(row?.tasks).toBe(GOALS);
      expect(row?.pass_at_k.value).toBeCloseTo(expectedAt(k), 4);
      expect(row?.pass_hat_k.value).toBeCloseTo(expectedHat(k), 4);
      expect(row?.pass_hat_k.ci95.low).toBeLessThanOrEqual(row?.pass_hat_k.value ?? Number.NaN);
      expect(row?.pass_hat_k.ci95.high).toBeGreaterThanOrEqual(row?.pass_hat_k.value ?? Number.NaN);
    }
    expect(epochs?.flip_rate).toMatchObject({ tasks: GOALS, flipped: flips });
    expect(epochs?.flip_rate.value).toBeCloseTo(flips / GOALS, 4);

    // The views say the same.
    const view = await sql<{
      tasks: number;
      pass_at_1: number;
      pass_at_n: number;
      pass_hat_n: number;
      flip_rate: number;
    }>`
      select tasks, pass_at_1, pass_at_n, pass_hat_n, flip_rate from run_epochs where run_id = ${runId}
    `.execute(services.db);
    expect(view.rows[0]?.tasks).toBe(GOALS);
    expect(view.rows[0]?.pass_at_1).toBeCloseTo(expectedAt(1), 4);
    expect(view.rows[0]?.pass_at_n).toBeCloseTo(expectedAt(3), 4);
    expect(view.rows[0]?.pass_hat_n).toBeCloseTo(expectedHat(3), 4);
    expect(view.rows[0]?.flip_rate).toBeCloseTo(flips / GOALS, 4);

    const status = await clis.scheduler(['status', runId]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`epochs 3: pass@3 ${(expectedAt(3) * 100).toFixed(1)}%`);
    expect(status.stdout).toContain(`(${flips}/${GOALS} tasks)`);
    const markdown = await clis.scheduler(['aggregate', runId]);
    expect(markdown.code, markdown.stderr).toBe(0);

    // Exports: the epoch in each record.
    const out = mkdtempSync(join(tmpdir(), 'epochs-export-'));
    const jsonl = await clis.scheduler([
      'export',
      runId,
      '--format',
      'webshop-jsonl',
      '--out',
      join(out, 'jsonl'),
    ]);
    expect(jsonl.code, jsonl.stderr).toBe(0);
    const lines = readFileSync(join(out, 'jsonl', 'trajectories.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { task_id: string; base_task_id: string; epoch: number });
    expect(lines.map((l) => [l.task_id, l.base_task_id, l.epoch])).toEqual(
      tasks.map((t) => [t.task_id, t.base_task_id, t.epoch]),
    );
    const atif = await clis.scheduler([
      'export',
      runId,
      '--format',
      'atif',
      '--out',
      join(out, 'atif'),
    ]);
    expect(atif.code, atif.stderr).toBe(0);
    for (const task of tasks) {
      const trajectory = JSON.parse(
        readFileSync(join(out, 'atif', 'tasks', task.task_id, 'attempt-1.json'), 'utf8'),
      ) as {
        extra: {
          benchfleet: { run: { epochs: number }; task: { epoch: number; base_task_id: string } };
        };
      };
      expect(trajectory.extra.benchfleet.run.epochs).toBe(3);
      expect(trajectory.extra.benchfleet.task).toMatchObject({
        epoch: task.epoch,
        base_task_id: task.base_task_id,
      });
    }
    rmSync(out, { recursive: true, force: true });

    // A fourth run, one epoch, with a step limit too short to buy: compared on all epochs per task.
    const fourth = await enqueueRule(['--max-steps', '2']);
    const fourthTasks = await runRows.settled(fourth);
    const compared = await clis.scheduler(['compare', runId, fourth, '--json']);
    expect(compared.code, compared.stderr).toBe(0);
    const comparison = JSON.parse(compared.stdout) as {
      paired: number;
      epochs: { a: number; b: number };
      success_rate: { a: number; b: number; difference: number };
      minimum_detectable_difference: { success_rate: number | null; formula: string };
    };
    expect(comparison.paired).toBe(GOALS);
    expect(comparison.epochs).toEqual({ a: 3, b: 1 });
    const rateA = passed.map((c) => c / 3);
    const rateB = bases.map((base) =>
      fourthTasks.find((t) => t.base_task_id === base)?.status === 'success' ? 1 : 0,
    );
    const meanOf = (values: number[]) => values.reduce((s, v) => s + v, 0) / values.length;
    expect(comparison.success_rate.a).toBeCloseTo(meanOf(rateA), 9);
    expect(comparison.success_rate.b).toBeCloseTo(meanOf(rateB), 9);
    const differences = rateB.map((b, i) => b - (rateA[i] ?? 0));
    const m = meanOf(differences);
    const sd = Math.sqrt(differences.reduce((s, d) => s + (d - m) ** 2, 0) / (GOALS - 1));
    expect(comparison.minimum_detectable_difference.success_rate).toBeCloseTo(
      (1.959963984540054 + 0.8416212335729143) * (sd / Math.sqrt(GOALS)),
      9,
    );
    const text = await clis.scheduler(['compare', runId, fourth]);
    expect(text.stdout).toContain(`A ${3} epoch(s), B 1`);
    expect(text.stdout).toMatch(
      /minimum detectable difference at 12 tasks: success rate \d+\.\d pp/,
    );
  });
});
