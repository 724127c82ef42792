import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { checkRedis } from '@benchfleet/queue';
import {
  freePort,
  launchInNetworkNamespace,
  startServerProcess,
  stopServerProcess,
  waitUntilServing,
  type ServerProcess,
} from './local-process.js';

export function findOnPath(
  binary: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, binary);
    if (dir && existsSync(candidate)) return candidate;
  }
  return undefined;
}

export interface LocalRedisOptions {
  /** Path of redis-server (default: found on PATH). */
  binary?: string;
  port?: number;
  /** Keep the data across restarts in an append-only file; without it a restart loses everything. */
  appendOnly?: boolean;
  /** The address it listens on and its URL names (default 127.0.0.1). */
  host?: string;
  /** A network namespace (`ip netns add`) to run in, as a host of its own; needs root. */
  netns?: string;
}

/** A redis-server of our own in a temp directory, on a port kept across restarts. */
export class LocalRedis {
  private server: ServerProcess | undefined;

  private constructor(
    private readonly binary: string,
    readonly dir: string,
    readonly port: number,
    private readonly appendOnly: boolean,
    readonly host: string,
    private readonly netns: string | undefined,
  ) {}

  static async create(options: LocalRedisOptions = {}): Promise<LocalRedis> {
    const binary = options.binary ?? findOnPath('redis-server');
    if (!binary) throw new Error('redis-server is not on PATH (apt-get install redis-server)');
    const dir = mkdtempSync(join(tmpdir(), 'benchfleet-redis-'));
    for (let tries = 0; ; tries += 1) {
      const redis = new LocalRedis(
        binary,
        dir,
        options.port ?? (await freePort()),
        options.appendOnly === true,
        options.host ?? '127.0.0.1',
        options.netns,
      );
      try {
        await redis.start();
        return redis;
      } catch (error) {
        if (options.port !== undefined || tries >= 3 || !/in use/i.test(String(error))) {
          rmSync(dir, { recursive: true, force: true });
          throw error;
        }
      }
    }
  }

  get url(): string {
    return `redis://${this.host}:${this.port}`;
  }

  get running(): boolean {
    return (
      this.server !== undefined &&
      this.server.child.exitCode === null &&
      this.server.child.signalCode === null
    );
  }

  async start(): Promise<void> {
    if (this.running) return;
    const args = [
      '--port',
      String(this.port),
      '--bind',
      this.host,
      '--save',
      '',
      '--dir',
      this.dir,
      '--maxmemory-policy',
      'noeviction',
    ];
    args.push('--appendonly', this.appendOnly ? 'yes' : 'no');
    // Without a password Redis answers only loopback clients unless told otherwise (its own host: a test's).
    if (this.host !== '127.0.0.1') args.push('--protected-mode', 'no');
    const server = await startServerProcess({
      ...(this.netns
        ? launchInNetworkNamespace(this.netns, this.binary, args)
        : { command: this.binary, args }),
      logFile: join(this.dir, 'redis.log'),
      stopSignal: 'SIGTERM',
    });
    this.server = server;
    await waitUntilServing(
      server,
      `redis-server on port ${this.port}`,
      async () => void (await checkRedis(this.url, 'redis-server', 500)),
      20_000,
    ).catch(async (error: unknown) => {
      await stopServerProcess(server, 'SIGKILL');
      this.server = undefined;
      throw error;
    });
  }

  async stop(): Promise<void> {
    if (this.server) await stopServerProcess(this.server, 'SIGTERM');
    this.server = undefined;
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
