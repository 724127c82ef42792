import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import {
  createServer as createTcpServer,
  type AddressInfo,
  type Server as TcpServer,
} from 'node:net';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeBytebot, withFakeScenario, type FakeBytebot } from '@benchfleet/testing';
import {
  BYTEBOT_DEFAULT_RETRY_DELAYS_MS,
  BytebotClient,
  BytebotHttpError,
  BytebotUnavailableError,
} from './bytebot-client.js';

const model = { provider: 'proxy', name: 'fake-model', title: 'Fake', contextWindow: 128_000 };
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startFake(): Promise<FakeBytebot> {
  const fake = await startFakeBytebot({ pendingDelayMs: 5, stepIntervalMs: 2, toolDelayMs: 1 });
  cleanups.push(() => fake.close());
  return fake;
}

/** A TCP server that accepts and immediately drops every connection, remembering when. */
async function startConnectionDropper(): Promise<{ url: string; connectionTimes: number[] }> {
  const connectionTimes: number[] = [];
  const server: TcpServer = createTcpServer((socket) => {
    connectionTimes.push(Date.now());
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connectionTimes };
}

async function waitFor(condition: () => boolean | Promise<boolean>): Promise<void> {
  for (let tries = 0; !(await condition()); tries++) {
    if (tries > 500) throw new Error('condition not met in time');
    await sleep(5);
  }
}

describe('BytebotClient', () => {
  it('retries a request that gets no answer 3 times, after the configured backoff, then throws BytebotUnavailableError', async () => {
    const dropper = await startConnectionDropper();
    const sut = new BytebotClient({ baseUrl: dropper.url, retryDelaysMs: [40, 80, 160] });
    const error = await sut.getTask('abc').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BytebotUnavailableError);
    expect(error).toMatchObject({ method: 'GET', path: '/tasks/abc', attempts: 4 });
    expect(dropper.connectionTimes).toHaveLength(4);
    const gaps = dropper.connectionTimes
      .slice(1)
      .map((time, index) => time - (dropper.connectionTimes[index] ?? 0));
    expect(gaps[0]).toBeGreaterThanOrEqual(38);
    expect(gaps[1]).toBeGreaterThanOrEqual(78);
    expect(gaps[2]).toBeGreaterThanOrEqual(158);
  });

  it('defaults to the original backoff of 2, 4 and 8 seconds', () => {
    expect(BYTEBOT_DEFAULT_RETRY_DELAYS_MS).toEqual([2_000, 4_000, 8_000]);
  });

  it('does not retry an error answer, and never logs the credentials of the base URL', async () => {
    const fake = await startFake();
    const lines: string[] = [];
    const logger = pino(
      { level: 'debug' },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    );
    const withCredentials = fake.url.replace('http://', 'http://bench:s3cret-token@');
    const sut = new BytebotClient({ baseUrl: withCredentials, retryDelaysMs: [5], logger });
    const error = await sut.getTask('missing').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BytebotHttpError);
    expect(error).toMatchObject({ status: 404, serverMessage: 'Task with ID missing not found' });
    expect(fake.stats.requests).toBe(1);

    const dropper = await startConnectionDropper();
    const unreachable = new BytebotClient({
      baseUrl: dropper.url.replace('http://', 'http://bench:s3cret-token@'),
      retryDelaysMs: [5],
      logger,
    });
    const unavailable = await unreachable.listModels().catch((caught: unknown) => caught);
    expect(unavailable).toBeInstanceOf(BytebotUnavailableError);
    expect(lines.join('')).toContain('retrying');
    expect(lines.join('')).not.toContain('s3cret');
    expect(String((unavailable as Error).message)).not.toContain('s3cret');
  });

  it('pages messages until a short page, and can start from an index', async () => {
    const fake = await startFake();
    const sut = new BytebotClient({ baseUrl: fake.url, messagesPageSize: 4 });
    const task = await sut.createTask({ description: 'six steps', model });
    await waitFor(async () => (await sut.getTask(task.id)).status === 'COMPLETED');
    const before = fake.stats.requestsByRoute['GET /tasks/:id/messages'] ?? 0;
    const all = await sut.getMessages(task.id);
    expect(all).toHaveLength(9); // description, 3 × (ASSISTANT, USER), set_task_status and its result
    expect(fake.stats.requestsByRoute['GET /tasks/:id/messages']).toBe(before + 3);
    const tail = await sut.getMessagesFrom(task.id, 6);
    expect(tail.startIndex).toBe(4);
    expect(tail.messages.map((message) => message.id)).toEqual(
      all.slice(4).map((message) => message.id),
    );
  });

  it('treats a cancel of an ended task as no error', async () => {
    const fake = await startFake();
    const sut = new BytebotClient({ baseUrl: fake.url });
    const task = await sut.createTask({
      description: withFakeScenario('endless', 'never-finishes'),
      model,
    });
    const first = await sut.cancelTask(task.id);
    expect(first.outcome).toBe('cancelled');
    expect(first.outcome === 'cancelled' && first.task.status).toBe('CANCELLED');
    expect(await sut.cancelTask(task.id)).toEqual({ outcome: 'already_ended' });
  });

  it('waits until no task is RUNNING or PENDING, and gives up after its timeout', async () => {
    const fake = await startFake();
    const sut = new BytebotClient({ baseUrl: fake.url });
    expect(await sut.waitUntilIdle()).toBe(true);
    const busy = await sut.createTask({ description: withFakeScenario('busy', 'silent'), model });
    expect(await sut.countActiveTasks()).toBe(1);
    expect(await sut.waitUntilIdle({ pollIntervalMs: 20, timeoutMs: 100 })).toBe(false);
    setTimeout(() => void sut.cancelTask(busy.id), 50);
    expect(await sut.waitUntilIdle({ pollIntervalMs: 10, timeoutMs: 2_000 })).toBe(true);
  });

  it('offers the first model of the stack when none is given', async () => {
    const fake = await startFake();
    const sut = new BytebotClient({ baseUrl: fake.url });
    expect((await sut.resolveModel()).name).toBe('fake-model');
    expect(await sut.resolveModel(model)).toBe(model);
    expect(await sut.isHealthy()).toBe(true);
    expect(
      await new BytebotClient({ baseUrl: (await startConnectionDropper()).url }).isHealthy(),
    ).toBe(false);
  });

  it('adopts the task a lost create answer had created, even one that has ended, instead of creating a twin', async () => {
    const fake = await startFake();
    // Forwards to the fake but drops the connection instead of answering the first POST /tasks.
    let dropped = false;
    const proxy: HttpServer = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        void (async () => {
          // The lost create's task has ended before the retry looks for it (a fast task, or a slow retry).
          if (dropped && req.method === 'GET')
            await waitFor(() => fake.tasks().every((task) => task.status === 'COMPLETED'));
          const hasBody = req.method === 'POST' && chunks.length > 0;
          const answer = await fetch(`${fake.url}${req.url ?? '/'}`, {
            method: req.method ?? 'GET',
            ...(hasBody
              ? { body: Buffer.concat(chunks), headers: { 'content-type': 'application/json' } }
              : {}),
          });
          const body = await answer.text();
          if (req.method === 'POST' && req.url === '/tasks' && !dropped) {
            dropped = true;
            req.socket.destroy();
            return;
          }
          res.writeHead(answer.status, { 'content-type': 'application/json' }).end(body);
        })();
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    });
    const sut = new BytebotClient({
      baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
      retryDelaysMs: [10, 20, 40],
    });
    const task = await sut.createTask({ description: 'created once', model });
    expect(dropped).toBe(true);
    expect(fake.stats.createdTasks).toBe(1);
    expect(task.id).toBe(fake.tasks()[0]?.id);
  });
});
