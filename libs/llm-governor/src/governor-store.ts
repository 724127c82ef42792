import { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { errorMessage, redactSecrets } from '@benchfleet/core';
import { GovernorUnavailableError } from './governor-errors.js';
import type { BucketWindow, RequestWindow } from './llm-limits.js';
import { NOW, TAKE_REQUESTS } from './request-window-script.js';

/**
 * KEYS: lane hash, lease set. ARGV: lease ms, concurrency cap, initial target, lease ids (one per
 * waiter, in line order). Returns {0, ms left} while the lane is held off, {1, in flight} when the
 * fleet is at its target, {2, in flight, wave, learned rpm, learned tpm, learned window, granted}
 * once leases are taken: the first `granted` ids, as many as the target leaves room for (wave: how
 * many decreases the lane has had, so a wave of 429s decreases once; learned limits 0 when none;
 * window 1 sliding, 2 fixed, 3 bucket, 0 none).
 */
const ADMIT = `${NOW}
local closed = tonumber(redis.call('HGET', KEYS[1], 'closedUntil') or '0')
if closed > now then return {0, closed - now} end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local cap = tonumber(ARGV[2])
local target = tonumber(redis.call('HGET', KEYS[1], 'target') or '0')
if target <= 0 then
  target = math.min(cap, tonumber(ARGV[3]))
  redis.call('HSET', KEYS[1], 'target', target, 'slowStart', 1)
elseif target > cap then
  target = cap
  redis.call('HSET', KEYS[1], 'target', target)
end
local inflight = redis.call('ZCARD', KEYS[2])
local granted = math.min(#ARGV - 3, math.max(1, math.floor(target)) - inflight)
if granted <= 0 then return {1, inflight} end
local expires = now + tonumber(ARGV[1])
for i = 1, granted do redis.call('ZADD', KEYS[2], expires, ARGV[3 + i]) end
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[1]) + 60000)
local lane = redis.call('HMGET', KEYS[1], 'wave', 'learnedRpm', 'learnedTpm', 'learnedWindow')
local shapes = {sliding = 1, fixed = 2, bucket = 3}
return {2, inflight + granted, tonumber(lane[1] or '0'), tonumber(lane[2] or '0'), tonumber(lane[3] or '0'),
  shapes[lane[4] or ''] or 0, granted}`;

/** KEYS: lane hash. Returns the ms the lane is still held off (0: open). */
const HELD = `${NOW}
local closed = tonumber(redis.call('HGET', KEYS[1], 'closedUntil') or '0')
if closed > now then return closed - now end
return 0`;

/** KEYS: lease set. ARGV: lease ms, lease ids. Extends the leases that still exist. */
const RENEW = `${NOW}
local renewed = 0
for i = 2, #ARGV do
  renewed = renewed + redis.call('ZADD', KEYS[1], 'XX', 'CH', now + tonumber(ARGV[1]), ARGV[i])
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) + 60000)
return renewed`;

/**
 * KEYS: lane hash, this minute's observation hash, lease set.
 * ARGV: lease id, outcome (ok | limited | failed), wave at admission, cap, decrease factor, hold-off ms,
 * tokens, nano-USD, learned rpm (0: none), learned tpm (0: none), requests remaining (-1: not said),
 * ms to their reset, learned window shape ('': none), ms from now to a learned fixed window's end, span ms.
 * The provider's last word on what remains is kept for `TAKE_REQUESTS`; a fixed window's phase is
 * kept from the answer that first told the shape.
 * AIMD: slow start (+1 per success) until the first decrease, then +1/target per success; a
 * limited outcome multiplies the target by the factor, once per wave (calls admitted before the
 * last decrease do not decrease it again: TCP's one decrease per window). Returns {target, held off until}.
 */
const SETTLE = `${NOW}
redis.call('ZREM', KEYS[3], ARGV[1])
local kind = ARGV[2]
local cap = tonumber(ARGV[4])
local target = tonumber(redis.call('HGET', KEYS[1], 'target') or '1')
local slow = redis.call('HGET', KEYS[1], 'slowStart') == '1'
local closed = tonumber(redis.call('HGET', KEYS[1], 'closedUntil') or '0')
if kind == 'ok' then
  if slow then target = target + 1 else target = target + 1 / target end
  if target > cap then target = cap end
  redis.call('HSET', KEYS[1], 'target', target)
elseif kind == 'limited' then
  local wave = tonumber(redis.call('HGET', KEYS[1], 'wave') or '0')
  if tonumber(ARGV[3]) == wave then
    target = math.max(1, target * tonumber(ARGV[5]))
    redis.call('HSET', KEYS[1], 'target', target, 'slowStart', 0, 'wave', wave + 1)
  end
  local hold = tonumber(ARGV[6])
  if hold > 0 and now + hold > closed then
    closed = now + hold
    redis.call('HSET', KEYS[1], 'closedUntil', closed, 'closedAt', now)
  end
  redis.call('HINCRBY', KEYS[1], 'rateLimited', 1)
  redis.call('HINCRBY', KEYS[2], 'rateLimited', 1)
end
if tonumber(ARGV[9]) > 0 then redis.call('HSET', KEYS[1], 'learnedRpm', ARGV[9]) end
if kind ~= 'failed' and tonumber(ARGV[11]) >= 0 then
  redis.call('HSET', KEYS[1], 'repRemaining', ARGV[11], 'repAt', now, 'repResetAt', now + tonumber(ARGV[12]))
end
if ARGV[13] ~= '' then
  local was = redis.call('HGET', KEYS[1], 'learnedWindow')
  if was ~= ARGV[13] then
    redis.call('HSET', KEYS[1], 'learnedWindow', ARGV[13])
    if ARGV[13] == 'fixed' then
      redis.call('HSET', KEYS[1], 'fixedPhase', (now + tonumber(ARGV[14])) % tonumber(ARGV[15]))
    end
  end
end
if tonumber(ARGV[10]) > 0 then redis.call('HSET', KEYS[1], 'learnedTpm', ARGV[10]) end
redis.call('HINCRBY', KEYS[1], 'requests', 1)
redis.call('HINCRBY', KEYS[1], 'tokens', tonumber(ARGV[7]))
redis.call('HINCRBY', KEYS[1], 'spentNanoUsd', tonumber(ARGV[8]))
redis.call('HINCRBY', KEYS[2], 'requests', 1)
redis.call('HINCRBY', KEYS[2], 'tokens', tonumber(ARGV[7]))
redis.call('EXPIRE', KEYS[2], 180)
return {tostring(target), closed}`;

/** KEYS: lease set. ARGV: lease id. A call that ended without an answer to judge. */
const RELEASE = `return redis.call('ZREM', KEYS[1], ARGV[1])`;

/**
 * KEYS: a bucket window's key. ARGV: points, the TTL the key should have now, tolerance.
 * Gives points back only to the window they were charged in: a key created since (a later window)
 * has a TTL a whole window longer, and a gone key has nothing to give back.
 */
const REFUND = `local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 and math.abs(ttl - tonumber(ARGV[2])) <= tonumber(ARGV[3]) then
  return redis.call('DECRBY', KEYS[1], tonumber(ARGV[1]))
end
return -1`;

/**
 * KEYS: run spend hash, task spend hash. ARGV: nano-USD, tokens in, tokens out, attempt field,
 * unpriced (0/1), ttl s, lane id. Returns {run nano-USD, task nano-USD}. The run's hash also
 * counts per lane (`lane:<id>:<total>`), so a run's own use of a shared lane can be told.
 */
const SPEND = `local out = {}
for i = 1, 2 do
  redis.call('HINCRBY', KEYS[i], 'nanoUsd', tonumber(ARGV[1]))
  redis.call('HINCRBY', KEYS[i], 'tokensIn', tonumber(ARGV[2]))
  redis.call('HINCRBY', KEYS[i], 'tokensOut', tonumber(ARGV[3]))
  redis.call('HINCRBY', KEYS[i], 'calls', 1)
  redis.call('HINCRBY', KEYS[i], 'unpricedCalls', tonumber(ARGV[5]))
  redis.call('EXPIRE', KEYS[i], tonumber(ARGV[6]))
  out[i] = redis.call('HGET', KEYS[i], 'nanoUsd')
end
redis.call('HINCRBY', KEYS[2], ARGV[4], tonumber(ARGV[1]))
local lane = 'lane:' .. ARGV[7] .. ':'
redis.call('HINCRBY', KEYS[1], lane .. 'nanoUsd', tonumber(ARGV[1]))
redis.call('HINCRBY', KEYS[1], lane .. 'tokensIn', tonumber(ARGV[2]))
redis.call('HINCRBY', KEYS[1], lane .. 'tokensOut', tonumber(ARGV[3]))
redis.call('HINCRBY', KEYS[1], lane .. 'calls', 1)
redis.call('HINCRBY', KEYS[1], lane .. 'unpricedCalls', tonumber(ARGV[5]))
return out`;

/** KEYS: lane hash, lease set. Returns {now, in flight}. */
const LANE_STATE = `${NOW}
return {now, redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf')}`;

interface GovernorCommands {
  llmGovAdmit(
    lane: string,
    leases: string,
    leaseMs: number,
    cap: number,
    initial: number,
    ...leaseIds: string[]
  ): Promise<(number | string)[]>;
  llmGovRenew(leases: string, leaseMs: number, ...ids: string[]): Promise<number>;
  llmGovSettle(
    lane: string,
    minute: string,
    leases: string,
    ...args: (string | number)[]
  ): Promise<[string, number]>;
  llmGovRelease(leases: string, leaseId: string): Promise<number>;
  llmGovRefund(key: string, points: number, ttl: number, tolerance: number): Promise<number>;
  llmGovSpend(run: string, task: string, ...args: (string | number)[]): Promise<[string, string]>;
  llmGovLaneState(lane: string, leases: string): Promise<[number, number]>;
  llmGovHeld(lane: string): Promise<number>;
  llmGovTakeRequests(
    key: string,
    lane: string,
    leases: string,
    shape: string,
    limit: number,
    spanMs: number,
    graceMs: number,
    reserveMs: number,
    wanted: number,
    mine: number,
  ): Promise<number[]>;
}

type GovernorRedis = Redis & GovernorCommands;

/**
 * How far ahead a bucket's refill is handed out: a waiter sleeps until its own refill instead of
 * asking again for each one (one command per request), and an abandoned reservation wastes at
 * most one refill.
 */
const RESERVE_MS = 5000;

export type Consumed =
  { readonly ok: true; readonly ttlMs: number } | { readonly ok: false; readonly waitMs: number };

/**
 * The governor's Redis: one connection that reconnects forever but never queues a command for
 * long, every command under a deadline, every failure a `GovernorUnavailableError`.
 *
 * Slow is not down. A command sent on a live connection is answered in order, however loaded
 * Redis is, and what it does (a bucket charged, a lease taken) happens whether or not we wait for
 * the answer: so it is waited for up to `patienceMs`, and the call is made late rather than failed.
 * A command with no live connection to go on fails within `timeoutMs`, as before: no call is
 * ever let through unlimited.
 */
export class GovernorStore {
  readonly redis: GovernorRedis;
  readonly keys: string;
  readonly #timeoutMs: number;
  readonly #patienceMs: number;
  readonly #url: string;
  readonly #limiters = new Map<string, RateLimiterRedis>();

  constructor(url: string, prefix: string, timeoutMs: number, patienceMs: number) {
    this.#url = url;
    this.#timeoutMs = timeoutMs;
    this.#patienceMs = Math.max(timeoutMs, patienceMs);
    this.keys = `${prefix}:llm`;
    const redis = new Redis(url, {
      connectTimeout: timeoutMs,
      commandTimeout: this.#patienceMs,
      maxRetriesPerRequest: 1,
      enableReadyCheck: true,
      // Reconnect forever, at most every 2 s: a worker outlives a Redis restart.
      retryStrategy: (times) => Math.min(2000, 100 * times),
    });
    // Reconnects are ioredis's job; an unhandled 'error' event would kill the process.
    redis.on('error', () => undefined);
    redis.defineCommand('llmGovAdmit', { numberOfKeys: 2, lua: ADMIT });
    redis.defineCommand('llmGovRenew', { numberOfKeys: 1, lua: RENEW });
    redis.defineCommand('llmGovSettle', { numberOfKeys: 3, lua: SETTLE });
    redis.defineCommand('llmGovRelease', { numberOfKeys: 1, lua: RELEASE });
    redis.defineCommand('llmGovRefund', { numberOfKeys: 1, lua: REFUND });
    redis.defineCommand('llmGovSpend', { numberOfKeys: 2, lua: SPEND });
    redis.defineCommand('llmGovLaneState', { numberOfKeys: 2, lua: LANE_STATE });
    redis.defineCommand('llmGovHeld', { numberOfKeys: 1, lua: HELD });
    redis.defineCommand('llmGovTakeRequests', { numberOfKeys: 3, lua: TAKE_REQUESTS });
    this.redis = redis as GovernorRedis;
  }

  laneKey(laneId: string): string {
    return `${this.keys}:lane:${laneId}`;
  }
  leaseKey(laneId: string): string {
    return `${this.keys}:lease:${laneId}`;
  }
  minuteKey(laneId: string, minute: number): string {
    return `${this.keys}:obs:${laneId}:${minute}`;
  }
  runSpendKey(runId: string): string {
    return `${this.keys}:spend:run:${runId}`;
  }
  taskSpendKey(runId: string, taskId: string): string {
    return `${this.keys}:spend:task:${runId}:${taskId}`;
  }
  lanesKey(): string {
    return `${this.keys}:lanes`;
  }

  /**
   * Counts up to `wanted` requests against the provider's request limit as it counts it, and as
   * the provider last said what remains (`mine`: the leases in flight that are the asker's own
   * waiters). Taken: `goInMs` per request granted (0, or a bucket's refill reserved that far
   * ahead), and when fewer than wanted were, `waitMs` until the next may be; held off (a
   * Retry-After): the wait, nothing taken.
   */
  async takeRequests(
    window: RequestWindow,
    laneId: string,
    wanted: number,
    mine: number,
  ): Promise<
    | { readonly held: false; readonly goInMs: readonly number[]; readonly waitMs: number }
    | { readonly held: true; readonly waitMs: number }
  > {
    // The key names the window, so a changed limit or shape starts afresh (seeded by the provider's last word).
    const key = `${this.keys}:req:${window.shape}:${window.limit}:${window.spanMs}:${laneId}`;
    const reply = await this.run('count the requests', () =>
      this.redis.llmGovTakeRequests(
        key,
        this.laneKey(laneId),
        this.leaseKey(laneId),
        window.shape,
        window.limit,
        window.spanMs,
        window.graceMs,
        RESERVE_MS,
        wanted,
        mine,
      ),
    );
    const [code = 0, waitMs = 0, granted = 0, ...goIn] = reply.map(Number);
    if (code === 2) return { held: true, waitMs };
    return {
      held: false,
      goInMs: Array.from({ length: granted }, (_, i) => goIn[i] ?? 0),
      waitMs,
    };
  }

  /**
   * Takes leases for up to all `leaseIds` (in line order) under the fleet's concurrency target:
   * held off (the wait), none (the fleet is at its target), or the first `granted` taken, with
   * the lane's wave and what it has learned (0: nothing).
   */
  async admit(
    laneId: string,
    leaseIds: readonly string[],
    leaseMs: number,
    cap: number,
    initial: number,
  ): Promise<
    | { readonly kind: 'held'; readonly waitMs: number }
    | { readonly kind: 'full' }
    | {
        readonly kind: 'leased';
        readonly granted: number;
        readonly wave: number;
        readonly learnedRpm: number;
        readonly learnedTpm: number;
        readonly learnedWindow: number;
      }
  > {
    const reply = await this.run('take leases', () =>
      this.redis.llmGovAdmit(
        this.laneKey(laneId),
        this.leaseKey(laneId),
        leaseMs,
        cap,
        initial,
        ...leaseIds,
      ),
    );
    const [
      code = 0,
      a = 0,
      wave = 0,
      learnedRpm = 0,
      learnedTpm = 0,
      learnedWindow = 0,
      granted = 0,
    ] = reply.map(Number);
    if (code === 0) return { kind: 'held', waitMs: a };
    if (code === 1) return { kind: 'full' };
    return { kind: 'leased', granted, wave, learnedRpm, learnedTpm, learnedWindow };
  }

  /** Runs `command` under the deadline; any failure is the governor's infra fault, naming what failed. */
  async run<T>(what: string, command: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    // 'connect': the socket is up, its ready check under way (slow when Redis is).
    const live = this.redis.status === 'ready' || this.redis.status === 'connect';
    const boundMs = live ? this.#patienceMs : this.#timeoutMs;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(
              live
                ? `no answer within ${boundMs} ms on a live connection`
                : `not connected, and no connection within ${boundMs} ms`,
            ),
          ),
        boundMs,
      );
    });
    try {
      return await Promise.race([command(), deadline]);
    } catch (error) {
      if (error instanceof RateLimiterRes) throw error;
      throw new GovernorUnavailableError(
        `the LLM governor's Redis at ${redactSecrets(this.#url)} failed to ${what} (${errorMessage(error) || 'connection failed'}): the call is not made`,
      );
    } finally {
      clearTimeout(timer);
    }
  }

  /** The library's fixed-window limiter for one window size; keys carry the size, so a changed limit starts afresh. */
  limiter(kind: 'rpm' | 'tpm', window: BucketWindow): RateLimiterRedis {
    const keyPrefix = `${this.keys}:${kind}:${window.seconds}s${window.points}`;
    let limiter = this.#limiters.get(keyPrefix);
    if (limiter === undefined) {
      limiter = new RateLimiterRedis({
        storeClient: this.redis,
        keyPrefix,
        points: window.points,
        duration: window.seconds,
        // Fail at once while disconnected rather than queue: the deadline names the fault.
        rejectIfRedisNotReady: true,
      });
      this.#limiters.set(keyPrefix, limiter);
    }
    return limiter;
  }

  /** Charges `points` to the lane's current window; refused: how long until the window ends. */
  async consume(
    kind: 'rpm' | 'tpm',
    window: BucketWindow,
    laneId: string,
    points: number,
  ): Promise<Consumed> {
    const limiter = this.limiter(kind, window);
    try {
      const result = await this.run(`take from the ${kind} bucket`, () =>
        limiter.consume(laneId, points),
      );
      return { ok: true, ttlMs: result.msBeforeNext };
    } catch (error) {
      if (error instanceof RateLimiterRes) return { ok: false, waitMs: error.msBeforeNext };
      throw error;
    }
  }

  /** Points left in the lane's current window (all of them when none is open), and its ms to go. */
  async remaining(
    kind: 'rpm' | 'tpm',
    window: BucketWindow,
    laneId: string,
  ): Promise<{ points: number; msLeft: number }> {
    const limiter = this.limiter(kind, window);
    const result = await this.run(`read the ${kind} bucket`, () => limiter.get(laneId));
    if (result === null) return { points: window.points, msLeft: 0 };
    return { points: result.remainingPoints, msLeft: result.msBeforeNext };
  }

  /** Adds `points` to the lane's current window (a call used more than it was charged). */
  async penalize(kind: 'rpm' | 'tpm', window: BucketWindow, laneId: string, points: number) {
    const limiter = this.limiter(kind, window);
    await this.run(`charge the ${kind} bucket`, () => limiter.penalty(laneId, points));
  }

  async refund(
    kind: 'rpm' | 'tpm',
    window: BucketWindow,
    laneId: string,
    points: number,
    expectedTtlMs: number,
  ): Promise<boolean> {
    const key = this.limiter(kind, window).getKey(laneId);
    const tolerance = Math.floor((window.seconds * 1000) / 2);
    const result = await this.run(`refund the ${kind} bucket`, () =>
      this.redis.llmGovRefund(key, points, Math.round(expectedTtlMs), tolerance),
    );
    return result >= 0;
  }

  async close(): Promise<void> {
    if (this.redis.status !== 'ready') {
      this.redis.disconnect();
      return;
    }
    await this.run('close', () => this.redis.quit()).catch(() => this.redis.disconnect());
  }
}

export type { GovernorRedis };
