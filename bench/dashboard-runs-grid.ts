// Issue 32's dashboard views on the bench's 20,000-task run (bench/dashboard.ts calls this): the
// runs × tasks grid over the run and two more runs of the same 20,000 tasks, and over one run of the
// same tasks × 3 epochs (60,000 samples); per-phase time of the run and of a task, and the run's
// timeline. API latency per endpoint, and the grid pages in Chromium until they hold every task;
// the run page's task table of the 3-epoch run (60,000 samples) beside the one-epoch run's, cold.

import { sql } from 'kysely';
import type { Database } from '@benchfleet/db';
import { launchChromium } from '../apps/dashboard/test-support/headless-chromium.js';
import { percentile, printTable } from './bench-services.js';

interface RunsGridBench {
  db: Database;
  url: string;
  run: string;
  trajectoryRun: string;
  tasks: number;
  requests: number;
}

const ms = (value: number) => value.toFixed(0);

/** Two more runs with the run's task ids, their verdicts shuffled by seq, none of their own steps. */
async function writeSiblingRuns(db: Database, run: string): Promise<string[]> {
  const ids = [`${run}-2`, `${run}-3`];
  for (const [n, id] of ids.entries()) {
    await sql`insert into runs (id, name, benchmark, status, config, agent, code_version, started_at)
              select ${id}, name || '-' || ${n + 2}, benchmark, 'finished', config, agent, code_version, started_at
              from runs where id = ${run}`.execute(db);
    await sql`
      insert into tasks (run_id, task_id, seq, domain, instruction, status, attempts, reward, success, duration_ms)
      select ${id}, task_id, seq, domain, instruction, s.status, 1,
             case when s.status = 'success' then 1 else (seq % 7) / 10.0 end, s.status = 'success', duration_ms
      from tasks t,
           lateral (select case when (seq * ${n + 3}) % 100 < 55 then 'success' when (seq * ${n + 3}) % 100 < 95 then 'failed'
                                else 'error' end as status) s
      where t.run_id = ${run}`.execute(db);
  }
  await sql`analyze tasks`.execute(db);
  return ids;
}

/** One run of the run's tasks × 3 epochs (`enqueue --epochs 3`): each sample its own row. */
async function writeEpochsRun(db: Database, run: string): Promise<string> {
  const id = `${run}-epochs`;
  await sql`insert into runs (id, name, benchmark, status, config, agent, code_version, started_at, epochs)
            select ${id}, name || '-epochs', benchmark, 'finished', config, agent, code_version, started_at, 3
            from runs where id = ${run}`.execute(db);
  await sql`
    insert into tasks (run_id, task_id, base_task_id, epoch, seq, domain, instruction, status, attempts, reward, success, duration_ms)
    select ${id}, case when e = 1 then task_id else task_id || '.epoch' || e end, task_id, e,
           seq + (e - 1) * ${1_000_000}, domain, instruction, s.status, 1,
           case when s.status = 'success' then 1 else (seq % 7) / 10.0 end, s.status = 'success', duration_ms
    from tasks t cross join generate_series(1, 3) as e,
         lateral (select case when (seq * (e + 2)) % 100 < 55 then 'success' when (seq * (e + 2)) % 100 < 95 then 'failed'
                              else 'error' end as status) s
    where t.run_id = ${run}`.execute(db);
  await sql`analyze tasks`.execute(db);
  return id;
}

async function latency(url: string, endpoint: string, requests: number) {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < requests + 3; i += 1) {
    const t0 = performance.now();
    const response = await fetch(`${url}${endpoint}`, { headers: { 'accept-encoding': 'gzip' } });
    bytes = (await response.arrayBuffer()).byteLength;
    if (!response.ok) throw new Error(`${endpoint}: HTTP ${response.status}`);
    if (i >= 3) times.push(performance.now() - t0);
  }
  return { times, bytes };
}

