import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { sql } from 'kysely';
import { readRunSummary } from '@benchfleet/benchmark-kit';
import { createDatabase, migrateToLatest, type Database } from '@benchfleet/db';
import { debianPostgresBinDir, LocalPostgres, LocalRedis } from '@benchfleet/local-services';
import { benchmarks } from '@benchfleet/benchmarks';
import { demoCatalogRequest, importWebshopCatalog } from '@benchfleet/webshop-benchmark';
import { startFakeLlm, type FakeLlm } from './fake-llm/index.js';
import {
  runCli,
  runScript,
  startCli,
  startScript,
  waitFor,
  waitForWorkerReady,
  type CliName,
  type StartedProcess,
} from './process-harness.js';
import { withDatabase } from './test-database.js';
import { TcpRelay } from './tcp-relay.js';
import type { TestHost, TestNetwork } from './test-network.js';

// A fleet of real processes on a Postgres and a Redis of its own, for the fault suite and
// bench/faults.ts: faults are done to these servers and processes, never to the machine's.

/** What a run looks like once the fleet has converged (or not). */
export interface RunVerdict {
  tasks: number;
  /** Tasks without an outcome. */
  stuck: number;
  /** Tasks with more than one attempt that ended in an outcome of the agent (success or failed). */
  double: number;
  /** Tasks whose outcome is an infrastructure error: work the fault lost for good. */
  lost: number;
  /** Up to 5 lost tasks with each attempt's end, so that a verdict with `lost` above 0 says why. */
  lostTasks: { task: string; attempts: string[] }[];
  /** The stored summary counts every task once, as the rows say, with nothing pending. */
  summaryMatches: boolean;
  status: string;
}

type RunVerdictNumbers = {
  total_tasks: number;
  /** A baseline built before the rename says `completed`. */
  succeeded?: number;
  completed?: number;
  failed: number;
  cancelled: number;
  errors: number;
};

export interface FaultFleetOptions {
  /**
   * Another checkout whose CLIs (apps/<cli>/bin) the fleet runs instead of this one's: the bench
   * runs the same faults against a baseline. Its keeper may not know how to reconcile.
   */
  codeDir?: string;
  /** Redis keeps its data across a restart in an append-only file. */
  redisAppendOnly?: boolean;
  /** Products of the demo catalog (its goals are the WebShop tasks). */
  products?: number;
  /** Latency of every fake LLM answer: three per episode. */
  llmLatencyMs?: number;
  /** BENCHFLEET_HANDBACK_S of the fleet's workers: short, so that a fault test is short. */
  handBackS?: number;
  /** The workers' own lock duration and stalled interval instead of the suite's fast 1 s ones. */
  productionLocks?: boolean;
  /**
   * Hosts of their own: Postgres and Redis run on a host `services` of this network, the fake LLM
   * listens on the test process's address there, and workers may be started on other hosts.
   */
  network?: TestNetwork;
  /**
   * Postgres with a streaming replica (Debian's binaries), reached by every process through one
   * relay, so that `failover()` moves the fleet to the promoted replica: `async` (commits wait for
   * no one) or `synchronous` (synchronous_commit on, the replica in synchronous_standby_names).
   */
  standby?: 'async' | 'synchronous';
}

/** A process of the fleet with the metrics port it bound (its /healthz). */
export type FleetProcess = StartedProcess & { metricsPort?: number };

export class FaultFleet {
  readonly processes: StartedProcess[] = [];
  private readonly relays: TcpRelay[] = [];
  /** With `standby`: the replica, and the relay through which the fleet reaches its Postgres. */
  private replication: { standby: LocalPostgres; relay: TcpRelay } | undefined;
  private constructor(
    private readonly codeDir: string | undefined,
    private readonly productionLocks: boolean,
    readonly postgres: LocalPostgres,
    readonly redis: LocalRedis,
    readonly db: Database,
    readonly databaseUrl: string,
    readonly llm: FakeLlm,
    readonly scratch: string,
    readonly prefix: string,
    readonly handBackS: number,
  ) {}

