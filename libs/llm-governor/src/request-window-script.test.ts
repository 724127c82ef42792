import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { deleteKeysWithPrefix, uniqueQueuePrefix } from '@benchfleet/testing';
import { NOW, TAKE_REQUESTS } from './request-window-script.js';

const redisUrl = inject('redisUrl');
const prefix = uniqueQueuePrefix();
const clients: Redis[] = [];

const SPAN = 1000;
const LIMIT = 20;
const GRACE = 100;
const RESERVE = 300;

/**
 * The script as the governor runs it, and a log of the instants (Redis's clock, ms) at which the
 * requests it granted go: now + each one's go-in. KEYS: window, lane hash, lease set, log.
 * One `now` for both: the script's own reading of Redis's clock is taken out, so the log holds the
 * instant the script counted (two readings differ when a starved Redis is descheduled between
 * them, which once logged 22 grants in a span of 20).
 */
const LOGGED = `${NOW}
local function take()
${TAKE_REQUESTS.replace(NOW, '')}
end
local reply = take()
if reply[1] == 1 then
  for i = 1, reply[3] do redis.call('RPUSH', KEYS[4], now + (reply[3 + i] or 0)) end
end
return reply`;

type TakeRedis = Redis & {
  takeLogged(
    window: string,
    lane: string,
    leases: string,
    log: string,
    shape: string,
    limit: number,
    span: number,
    grace: number,
    reserve: number,
    wanted: number,
    mine: number,
  ): Promise<number[]>;
};

function client(): TakeRedis {
  const redis = new Redis(redisUrl);
  redis.defineCommand('takeLogged', { numberOfKeys: 4, lua: LOGGED });
  clients.push(redis);
  return redis as TakeRedis;
}

afterAll(async () => {
  for (const redis of clients) redis.disconnect();
  await deleteKeysWithPrefix(redisUrl, prefix);
});

type Shape = 'sliding' | 'fixed' | 'bucket';

function keysOf(shape: Shape, name: string) {
  const base = `${prefix}:${shape}:${name}`;
  return [`${base}:req`, `${base}:lane`, `${base}:leases`, `${base}:log`] as const;
}

/**
 * `askers` clients ask at once, each for 1–12 requests at a time, until `total` went: a refused
 * asker sleeps part of the wait it was told (so they collide), then asks again.
 */
async function crowd(shape: Shape, askers: number, total: number): Promise<number[]> {
  const [window, lane, leases, log] = keysOf(shape, `crowd-${askers}`);
  let granted = 0;
  await Promise.all(
    Array.from({ length: askers }, async () => {
      const redis = client();
      while (granted < total) {
        const wanted = 1 + Math.floor(Math.random() * 12);
        const [, waitMs = 0, got = 0] = (
          await redis.takeLogged(
            window,
            lane,
            leases,
            log,
            shape,
            LIMIT,
            SPAN,
            GRACE,
            RESERVE,
            wanted,
            wanted,
          )
        ).map(Number);
        granted += got;
        if (got < wanted)
          await new Promise((resolve) => setTimeout(resolve, Math.random() * waitMs));
      }
    }),
  );
  const [reader] = clients;
  return (await reader!.lrange(log, 0, -1)).map(Number).sort((a, b) => a - b);
}

/** The busiest half-open interval of `width` ms: how many instants it holds, and which. */
function busiest(instants: readonly number[], width: number): { most: number; window: number[] } {
  let most = 0;
  let window: number[] = [];
  let from = 0;
  for (let to = 0; to < instants.length; to += 1) {
    while (instants[to]! - instants[from]! >= width) from += 1;
    if (to - from + 1 > most) {
      most = to - from + 1;
      window = instants.slice(from, to + 1);
    }
  }
  return { most, window };
}

