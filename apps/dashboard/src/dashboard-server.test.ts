import { execFileSync } from 'node:child_process';
import { request } from 'node:http';
import { symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StepsRepository } from '@benchfleet/db';
import {
  runCli,
  solidColorPng,
  startCli,
  useTestServices,
  waitForOutput,
  type StartedProcess,
} from '@benchfleet/testing';
import { COMPARISON_TABLE, writeComparisonRuns } from '../test-support/comparison-fixtures.js';
import {
  startDashboardUnderTest,
  type DashboardUnderTest,
} from '../test-support/dashboard-under-test.js';
import { writeFixtureRun } from '../test-support/run-fixtures.js';

// The dashboard's HTTP face against real Postgres and Redis: the SQL it shows, what it refuses to
// serve, its 404s, the numbers shared with `scheduler compare`, and the token rule.

const services = useTestServices();
let sut: DashboardUnderTest;
const processes: StartedProcess[] = [];
const PNG = solidColorPng(64, 48, [10, 200, 30]);

beforeAll(async () => {
  sut = await startDashboardUnderTest(services);
  await writeFixtureRun(services.db, sut.artifacts, {
    id: 'run-osw',
    name: 'osworld-fixture',
    benchmark: 'osworld',
    model: { provider: 'anthropic', name: 'claude', title: 'Claude' },
    agent: { kind: 'bytebot' },
    tasks: [
      {
        taskId: 'shot',
        domain: 'chrome',
        instruction: 'open settings',
        attempts: [
          {
            steps: [{ action: { tool_calls: [] }, text: 'look', screenshot: PNG }],
            outcome: {
              status: 'failed',
              finalApiStatus: 'NEEDS_HELP',
              success: false,
              reward: 0,
              durationMs: 1_000,
              error: 'agent needs help',
              result: { stop_reason: 'end_status' },
            },
          },
        ],
      },
      {
        taskId: 'escape',
        domain: 'chrome',
        instruction: 'a row pointing out of the store',
        attempts: [{ steps: [] }],
      },
      { taskId: 'waiting', domain: 'gimp', instruction: 'not started' },
    ],
  });
  // Rows that point outside the store: an absolute path, a ../ climb, a symlink out, a non-image.
  await symlink('/etc/hostname', join(sut.artifactsDir, 'run-osw', 'shot', 'link-out.png'));
  await writeFile(
    join(sut.artifactsDir, 'run-osw', 'shot', 'page.png'),
    '<svg onload="alert(1)"/>',
  );
  const inStore = (name: string) =>
    new URL(`run-osw/shot/${name}`, `${sut.artifacts.baseUri}/`).toString();
  await new StepsRepository(services.db).insertMany(
    [
      `file:///etc/passwd`,
      `${sut.artifacts.baseUri}/../../../../etc/passwd`,
      inStore('link-out.png'),
      inStore('page.png'),
    ].map((uri, i) => ({
      run_id: 'run-osw',
      task_id: 'escape',
      attempt: 1,
      step: i + 1,
      screenshot_uri: uri,
    })),
  );
  await writeComparisonRuns(services.db, sut.artifacts, { a: 'run-a', b: 'run-b' });
});

afterAll(async () => {
  for (const started of processes)
    if (started.child.exitCode === null) started.child.kill('SIGKILL');
  await sut?.close();
});