  static async start(options: FaultFleetOptions = {}): Promise<FaultFleet> {
    // What was started before a later step failed is stopped again (a server left running would
    // also keep its network namespace alive).
    const undo: Array<() => Promise<unknown>> = [];
    try {
      const services = await options.network?.addHost('services');
      const on = services ? { host: services.address, netns: services.namespace } : {};
      const binDir = options.standby ? debianPostgresBinDir() : undefined;
      if (options.standby && binDir === undefined)
        throw new Error(
          "a fleet with a streaming replica needs Debian's Postgres server binaries (pg_basebackup): apt-get install postgresql",
        );
      const postgres = await LocalPostgres.create({
        ...on,
        ...(binDir ? { binDir } : {}),
        ...(options.standby === 'synchronous' ? { settings: { synchronous_commit: 'on' } } : {}),
      });
      undo.push(() => postgres.destroy());
      let replication: { standby: LocalPostgres; relay: TcpRelay } | undefined;
      if (options.standby) {
        const standby = await LocalPostgres.standbyOf(postgres, { applicationName: 'standby1' });
        undo.push(() => standby.destroy());
        if (options.standby === 'synchronous') await postgres.requireSynchronousStandby('standby1');
        const relay = await TcpRelay.open(postgres.host, postgres.port);
        undo.push(() => relay.close());
        replication = { standby, relay };
      }
      const redis = await LocalRedis.create({
        appendOnly: options.redisAppendOnly === true,
        ...on,
      });
      undo.push(() => redis.destroy());
      const admin = new pg.Client({ connectionString: postgres.url });
      await admin.connect();
      await admin.query('create database benchfleet');
      await admin.end();
      const databaseUrl = withDatabase(
        replication ? replication.relay.rewrite(postgres.url) : postgres.url,
        'benchfleet',
      );
      const db = createDatabase(databaseUrl, { max: 4 });
      undo.push(() => db.destroy());
      await migrateToLatest(db, benchmarks.migrations);
      await importWebshopCatalog(
        db,
        demoCatalogRequest({ seed: 0, products: options.products ?? 1_000 }),
      );
      const llm = await startFakeLlm({
        latencyMs: options.llmLatencyMs ?? 50,
        ...(options.network ? { host: options.network.gateway } : {}),
      });
      undo.push(() => llm.close());
      const scratch = await mkdtemp(path.join(tmpdir(), 'fault-fleet-'));
      const fleet = new FaultFleet(
        options.codeDir,
        options.productionLocks === true,
        postgres,
        redis,
        db,
        databaseUrl,
        llm,
        scratch,
        '{faults}',
        options.handBackS ?? 10,
      );
      fleet.replication = replication;
      return fleet;
    } catch (error) {
      for (const step of undo.reverse()) await step().catch(() => undefined);
      throw error;
    }
  }

  /**
   * A failover (a fleet started with `standby`): the primary crashes and the replica is promoted in
   * its place, behind the address the fleet uses. A replica stopped by `stopStandby()` (an async
   * replica left behind) is started again alone, with what it had received, to be promoted.
   */
  async failover(): Promise<void> {
    if (!this.replication) throw new Error('a failover needs a fleet started with a standby');
    const { standby, relay } = this.replication;
    await this.postgres.crash();
    await standby.start();
    standby.promote();
    relay.retarget(standby.host, standby.port);
  }

  /** The replica stops receiving (it is left behind from now on): for a failover that loses commits. */
  async stopStandby(): Promise<void> {
    if (!this.replication) throw new Error('no standby in this fleet');
    await this.replication.standby.catchUpWith(this.postgres);
    await this.replication.standby.stop();
  }

  /** The environment of every process of the fleet: its own services, fast stall detection (unless `productionLocks`). */
  get env(): NodeJS.ProcessEnv {
    return {
      ...process.env,
      DATABASE_URL: this.databaseUrl,
      REDIS_URL: this.redis.url,
      BENCHFLEET_QUEUE_PREFIX: this.prefix,
      BENCHFLEET_ARTIFACTS: `file://${path.join(this.scratch, 'artifacts')}`,
      BENCHFLEET_LOCK_MS: this.productionLocks ? undefined : '1000',
      BENCHFLEET_HANDBACK_S: String(this.handBackS),
      LOG_LEVEL: 'info',
    };
  }

  /** `host`: a host of its own of the fleet's network to run on; this one without. */
  private start(
    name: CliName,
    args: string[],
    env: NodeJS.ProcessEnv = {},
    host?: TestHost,
  ): StartedProcess {
    if (host && this.codeDir) throw new Error('a baseline checkout runs on this host only');
    const started = this.codeDir
      ? startScript(
          path.join(this.codeDir, 'apps', name, 'bin', `${name}.js`),
          args,
          { ...this.env, ...env },
          false,
        )
      : startCli(name, args, { ...this.env, ...env }, host?.wrap);
    this.processes.push(started);
    return started;
  }

  /**
   * A relay to the fleet's Postgres or Redis for one process (`env` of its start) that a test can
   * blackhole: that process alone is cut off, the rest of the fleet is not.
   */
  async relayTo(
    service: 'postgres' | 'redis',
  ): Promise<{ relay: TcpRelay; env: NodeJS.ProcessEnv }> {
    const port = service === 'postgres' ? this.postgres.port : this.redis.port;
    const relay = await TcpRelay.open('127.0.0.1', port);
    this.relays.push(relay);
    return service === 'postgres'
      ? { relay, env: { DATABASE_URL: relay.rewrite(this.databaseUrl) } }
      : { relay, env: { REDIS_URL: relay.rewrite(this.redis.url) } };
  }