export async function benchRunsGrid(options: RunsGridBench): Promise<void> {
  const { db, url, run, tasks, requests } = options;
  const siblings = await writeSiblingRuns(db, run);
  const epochsRun = await writeEpochsRun(db, run);
  const gridQuery = [run, ...siblings].map((id) => `run=${encodeURIComponent(id)}`).join('&');
  const epochsQuery = `run=${encodeURIComponent(epochsRun)}`;
  const endpoints = [
    `/api/grid?${gridQuery}`,
    `/api/grid?${epochsQuery}`,
    `/api/grid?q=bench-20k`,
    `/api/grid?${gridQuery}&show=differ`,
    `/api/runs/${epochsRun}/tasks`,
    `/api/runs/${run}/phases`,
    `/api/runs/${run}/timeline`,
    `/api/runs/${run}/tasks/goal-00007/phases`,
    `/api/runs/${options.trajectoryRun}/tasks/long-task/phases`,
  ];
  const rows: Record<string, string | number>[] = [];
  const all: number[] = [];
  for (const endpoint of endpoints) {
    const { times, bytes } = await latency(url, endpoint, requests);
    all.push(...times);
    rows.push({
      endpoint: endpoint
        .replaceAll(epochsRun, ':run-with-3-epochs')
        .replaceAll(run, ':run')
        .replace(options.trajectoryRun, ':run'),
      'p50 ms': ms(percentile(times, 50)),
      'p95 ms': ms(percentile(times, 95)),
      'JSON KB': (bytes / 1024).toFixed(0),
    });
  }
  rows.push({
    endpoint: 'all of the above',
    'p50 ms': ms(percentile(all, 50)),
    'p95 ms': ms(percentile(all, 95)),
    'JSON KB': '',
  });
  process.stdout.write(
    `\nIssue 32 views (${requests} sequential requests each; grid: 3 runs × ${tasks} tasks = ${3 * tasks} cells):\n`,
  );
  printTable(rows);

  for (const [label, query, runs] of [
    ['3 runs', gridQuery, 3],
    ['1 run × 3 epochs', epochsQuery, 1],
  ] as const) {
    const loads: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const reader = await launchChromium();
      const page = await reader.newPage();
      await page.goto(`${url}/grid?${query}`, { waitUntil: 'commit' });
      await page
        .locator('[data-count="grid"]', { hasText: `${tasks} tasks × ${runs} runs` })
        .waitFor({ timeout: 60_000 });
      await page.locator('.runs-grid-row a[data-epoch]').first().waitFor({ timeout: 60_000 });
      loads.push(Number(await page.evaluate('performance.now()')));
      await reader.close();
    }
    process.stdout.write(
      `\nGrid page (${tasks} tasks × ${label}), 5 cold loads, ms from navigation start to every row held and the first drawn:\n`,
    );
    printTable([{ median: ms(percentile(loads, 50)), max: ms(Math.max(...loads)) }]);
  }
  await benchRunPageTables(url, [
    [`${tasks} tasks, 1 epoch`, run, tasks],
    [`${tasks} tasks × 3 epochs`, epochsRun, 3 * tasks],
  ]);
}

/** The run page's task table, cold, until it holds every row: each run in turns, 5 loads each. */
async function benchRunPageTables(url: string, runs: Array<[string, string, number]>) {
  const loads = new Map<string, number[]>(runs.map(([label]) => [label, []]));
  for (let i = 0; i < 5; i += 1)
    for (const [label, id, rows] of runs) {
      const reader = await launchChromium();
      const page = await reader.newPage();
      await page.goto(`${url}/runs/${encodeURIComponent(id)}`, { waitUntil: 'commit' });
      await page
        .locator('[data-count="tasks"]', { hasText: `${rows} of ${rows} tasks` })
        .waitFor({ timeout: 120_000 });
      await page.locator('[data-task]').first().waitFor({ timeout: 60_000 });
      loads.get(label)?.push(Number(await page.evaluate('performance.now()')));
      await reader.close();
    }
  process.stdout.write(
    `\nRun page task table, 5 cold loads each (runs in turns), ms from navigation start to every row held and the first drawn:\n`,
  );
  printTable(
    [...loads].map(([label, times]) => ({
      run: label,
      median: ms(percentile(times, 50)),
      max: ms(Math.max(...times)),
    })),
  );
}