describe('TAKE_REQUESTS: many askers at once against one request window', () => {
  it('a sliding log: never more than the limit in any span (+ grace), however the batches fall', async () => {
    const instants = await crowd('sliding', 12, 4 * LIMIT);
    expect(instants).toHaveLength(4 * LIMIT);
    const { most, window } = busiest(instants, SPAN + GRACE);
    expect(most, `the busiest span: ${window.join(' ')}`).toBe(LIMIT);
  });

  it("a fixed window: never more than the limit in a window, counting its predecessor's last grace", async () => {
    const instants = await crowd('fixed', 12, 4 * LIMIT);
    expect(instants).toHaveLength(4 * LIMIT);
    const perWindow = new Map<number, number>();
    for (const at of instants) {
      const index = Math.floor(at / SPAN);
      perWindow.set(index, (perWindow.get(index) ?? 0) + 1);
      // Within grace of its window's end, a request may reach the provider in the next one.
      if ((index + 1) * SPAN - at <= GRACE)
        perWindow.set(index + 1, (perWindow.get(index + 1) ?? 0) + 1);
    }
    expect(Math.max(...perWindow.values())).toBeLessThanOrEqual(LIMIT);
    // The whole limit is taken in a window, not a share of it.
    expect(Math.max(...perWindow.values())).toBe(LIMIT);
  });

  it('a token bucket: in any interval, at most its capacity plus what refills in it', async () => {
    const instants = await crowd('bucket', 12, 4 * LIMIT);
    expect(instants).toHaveLength(4 * LIMIT);
    const capacity = LIMIT - Math.ceil((LIMIT * GRACE) / SPAN);
    const rate = LIMIT / SPAN;
    const over: string[] = [];
    for (let i = 0; i < instants.length; i += 1)
      for (let j = i; j < instants.length; j += 1) {
        const allowed = capacity + (instants[j]! - instants[i]!) * rate + 1;
        if (j - i + 1 > allowed) over.push(`${j - i + 1} in ${instants[j]! - instants[i]!} ms`);
      }
    expect(over).toEqual([]);
  });

  it('grants part of a batch and says when the next slot frees: a sliding log of 20 asked for 25', async () => {
    const redis = client();
    const [window, lane, leases, log] = keysOf('sliding', 'partial');
    const ask = (wanted: number) =>
      redis.takeLogged(
        window,
        lane,
        leases,
        log,
        'sliding',
        LIMIT,
        SPAN,
        GRACE,
        RESERVE,
        wanted,
        wanted,
      );
    const [code, waitMs, granted] = (await ask(25)).map(Number);
    expect([code, granted]).toEqual([1, LIMIT]);
    // The oldest of the 20 leaves the log a span and the grace after it was counted.
    expect(waitMs).toBeGreaterThan(SPAN);
    expect(waitMs).toBeLessThanOrEqual(SPAN + GRACE + 1);
    expect((await ask(1)).map(Number).slice(0, 3)[2]).toBe(0);
  });

  it("hands a drained bucket's refill out ahead, one go-in per request, up to the reserve", async () => {
    const redis = client();
    const [window, lane, leases, log] = keysOf('bucket', 'reserve');
    const ask = (wanted: number) =>
      redis.takeLogged(
        window,
        lane,
        leases,
        log,
        'bucket',
        LIMIT,
        SPAN,
        GRACE,
        RESERVE,
        wanted,
        wanted,
      );
    const capacity = LIMIT - Math.ceil((LIMIT * GRACE) / SPAN);
    const [, , first] = (await ask(capacity)).map(Number);
    expect(first).toBe(capacity);
    // One refill per 50 ms: a reserve of 300 ms hands out about 6 more, each later than the last.
    const [code, waitMs, granted = 0, ...goIn] = (await ask(20)).map(Number);
    expect(code).toBe(1);
    expect(granted).toBeGreaterThanOrEqual(5);
    expect(granted).toBeLessThanOrEqual(7);
    expect(goIn).toHaveLength(granted);
    expect(goIn).toEqual([...goIn].sort((a, b) => a - b));
    expect(goIn.at(-1)).toBeLessThanOrEqual(RESERVE);
    expect(waitMs).toBeGreaterThan(0);
  });

  it('takes nothing while the lane is held off, and says for how long', async () => {
    const redis = client();
    const [window, lane, leases, log] = keysOf('fixed', 'held');
    const [seconds, micros] = await redis.time();
    const nowMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    await redis.hset(lane, 'closedUntil', nowMs + 5000);
    const [code, waitMs] = (
      await redis.takeLogged(window, lane, leases, log, 'fixed', LIMIT, SPAN, GRACE, RESERVE, 5, 5)
    ).map(Number);
    expect(code).toBe(2);
    expect(waitMs).toBeGreaterThan(4000);
    expect(await redis.llen(log)).toBe(0);
    expect(await redis.exists(`${window}:${Math.floor(nowMs / SPAN)}`)).toBe(0);
  });
});