  /** What a process's /healthz answers now: its status and text. */
  async healthz(process: FleetProcess): Promise<{ status: number; text: string }> {
    const response = await fetch(`http://127.0.0.1:${process.metricsPort}/healthz`, {
      signal: AbortSignal.timeout(5_000),
    });
    return { status: response.status, text: (await response.text()).trim() };
  }

  /** On `host`, a host of its own of the fleet's network; on this one without. */
  async startWebshopWorker(
    id: string,
    concurrency = 8,
    env: NodeJS.ProcessEnv = {},
    host?: TestHost,
  ): Promise<FleetProcess> {
    const worker = this.start(
      'worker-webshop',
      [
        '--worker-id',
        id,
        '--concurrency',
        String(concurrency),
        '--metrics-port',
        '0',
        '--grace-s',
        '5',
      ],
      env,
      host,
    );
    return { ...worker, ...(await waitForWorkerReady(worker)) };
  }

  async startOsworldWorker(
    stackId: string,
    bytebotUrl: string,
    env: NodeJS.ProcessEnv = {},
    extra: string[] = [],
  ): Promise<FleetProcess> {
    const worker = this.start(
      'worker-osworld',
      [
        '--stack-id',
        stackId,
        '--bytebot-url',
        bytebotUrl,
        '--metrics-port',
        '0',
        '--grace-s',
        '5',
        ...extra,
      ],
      env,
    );
    return { ...worker, ...(await waitForWorkerReady(worker)) };
  }

  /** The fleet keeper (`scheduler worker`): lost jobs, and a reconciliation every second. */
  async startKeeper(id = 'keeper'): Promise<StartedProcess> {
    const reconcile = this.codeDir ? [] : ['--reconcile-every-s', '1', '--reconcile-grace-s', '0'];
    const keeper = this.start('scheduler', [
      'worker',
      '--worker-id',
      id,
      '--metrics-port',
      '0',
      ...reconcile,
    ]);
    await waitForWorkerReady(keeper);
    return keeper;
  }

  async scheduler(args: string[]) {
    if (this.codeDir)
      return runScript(
        path.join(this.codeDir, 'apps', 'scheduler', 'bin', 'scheduler.js'),
        args,
        this.env,
        600_000,
        false,
      );
    return runCli('scheduler', args, this.env, 600_000);
  }

  /** `scheduler enqueue` of WebShop goals played by the LLM agent against the fake (slow enough to fault mid-run). */
  async enqueueWebshop(goals: string, extra: string[] = []): Promise<string> {
    const result = await this.scheduler([
      'enqueue',
      '--benchmark',
      'webshop',
      '--goals',
      goals,
      '--agent',
      'llm',
      '--llm-base-url',
      this.llm.baseUrl,
      '--llm-model',
      'fake-model',
      '--json',
      ...extra,
    ]);
    if (result.code !== 0) throw new Error(`enqueue failed: ${result.stderr}`);
    return (JSON.parse(result.stdout) as { runId: string }).runId;
  }

  async taskCounts(runId: string): Promise<{ open: number; settled: number }> {
    const row = await sql<{ open: number; settled: number }>`
      select count(*) filter (where status in ('queued', 'running'))::int as open,
             count(*) filter (where status not in ('queued', 'running'))::int as settled
      from tasks where run_id = ${runId}`.execute(this.db);
    return row.rows[0] ?? { open: 0, settled: 0 };
  }

  async waitForSettled(runId: string, atLeast: number, timeoutMs = 120_000): Promise<void> {
    await waitFor(
      `${atLeast} task(s) of ${runId} to settle`,
      async () => (await this.taskCounts(runId)).settled >= atLeast,
      timeoutMs,
      100,
    );
  }

  /** Waits until every task has an outcome and the run its summary; returns the seconds it took. */
  async converge(runId: string, timeoutMs = 180_000): Promise<number> {
    const started = Date.now();
    await waitFor(
      `run ${runId} to settle and be summarised`,
      async () => {
        const run = await this.db
          .selectFrom('runs')
          .select(['summary', 'status'])
          .where('id', '=', runId)
          .executeTakeFirst()
          .catch(() => undefined);
        const pending =
          readRunSummary(run?.summary)?.pending ??
          (run?.summary as { pending?: number } | null | undefined)?.pending;
        return run && pending === 0 && run.status !== 'running' && run.status !== 'queued';
      },
      timeoutMs,
      200,
    );
    return (Date.now() - started) / 1000;
  }