async function get(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${sut.dashboard.url}${path}`, { redirect: 'manual', ...init });
}

async function json<T>(path: string): Promise<T> {
  const response = await get(path);
  expect(response.status, path).toBe(200);
  return (await response.json()) as T;
}

interface Shown {
  name: string;
  psql: string;
  variables: string;
  flags: string;
}

/** Runs SQL text as psql sends it (the simple query protocol, no parameters). */
async function runAsShown(text: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: services.databaseUrl });
  await client.connect();
  try {
    return (await client.query(text)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

const plain = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

describe('Show SQL', () => {
  it('returns, run as shown, exactly the rows each run-page panel shows', async () => {
    const panels = await json<Record<string, { rows: unknown[]; query: Shown }>>(
      '/api/runs/run-osw/panels',
    );
    expect(Object.keys(panels).sort()).toEqual(['domains', 'durations', 'failures', 'steps']);
    for (const panel of Object.values(panels)) {
      expect(panel.query.psql).toContain("'run-osw'");
      expect(plain(await runAsShown(panel.query.psql))).toEqual(panel.rows);
    }
    expect(panels['failures']?.rows).toEqual([
      {
        status: 'failed',
        error_class: 'agent',
        final_api_status: 'NEEDS_HELP',
        stop_reason: 'end_status',
        // OSWorld gives no reason of its own (WebShop's are in the browser test).
        reason: null,
        message: 'agent needs help',
        tasks: 1,
        examples: ['shot'],
      },
    ]);
    const tasks = await json<{ columns: string[]; rows: unknown[][]; query: Shown }>(
      '/api/runs/run-osw/tasks',
    );
    const [shownTasks] = await runAsShown(tasks.query.psql);
    expect(JSON.parse(String(shownTasks?.['rows']))).toEqual(tasks.rows);
    expect(tasks.rows.map((row) => row[tasks.columns.indexOf('task_id')])).toEqual([
      'shot',
      'escape',
      'waiting',
    ]);
    expect(tasks.rows[0]?.[tasks.columns.indexOf('status')]).toBe('failed');

    const run = await json<{
      run: Record<string, unknown>;
      provisional: boolean;
      queries: Shown[];
    }>('/api/runs/run-osw');
    const [shownRun] = await runAsShown(run.queries[0]?.psql ?? '');
    const withoutClock = (row: Record<string, unknown> | undefined) => ({ ...row, as_of: null });
    expect(plain(withoutClock(shownRun))).toEqual(withoutClock(run.run));
    expect(run.provisional).toBe(true);
  });

  it('gives psql variables that psql itself fills in', async () => {
    const panels = await json<Record<string, { rows: unknown[]; query: Shown }>>(
      '/api/runs/run-osw/panels',
    );
    const query = panels['domains']?.query as Shown;
    expect(query.variables).toContain('where d.run_id = :run');
    expect(query.flags).toBe(`-v run="'run-osw'"`);
    // psql fills in variables in what it reads, not in -c: feed the text as a file, as the panel says.
    const stdout = execFileSync(
      'psql',
      [services.databaseUrl, '-v', "run='run-osw'", '-At', '-F', '|', '-f', '-'],
      { input: query.variables, encoding: 'utf8' },
    );
    expect(
      stdout
        .trim()
        .split('\n')
        .map((line) => line.split('|')[0]),
    ).toEqual(['chrome', 'gimp']);
  });

  it('shows the SQL of a trajectory and of a comparison', async () => {
    const detail = await json<{ steps: unknown[]; queries: Shown[] }>(
      '/api/runs/run-osw/tasks/shot',
    );
    // The task, its grade (OSWorld grades), attempts, steps, and the benchmark's own grade trace.
    expect(detail.queries.map((query) => query.name)).toEqual([
      'task',
      'task_grade',
      'attempts',
      'steps',
      'osworld_task_grade',
    ]);
    const steps = detail.queries.find((query) => query.name === 'steps');
    expect((await runAsShown(steps?.psql ?? '')).length).toBe(detail.steps.length);
    const compare = await json<{ comparison: { paired: number }; queries: Shown[] }>(
      '/api/compare?a=run-a&b=run-b',
    );
    expect((await runAsShown(compare.queries[0]?.psql ?? '')).length).toBe(
      compare.comparison.paired,
    );
  });
});

describe('unknown runs and tasks', () => {
  it('answers 404 with a message from the API and the not-found page for a browser path', async () => {
    const api = await get('/api/runs/no-such-run');
    expect(api.status).toBe(404);
    expect(await api.json()).toEqual({ error: 'run no-such-run not found' });
    expect((await get('/api/runs/run-osw/tasks/no-such-task')).status).toBe(404);
    for (const path of ['/runs/no-such-run', '/runs/run-osw/tasks/no-such-task', '/no/such/page']) {
      const page = await get(path);
      expect(page.status, path).toBe(404);
      expect(await page.text()).toContain('<div id="root">');
    }
    expect((await get('/runs/run-osw')).status).toBe(200);
    expect((await get('/runs/run-osw/tasks/shot')).status).toBe(200);
  });
});

describe('the run page', () => {
  it('carries the run for its first paint as inert JSON, whatever the run is called', async () => {
    await writeFixtureRun(services.db, sut.artifacts, {
      id: 'run-named',
      name: '</script><script>alert(1)</script>',
      benchmark: 'webshop',
      tasks: [],
    });
    const html = await (await get('/runs/run-named')).text();
    expect(html).toContain('<script type="application/json" id="initial-run">');
    expect(html).not.toContain('</script><script>alert(1)');
    const embedded =
      /<script type="application\/json" id="initial-run">(.*?)<\/script>/.exec(html)?.[1] ?? '';
    expect((JSON.parse(embedded) as { run: { name: string } }).run.name).toBe(
      '</script><script>alert(1)</script>',
    );
    // The first screen, drawn before the scripts run, escapes it as well.
    expect(html).toContain(
      '<h1>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; <span class="status status-queued">queued</span>',
    );
    expect(html).toContain(
      '<span data-progress="done" elementtiming="run-progress">0 / 0 settled</span>',
    );
  });

  it('sends the task list gzipped with an ETag that holds until a task moves', async () => {
    const first = await get('/api/runs/run-osw/tasks', { headers: { 'accept-encoding': 'gzip' } });
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag') ?? '';
    expect(etag).not.toBe('');
    expect(
      (await get('/api/runs/run-osw/tasks', { headers: { 'if-none-match': etag } })).status,
    ).toBe(304);
    await services.db
      .updateTable('tasks')
      .set({ status: 'running', started_at: new Date() })
      .where('run_id', '=', 'run-osw')
      .where('task_id', '=', 'waiting')
      .execute();
    const moved = await get('/api/runs/run-osw/tasks', { headers: { 'if-none-match': etag } });
    expect(moved.status).toBe(200);
    const body = (await moved.json()) as { columns: string[]; rows: unknown[][] };
    expect(body.rows.find((row) => row[0] === 'waiting')?.[body.columns.indexOf('status')]).toBe(
      'running',
    );
    await services.db
      .updateTable('tasks')
      .set({ status: 'queued', started_at: null })
      .where('run_id', '=', 'run-osw')
      .where('task_id', '=', 'waiting')
      .execute();
  });
});

describe('nothing from elsewhere', () => {
  it('serves the front end and the queue view from its own files, with no link off the machine', async () => {
    const index = await (await get('/')).text();
    const assets = [...index.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] ?? '');
    expect(assets.length).toBeGreaterThan(1);
    for (const asset of assets) {
      expect(asset.startsWith('/'), asset).toBe(true);
      expect((await get(asset)).status, asset).toBe(200);
    }
    const queues = await get('/queues');
    expect(queues.status).toBe(200);
    const queuesHtml = await queues.text();
    expect(queuesHtml).toContain('benchfleet queues');
    expect(queuesHtml).not.toMatch(/(?:src|href)="https?:/);
    expect(queues.headers.get('content-security-policy')).toContain("default-src 'self'");
  });
});

describe('screenshots', () => {
  it('serves a step screenshot from the artifact store', async () => {
    const response = await get('/api/runs/run-osw/tasks/shot/attempts/1/steps/1/screenshot');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await response.arrayBuffer()).equals(PNG)).toBe(true);
  });

  it('refuses rows that point outside the store, symlinks out of it and files that are not images', async () => {
    for (const step of [1, 2, 3, 4]) {
      const response = await get(
        `/api/runs/run-osw/tasks/escape/attempts/1/steps/${step}/screenshot`,
      );
      expect(response.status, `step ${step}`).toBe(404);
      const body = await response.text();
      expect(body).not.toContain('root:');
      expect(body).not.toContain('<svg');
    }
  });

  it('takes no path from the request: ../ in a URL reaches nothing outside', async () => {
    for (const path of [
      '/api/runs/..%2F..%2F..%2Fetc/tasks/passwd/attempts/1/steps/1/screenshot',
      '/api/runs/run-osw/tasks/..%2F..%2Fshot/attempts/1/steps/1/screenshot',
      '/assets/..%2F..%2F..%2Fpackage.json',
      '/assets/%2e%2e/%2e%2e/%2e%2e/package.json',
      '/queues/static/..%2F..%2F..%2F..%2Fpackage.json',
    ]) {
      const response = await get(path);
      const body = await response.text();
      expect(body, path).not.toContain('"workspaces"');
      expect(body, path).not.toContain('root:');
    }
  });
});

describe('comparison', () => {
  it('serves the numbers `scheduler compare --json` prints, and they are the known table', async () => {
    const { comparison } = await json<{ comparison: Record<string, unknown> }>(
      '/api/compare?a=run-a&b=run-b',
    );
    const cli = await runCli('scheduler', ['compare', 'run-a', 'run-b', '--json'], services.env);
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toEqual(comparison);
    expect(comparison['table']).toEqual(COMPARISON_TABLE);
    expect(comparison['paired']).toBe(12);
    // Hand-computed: success 4/12 against 9/12, mean reward 6/12 against 10.5/12, McNemar 2·(1+7)/2^7.
    expect(comparison['success_rate']).toMatchObject({ a: 4 / 12, b: 9 / 12 });
    expect((comparison['mean_reward'] as { difference: number }).difference).toBeCloseTo(
      4.5 / 12,
      12,
    );
    expect(comparison['mcnemar_p']).toBeCloseTo(0.125, 12);
  });

  it('prints a table for people and refuses bad flags in one line', async () => {
    const text = await runCli(
      'scheduler',
      ['compare', 'run-a', 'run-b', '--resamples', '500'],
      services.env,
    );
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('12 tasks settled in both runs');
    expect(text.stdout).toContain('McNemar exact p (two-sided, 1 only A vs 6 only B): 0.1250');
    const bad = await runCli(
      'scheduler',
      ['compare', 'run-a', 'run-b', '--resamples', 'many'],
      services.env,
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toEqual([
      'scheduler: --resamples many: expected a whole number of resamples of at least 1, e.g. --resamples 10000',
    ]);
    const missing = await runCli('scheduler', ['compare', 'run-a', 'nope'], services.env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('run nope not found');
  });
});

describe('binding and tokens', () => {
  it('refuses to bind beyond loopback without a token, in one line naming the flag and the fix', async () => {
    const result = await runCli('dashboard', ['--host', '0.0.0.0', '--port', '0'], {
      ...services.env,
      DASHBOARD_TOKEN: '',
    });
    expect(result.code).toBe(2);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('--host 0.0.0.0');
    expect(lines[0]).toContain('--auth-token');
    const port = await runCli('dashboard', ['--port', 'eighty'], services.env);
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('--port');
  });

  it('asks every request for the token when bound beyond loopback', async () => {
    const token = 'a-test-token-of-enough-length';
    const started = startCli('dashboard', ['--host', '0.0.0.0', '--port', '0'], {
      ...services.env,
      DASHBOARD_TOKEN: token,
      LOG_LEVEL: 'info',
    });
    processes.push(started);
    const [, port] = await waitForOutput(
      started,
      /dashboard: http:\/\/0\.0\.0\.0:(\d+)\//,
      'the dashboard to listen',
    );
    const base = `http://127.0.0.1:${port}`;
    for (const path of [
      '/',
      '/api/runs',
      '/queues',
      '/runs/run-osw',
      '/api/runs/run-osw/tasks/shot/attempts/1/steps/1/screenshot',
    ]) {
      expect((await fetch(`${base}${path}`, { redirect: 'manual' })).status, path).toBe(401);
    }
    expect(
      (
        await fetch(`${base}/api/runs`, {
          headers: { authorization: 'Bearer wrong-token-of-enough-length' },
        })
      ).status,
    ).toBe(401);
    expect(
      (await fetch(`${base}/api/runs`, { headers: { authorization: `Bearer ${token}` } })).status,
    ).toBe(200);
    const opened = await fetch(`${base}/runs/run-osw?token=${token}`, { redirect: 'manual' });
    expect(opened.status).toBe(303);
    expect(opened.headers.get('location')).toBe('/runs/run-osw');
    const cookie = (opened.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    expect(opened.headers.get('set-cookie')).toMatch(/HttpOnly/i);
    expect((await fetch(`${base}/api/runs/run-osw`, { headers: { cookie } })).status).toBe(200);
    expect(started.output()).not.toContain(token);
    started.child.kill('SIGTERM');
    expect((await started.exited).code).toBe(0);
  });

  it('answers only to a loopback Host when it has no token', async () => {
    // fetch may not set Host; node:http may.
    const statusFor = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          { host: '127.0.0.1', port: sut.dashboard.port, path: '/api/runs', headers: { host } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end();
      });
    expect(await statusFor('evil.example')).toBe(403);
    expect(await statusFor(`evil.example:${sut.dashboard.port}`)).toBe(403);
    expect(await statusFor(`localhost:${sut.dashboard.port}`)).toBe(200);
    expect(await statusFor(`127.0.0.1:${sut.dashboard.port}`)).toBe(200);
  });
});