  async verdict(runId: string): Promise<RunVerdict> {
    const tasks = await this.db
      .selectFrom('tasks')
      .selectAll()
      .where('run_id', '=', runId)
      .execute();
    const outcomes = await sql<{ task_id: string; n: number }>`
      select task_id, count(*)::int as n from attempts
      where run_id = ${runId} and status in ('success', 'failed')
      group by task_id having count(*) > 1`.execute(this.db);
    const infra = await sql<{ n: number }>`
      select count(*)::int as n from tasks t join attempts a on a.run_id = t.run_id and a.task_id = t.task_id and a.attempt = t.attempts
      where t.run_id = ${runId} and t.status = 'error' and a.error_class = 'infra'`.execute(
      this.db,
    );
    const lostTasks = await this.lostTasks(runId);
    const run = await this.db
      .selectFrom('runs')
      .select(['summary', 'status'])
      .where('id', '=', runId)
      .executeTakeFirstOrThrow();
    const summary = readRunSummary(run.summary);
    // A summary another build wrote (a baseline's) is read by its numbers alone.
    const numbers =
      summary?.summary ??
      (run.summary as { summary?: RunVerdictNumbers; pending?: number } | null)?.summary;
    const pending = summary?.pending ?? (run.summary as { pending?: number } | null)?.pending;
    const count = (status: string) => tasks.filter((task) => task.status === status).length;
    const summaryMatches =
      numbers !== undefined &&
      pending === 0 &&
      numbers.total_tasks === tasks.length &&
      ('succeeded' in numbers ? numbers.succeeded : numbers.completed) === count('success') &&
      numbers.failed === count('failed') &&
      numbers.cancelled === count('cancelled') &&
      numbers.errors === count('error');
    return {
      tasks: tasks.length,
      stuck: tasks.filter((task) => task.status === 'queued' || task.status === 'running').length,
      double: outcomes.rows.length,
      lost: infra.rows[0]?.n ?? 0,
      lostTasks,
      summaryMatches,
      status: run.status,
    };
  }

  /** Postgres's clock now: the clock of the attempts' `started_at`, on which takeovers are measured. */
  async databaseNow(): Promise<Date> {
    const row = await sql<{ now: Date }>`select clock_timestamp() as now`.execute(this.db);
    const now = row.rows[0]?.now;
    if (!now) throw new Error('Postgres answered no time');
    return now;
  }

  /**
   * Seconds from `since` (Postgres's clock) to the last attempt another worker than `fromWorker`
   * opened on `taskIds`: a takeover timed by neither this process's polling nor a CLI's start.
   */
  async secondsToTakeover(
    runId: string,
    taskIds: string[],
    fromWorker: string,
    since: Date,
  ): Promise<number> {
    const row = await sql<{ seconds: number | null }>`
      select extract(epoch from max(started_at) - ${since}::timestamptz)::float8 as seconds
      from attempts where run_id = ${runId} and task_id = any(${taskIds}::text[])
        and worker_id <> ${fromWorker}`.execute(this.db);
    return row.rows[0]?.seconds ?? Number.NaN;
  }

  private async lostTasks(runId: string): Promise<RunVerdict['lostTasks']> {
    const rows = await sql<{ task_id: string; attempts: string[] }>`
      select t.task_id, array_agg(
        a.attempt || ' ' || coalesce(a.worker_id, '?') || ' ' || a.status || ': ' || coalesce(a.error, '')
        order by a.attempt) as attempts
      from tasks t join attempts a on a.run_id = t.run_id and a.task_id = t.task_id
      where t.run_id = ${runId} and t.status = 'error' and exists (
        select 1 from attempts last where last.run_id = t.run_id and last.task_id = t.task_id
          and last.attempt = t.attempts and last.error_class = 'infra')
      group by t.task_id order by t.task_id limit 5`.execute(this.db);
    return rows.rows.map((row) => ({ task: row.task_id, attempts: row.attempts }));
  }

  /** Every process the fleet started that is still running. */
  alive(): StartedProcess[] {
    return this.processes.filter((p) => p.child.exitCode === null && p.child.signalCode === null);
  }

  async stop(): Promise<void> {
    for (const started of this.processes) {
      if (started.child.exitCode !== null || started.child.signalCode !== null) continue;
      started.child.kill('SIGKILL');
      await started.exited;
    }
    for (const relay of this.relays) await relay.close();
    await this.db.destroy().catch(() => undefined);
    await this.llm.close();
    await this.redis.destroy();
    await this.postgres.destroy();
    if (this.replication) {
      await this.replication.relay.close();
      await this.replication.standby.destroy();
    }
    await rm(this.scratch, { recursive: true, force: true });
  }
}
