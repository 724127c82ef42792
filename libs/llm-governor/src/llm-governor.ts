import { randomBytes } from 'node:crypto';
import type { Logger } from '@benchfleet/core';
import {
  errorTypeOf,
  processTelemetry,
  type LlmCallEnd,
  type LlmCallSpan,
  type Telemetry,
} from '@benchfleet/telemetry';
import {
  AttemptNotRunningError,
  BudgetExceededError,
  PriceUnknownError,
  RateLimitedTooLongError,
  type BudgetScope,
} from './governor-errors.js';
import { AdmissionLine, type HeldLease } from './admission-line.js';
import { GovernorStore } from './governor-store.js';
import { laneIdentity, type LaneIdentity, type LlmAttribution, type LlmLane } from './llm-lane.js';
import {
  bucketWindow,
  LlmLimitsTable,
  requestWindowOf,
  type BucketWindow,
  type LaneLimits,
} from './llm-limits.js';
import { costOf, type ModelPrice, type PriceTable } from './price-table.js';
import {
  holdOffMs,
  readRateHints,
  type HeaderSource,
  type ProviderRateHints,
} from './rate-limit-headers.js';
import { estimatedTotal, type TokenEstimate } from './token-estimate.js';
import { WindowShapeLearner } from './window-shape.js';

/** Spend limits in USD; each is checked before a call (with its estimate) and after it (real cost). */
export interface LlmBudget {
  readonly taskUsd?: number;
  readonly runUsd?: number;
}

/** Answers whether an attempt is still the running one (the relay refuses calls for orphans). */
export type AttemptRunningCheck = (attribution: LlmAttribution) => Promise<boolean> | boolean;

export interface LlmCallRequest {
  readonly lane: LlmLane;
  readonly estimate: TokenEstimate;
  /** Whom the call is for: spend is counted per run, task and attempt; required with a budget. */
  readonly attribution?: LlmAttribution;
  readonly budget?: LlmBudget;
  /** Aborting it stops the waiting (the call is not made). */
  readonly signal: AbortSignal;
  /** The longest fleet-wide hold-off (a Retry-After) this call waits out; longer: `RateLimitedTooLongError`. Default 60 s. */
  readonly maxHoldOffMs?: number;
  /**
   * What the request asked of the model, for the call's GenAI span. `maxTokens` defaults to the
   * estimate's; null: the request set no `max_tokens` (a relayed one, say).
   */
  readonly parameters?: {
    readonly temperature?: number;
    readonly topP?: number;
    readonly maxTokens?: number | null;
  };
  /** The request's messages: the call's span records them when tracing captures content (off by default). */
  readonly inputMessages?: readonly unknown[];
}

/** What came of a call, as the caller saw it. */
export type LlmOutcome =
  | {
      readonly kind: 'ok';
      /** As the provider reported it; missing, the estimate is what spend and buckets keep. */
      readonly usage?: { readonly promptTokens: number; readonly completionTokens: number };
      readonly headers?: HeaderSource;
      /** What the answer said, for the call's GenAI span. */
      readonly responseModel?: string;
      readonly responseId?: string;
      readonly finishReasons?: readonly string[];
    }
  /** 429, or an overload (503, 529): the fleet's concurrency target goes down and everyone holds off. */
  | { readonly kind: 'rate-limited'; readonly status: number; readonly headers?: HeaderSource }
  /** Anything else that gave no answer: network error, timeout, other 5xx, a refused request. */
  | {
      readonly kind: 'failed';
      readonly status?: number;
      readonly headers?: HeaderSource;
      /** Low-cardinality cause for the span's `error.type` (`TIMEOUT`, `ECONNREFUSED`); default: the status. */
      readonly errorType?: string;
    };

export interface LlmSettlement {
  readonly tokensIn: number;
  readonly tokensOut: number;
  /** null when the model has no price (unknown, never a silent 0). */
  readonly costUsd: number | null;
  readonly priceKnown: boolean;
  /** A spend limit the real cost has reached: the next call for this task (or run) will be refused. */
  readonly budgetReached?: BudgetScope;
  /** The fleet-wide hold-off this answer set, in ms (rate-limited answers). */
  readonly holdOffMs?: number;
}

/** A call admitted by the governor; settle it exactly once with what came of it. */
export interface LlmPermit {
  readonly lane: LaneIdentity;
  readonly estimatedTokens: number;
  /** Time spent waiting for a hold-off, a lease and the buckets. */
  readonly waitedMs: number;
  settle(outcome: LlmOutcome): Promise<LlmSettlement>;
}

/** What a client needs of the governor: tests and the relay can pass any implementation. */
export interface LlmCallGate {
  acquire(request: LlmCallRequest): Promise<LlmPermit>;
}

export interface LlmGovernorOptions {
  readonly redisUrl: string;
  /** The fleet's queue prefix; the governor's keys live under `<prefix>:llm:`. */
  readonly prefix: string;
  readonly limits?: LlmLimitsTable;
  readonly logger?: Logger;
  /** Mixed into key fingerprints; every process of a fleet must use the same one. */
  readonly fingerprintSecret?: string;
  /** Deadline of connecting to Redis, and of a command that has no live connection to go on (default 2000 ms). */
  readonly redisTimeoutMs?: number;
  /**
   * Deadline of a command on a live connection (default 20 000 ms): a slow Redis (loaded, saving)
   * is waited for, and the call made late, rather than failed as an infra fault.
   */
  readonly redisPatienceMs?: number;
  /** How long an in-flight lease lives without renewal (default 30 s): the bound on a dead process's leak. */
  readonly leaseMs?: number;
  /** A permit not settled after this long is no longer renewed (default 15 min): a lost permit cannot hold a lease forever. */
  readonly maxPermitMs?: number;
  /** The concurrency target a lane starts at (default 8); slow start doubles it per wave until the first 429. */
  readonly initialConcurrency?: number;
  /** The target's ceiling for lanes with no `maxConcurrency` limit (default 256). */
  readonly defaultMaxConcurrency?: number;
  /** Multiplies the target on a 429/overload (default 0.5). */
  readonly decreaseFactor?: number;
  /** Hold-off after a 429 that names no wait and no reset (default 1000 ms). */
  readonly holdOffFallbackMs?: number;
  /** How often a process asks again while the fleet is at its concurrency target (default 25 ms). */
  readonly pollMs?: number;
  readonly isAttemptRunning?: AttemptRunningCheck;
  /**
   * The spend limits of the run and task a call is for, when the call names none itself: every
   * governed call with an attribution is held to them (the agent's calls and relayed ones alike).
   * Workers pass the limits stored with the run (`runs.limits`).
   */
  readonly budgetOf?: (
    attribution: LlmAttribution,
  ) => Promise<LlmBudget | undefined> | LlmBudget | undefined;
  /**
   * The prices stored with the run a call is for (given at enqueue): a model priced there is priced
   * so, before this process's own table (`limits`), so every worker prices a run alike.
   */
  readonly pricesOf?: (
    attribution: LlmAttribution,
  ) => Promise<PriceTable | undefined> | PriceTable | undefined;
  /**
   * The span the provider counts a per-minute limit over (default 60 s). Only for fakes that count
   * over a shorter span (tests): the limits are scaled to it.
   */
  readonly spanSeconds?: number;
  /** The fixed windows a per-minute token limit is enforced in (default `bucketWindow`); tests pass long ones. */
  readonly bucketWindow?: (perMinute: number) => BucketWindow;
  /** Where each call's GenAI span goes; default: the process's telemetry (`startTelemetry`), read at each call. */
  readonly telemetry?: Telemetry;
}

/** Per (provider, key fingerprint, model): what `status`, `/metrics` and the dashboard show. */
export interface LaneSnapshot {
  readonly laneId: string;
  readonly provider: string;
  readonly keyFingerprint: string;
  readonly model: string;
  readonly limits: {
    /** As a worker was configured (file or flags) and as learned from the provider's headers. */
    readonly requestsPerMinute: { readonly configured?: number; readonly learned?: number };
    readonly tokensPerMinute: { readonly configured?: number; readonly learned?: number };
    readonly maxConcurrency: number;
  };
  /** Sliding estimates over the last 60 s. */
  readonly requestsPerMinute: number;
  readonly tokensPerMinute: number;
  readonly rateLimitedPerMinute: number;
  readonly totals: {
    readonly requests: number;
    readonly tokens: number;
    readonly rateLimited: number;
  };
  readonly concurrency: { readonly target: number; readonly inFlight: number };
  /** > 0 while a Retry-After holds every worker off. */
  readonly heldOffForMs: number;
  readonly spentUsd: number;
  readonly priceKnown: boolean;
}

export interface GovernorSnapshot {
  readonly at: number;
  readonly lanes: readonly LaneSnapshot[];
}

/** A run's own calls on one lane. */
export type RunLaneSpend = Omit<SpendTotals, 'fencedAt' | 'laneIds'>;

export interface SpendTotals {
  readonly usd: number;
  readonly tokensIn: number;
  readonly tokensOut: number;
  readonly calls: number;
  /** Calls of models with no price: their cost is missing from `usd`. */
  readonly unpricedCalls: number;
  /** When a spend limit stopped the run (ms since the epoch): every later call of it is refused. */
  readonly fencedAt: number | null;
  /** The lanes (`LaneSnapshot.laneId`) the run's calls went through; empty for a task's spend. */
  readonly laneIds: readonly string[];
}

const NANO = 1_000_000_000;
const SPEND_TTL_S = 30 * 24 * 3600;
/**
 * A field of a run's spend record per lane its calls went through: `used-lane:<laneId>` (apart from
 * the run's totals per lane, `lane:<laneId>:<total>`).
 */
const RUN_LANE_FIELD = 'used-lane:';

interface LaneRecord {
  readonly provider: string;
  readonly keyFingerprint: string;
  readonly model: string;
  readonly configured: {
    readonly requestsPerMinute?: number;
    readonly tokensPerMinute?: number;
    readonly maxConcurrency: number;
    readonly priced: boolean;
  };
}

function abortable(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * One brake for the whole fleet. Every LLM call takes a permit: it waits out a hold-off any worker
 * published (a Retry-After), a lease under the fleet-wide concurrency target (AIMD), and the
 * request and token buckets of its (provider, key, model) — all held in Redis — after its task's
 * and run's spend limits are checked with the call's estimate. Settling the permit charges the
 * real tokens and cost, adapts the target and publishes any Retry-After to every worker.
 *
 * Redis is part of the brake: when it does not answer, calls fail with
 * `GovernorUnavailableError` (an infra fault, retried), never run unlimited.
 */
export class LlmGovernor implements LlmCallGate {
  readonly #store: GovernorStore;
  readonly #limits: LlmLimitsTable;
  readonly #logger: Logger | undefined;
  readonly #secret: string;
  readonly #leaseMs: number;
  readonly #maxPermitMs: number;
  readonly #initial: number;
  readonly #defaultCap: number;
  readonly #factor: number;
  readonly #fallbackMs: number;
  readonly #pollMs: number;
  readonly #isAttemptRunning: AttemptRunningCheck | undefined;
  readonly #budgetOf: LlmGovernorOptions['budgetOf'];
  readonly #pricesOf: LlmGovernorOptions['pricesOf'];
  readonly #window: (perMinute: number) => BucketWindow;
  readonly #spanSeconds: number;
  readonly #telemetry: Telemetry | undefined;
  /** The window shape each lane's answers tell, from this process's own answers. */
  readonly #shapes: WindowShapeLearner;
  readonly #processId = randomBytes(4).toString('hex');
  #leaseCount = 0;
  /** Leases this process holds, per lane, with when each was taken: renewed together by the heartbeat. */
  readonly #leases = new Map<string, Map<string, number>>();
  /** Each lane's line in this process: its waiters admitted together, in few Redis round trips. */
  readonly #lines = new Map<string, AdmissionLine>();
  /** Lanes this process registered, and whether it knew a price for them then. */
  readonly #registered = new Map<string, boolean>();
  /** (run, lane) pairs this process has written to the run's spend record. */
  readonly #notedRunLanes = new Set<string>();
  readonly #heartbeat: NodeJS.Timeout;
  #closed = false;

  constructor(options: LlmGovernorOptions) {
    this.#store = new GovernorStore(
      options.redisUrl,
      options.prefix,
      options.redisTimeoutMs ?? 2000,
      options.redisPatienceMs ?? 20_000,
    );
    this.#limits = options.limits ?? new LlmLimitsTable();
    this.#logger = options.logger;
    this.#secret = options.fingerprintSecret ?? '';
    this.#leaseMs = options.leaseMs ?? 30_000;
    this.#maxPermitMs = options.maxPermitMs ?? 15 * 60_000;
    this.#initial = options.initialConcurrency ?? 8;
    this.#defaultCap = options.defaultMaxConcurrency ?? 256;
    this.#factor = options.decreaseFactor ?? 0.5;
    this.#fallbackMs = options.holdOffFallbackMs ?? 1000;
    this.#pollMs = options.pollMs ?? 25;
    this.#isAttemptRunning = options.isAttemptRunning;
    this.#budgetOf = options.budgetOf;
    this.#pricesOf = options.pricesOf;
    const span = options.spanSeconds ?? 60;
    this.#spanSeconds = span;
    this.#shapes = new WindowShapeLearner(span * 1000);
    this.#window = options.bucketWindow ?? ((perMinute) => bucketWindow(perMinute, span));
    this.#telemetry = options.telemetry;
    this.#heartbeat = setInterval(() => void this.#renewLeases(), Math.max(100, this.#leaseMs / 3));
    this.#heartbeat.unref();
  }

  /** The limits and price a lane is held to, as this process is configured. */
  limitsOf(lane: LlmLane): LaneLimits {
    return this.#limits.resolve(lane.provider, lane.model);
  }

  async acquire(request: LlmCallRequest): Promise<LlmPermit> {
    if (this.#closed) throw new Error('the LLM governor is closed');
    const { signal, attribution } = request;
    signal.throwIfAborted();
    const started = Date.now();
    const identity = laneIdentity(request.lane, this.#secret);
    const { parameters } = request;
    const maxTokens =
      parameters?.maxTokens === undefined ? request.estimate.maxTokens : parameters.maxTokens;
    // One GenAI span per governed call, from the wait to the settle, child of the active span.
    const span = (this.#telemetry ?? processTelemetry()).startLlmCall({
      baseUrl: identity.provider,
      model: identity.model,
      ...(maxTokens !== null && { maxTokens }),
      ...(parameters?.temperature !== undefined && { temperature: parameters.temperature }),
      ...(parameters?.topP !== undefined && { topP: parameters.topP }),
      keyFingerprint: identity.keyFingerprint,
      ...(attribution !== undefined && { attribution }),
      ...(request.inputMessages !== undefined && { inputMessages: request.inputMessages }),
    });
    try {
      return await this.#admitCall(request, identity, span, started);
    } catch (error) {
      span.end({ outcome: 'refused', errorType: errorTypeOf(error) });
      throw error;
    }
  }

  async #admitCall(
    request: LlmCallRequest,
    identity: LaneIdentity,
    span: LlmCallSpan,
    started: number,
  ): Promise<LlmPermit> {
    const { attribution } = request;
    const budget =
      request.budget ??
      (attribution !== undefined ? await this.#budgetOf?.(attribution) : undefined);
    const limits = await this.#limitsFor(identity, attribution);
    const cap = limits.maxConcurrency ?? this.#defaultCap;
    const estimatedTokens = estimatedTotal(request.estimate);
    const estimatedUsd = costOf(
      limits.price,
      request.estimate.promptTokens,
      request.estimate.maxTokens,
    );
    const budgeted =
      budget !== undefined && (budget.taskUsd !== undefined || budget.runUsd !== undefined);
    if (budgeted && attribution === undefined)
      throw new Error('a spend limit needs an attribution (run, task, attempt)');
    if (budgeted && estimatedUsd === null) throw new PriceUnknownError(identity.model);

    await this.#register(identity, limits, cap);
    await this.#noteRunLane(identity, attribution);
    await this.#checkRunning(attribution);
    if (budgeted) await this.#checkBudget(attribution!, budget, estimatedUsd ?? 0);

    const { lease, charges, handedOut } = await this.#takeSlots(
      identity,
      limits,
      cap,
      request,
      estimatedTokens,
    );
    try {
      // Waiting may have taken long: the attempt may have ended and other calls spent the money.
      await this.#checkRunning(attribution);
      if (budgeted) await this.#checkBudget(attribution!, budget, estimatedUsd ?? 0);
    } catch (error) {
      await this.#dropLease(identity.id, lease.id);
      await this.#refundTokens(identity, charges, charges.tokens).catch(() => undefined);
      throw error;
    } finally {
      handedOut();
    }

    let settled: Promise<LlmSettlement> | undefined;
    const waitedMs = Date.now() - started;
    return {
      lane: identity,
      estimatedTokens,
      waitedMs,
      settle: (outcome) =>
        (settled ??= this.#settle(
          identity,
          limits,
          cap,
          request,
          lease.id,
          lease.wave,
          charges,
          outcome,
          budget,
        ).then(
          (settlement) => {
            span.end(callEnd(outcome, waitedMs, settlement));
            return settlement;
          },
          (error: unknown) => {
            span.end(callEnd(outcome, waitedMs, undefined));
            throw error;
          },
        )),
    };
  }

  /** This process's limits for the lane, at the price of the call's run where the run has one. */
  async #limitsFor(
    identity: LaneIdentity,
    attribution: LlmAttribution | undefined,
  ): Promise<LaneLimits> {
    const limits = this.#limits.resolve(identity.provider, identity.model);
    const runPrices = attribution !== undefined ? await this.#pricesOf?.(attribution) : undefined;
    const runPrice = runPrices?.[identity.model];
    return runPrice === undefined ? limits : { ...limits, price: runPrice };
  }

  /** Acquire, send, settle: `send` returns what came of the call and the value to hand back. */
  async call<T>(
    request: LlmCallRequest,
    send: (permit: LlmPermit) => Promise<{ outcome: LlmOutcome; value: T }>,
  ): Promise<{ value: T; settlement: LlmSettlement }> {
    const permit = await this.acquire(request);
    let result: { outcome: LlmOutcome; value: T };
    try {
      result = await send(permit);
    } catch (error) {
      await permit.settle({ kind: 'failed', errorType: errorTypeOf(error) }).catch(() => undefined);
      throw error;
    }
    return { value: result.value, settlement: await permit.settle(result.outcome) };
  }

  async #register(identity: LaneIdentity, limits: LaneLimits, cap: number): Promise<void> {
    // Registered again when a run's price first prices a lane this process registered unpriced.
    const priced = this.#registered.get(identity.id);
    if (priced === true || (priced === false && limits.price === undefined)) return;
    const record: LaneRecord = {
      provider: identity.provider,
      keyFingerprint: identity.keyFingerprint,
      model: identity.model,
      configured: {
        ...(limits.requestsPerMinute !== undefined && {
          requestsPerMinute: limits.requestsPerMinute,
        }),
        ...(limits.tokensPerMinute !== undefined && { tokensPerMinute: limits.tokensPerMinute }),
        maxConcurrency: cap,
        priced: limits.price !== undefined,
      },
    };
    await this.#store.run('register the lane', () =>
      this.#store.redis.hset(this.#store.lanesKey(), identity.id, JSON.stringify(record)),
    );
    this.#registered.set(identity.id, limits.price !== undefined);
    this.#logger?.info(
      {
        provider: identity.provider,
        key: identity.keyFingerprint,
        model: identity.model,
        ...record.configured,
      },
      'LLM lane governed',
    );
  }

  /** The run's spend record names the lanes its calls went through, for `status RUN` to show only those. */
  async #noteRunLane(
    identity: LaneIdentity,
    attribution: LlmAttribution | undefined,
  ): Promise<void> {
    if (attribution === undefined) return;
    const key = this.#store.runSpendKey(attribution.runId);
    const noted = `${key} ${identity.id}`;
    if (this.#notedRunLanes.has(noted)) return;
    await this.#store.run("note the run's lane", () =>
      this.#store.redis
        .multi()
        .hset(key, `${RUN_LANE_FIELD}${identity.id}`, 1)
        .expire(key, SPEND_TTL_S)
        .exec(),
    );
    this.#notedRunLanes.add(noted);
    if (this.#notedRunLanes.size > 10_000)
      this.#notedRunLanes.delete(this.#notedRunLanes.values().next().value as string);
  }

  async #checkRunning(attribution: LlmAttribution | undefined): Promise<void> {
    if (attribution === undefined || this.#isAttemptRunning === undefined) return;
    if (!(await this.#isAttemptRunning(attribution))) throw new AttemptNotRunningError(attribution);
  }

  async #checkBudget(attribution: LlmAttribution, budget: LlmBudget, estimatedUsd: number) {
    const runKey = this.#store.runSpendKey(attribution.runId);
    const [[runNano, fencedAt], [taskNano, attemptNano]] = await this.#store.run(
      'read the spend',
      () =>
        Promise.all([
          this.#store.redis.hmget(runKey, 'nanoUsd', 'fencedAt'),
          this.#store.redis.hmget(
            this.#store.taskSpendKey(attribution.runId, attribution.taskId),
            'nanoUsd',
            `attempt:${attribution.attempt}`,
          ),
        ]),
    );
    const attemptSpent = Number(attemptNano ?? 0) / NANO;
    const refuse = (
      scope: BudgetScope,
      limit: number | undefined,
      spentNano: string | null | undefined,
      fenced = false,
    ): void => {
      if (limit === undefined) return;
      const spent = Number(spentNano ?? 0) / NANO;
      if (fenced || spent + estimatedUsd > limit)
        throw new BudgetExceededError(
          scope,
          limit,
          spent,
          estimatedUsd,
          attribution,
          attemptSpent,
          fenced,
        );
    };
    refuse('task', budget.taskUsd, taskNano);
    try {
      refuse('run', budget.runUsd, runNano, fencedAt !== null && fencedAt !== undefined);
    } catch (error) {
      // The first refusal fences the run: from now on every call of it is refused, whatever it costs.
      await this.#fenceRun(runKey);
      throw error;
    }
  }

  /** Marks a run stopped at its spend limit (kept beside its spend; the first mark stays). */
  async #fenceRun(runKey: string): Promise<void> {
    await this.#store.run('fence the run', () =>
      this.#store.redis.hsetnx(runKey, 'fencedAt', Date.now()),
    );
  }

  /** Waits out a hold-off, with a little jitter so a fleet does not wake in one instant. */
  #holdOff(ms: number, signal: AbortSignal): Promise<void> {
    return abortable(ms + Math.random() * Math.min(100, ms / 10), signal);
  }

  /** This process's line for the lane: its waiters are admitted together (see `AdmissionLine`). */
  #lineOf(identity: LaneIdentity, limits: LaneLimits, cap: number): AdmissionLine {
    const existing = this.#lines.get(identity.id);
    if (existing !== undefined) return existing;
    // A declared request limit paces the calls itself: the target starts where its whole burst fits.
    const initialTarget =
      limits.requestsPerMinute === undefined
        ? this.#initial
        : Math.max(
            this.#initial,
            requestWindowOf(limits.requestsPerMinute, limits.window, this.#spanSeconds).limit,
          );
    const line = new AdmissionLine({
      store: this.#store,
      laneId: identity.id,
      provider: identity.provider,
      leaseMs: this.#leaseMs,
      cap,
      initialTarget,
      pollMs: this.#pollMs,
      // Requests: the provider's burst taken as it grants it, in the shape told, else the shape
      // its answers told (learned), else the sliding log (safe on every shape).
      requestWindow: (learned) => {
        const rpm = limits.requestsPerMinute ?? (learned.learnedRpm || undefined);
        const shape = limits.window ?? learned.learnedWindow;
        return rpm === undefined ? undefined : requestWindowOf(rpm, shape, this.#spanSeconds);
      },
      newLeaseId: () => `${this.#processId}:${(this.#leaseCount += 1)}`,
      holdLease: (lease) => this.#holdLease(identity.id, lease),
      dropLease: (lease) => this.#dropLease(identity.id, lease),
      holdOffMs: (ms) => ms + Math.random() * Math.min(100, ms / 10),
    });
    this.#lines.set(identity.id, line);
    return line;
  }

  /**
   * A lease, a request counted against the provider's limit (through the lane's line) and the
   * call's tokens charged: what a call takes before it goes. On failure the lease is given back.
   */
  async #takeSlots(
    identity: LaneIdentity,
    limits: LaneLimits,
    cap: number,
    request: LlmCallRequest,
    estimatedTokens: number,
  ): Promise<{ lease: HeldLease; charges: TokenCharge; handedOut: () => void }> {
    const line = this.#lineOf(identity, limits, cap);
    const maxHoldOff = request.maxHoldOffMs ?? 60_000;
    const tokenWindow = (learnedTpm: number) => {
      const tpm = limits.tokensPerMinute ?? (learnedTpm || undefined);
      return tpm === undefined ? undefined : this.#window(tpm);
    };
    let lease: HeldLease | undefined;
    let handedOut = (): void => undefined;
    try {
      for (;;) {
        // Tokens first looked at without taking them: a request slot is not spent on a call that cannot go.
        const before = tokenWindow(line.learned.learnedTpm);
        if (before !== undefined) {
          const left = await this.#store.remaining('tpm', before, identity.id);
          if (left.points < Math.min(estimatedTokens, before.points)) {
            await abortable(left.msLeft + 1, request.signal);
            continue;
          }
        }
        const ticket = await line.take(request.signal, maxHoldOff, lease);
        lease = ticket.lease;
        handedOut = ticket.handedOut;
        if (ticket.goInMs > 0) {
          // Sleeping till its reserved refill: the line need not wait for it.
          handedOut();
          await abortable(ticket.goInMs, request.signal);
        }
        const tokens = tokenWindow(ticket.learnedTpm);
        // A call larger than one window's share takes the whole window.
        const charge = tokens === undefined ? 0 : Math.min(estimatedTokens, tokens.points);
        let chargedAt = Date.now();
        let ttlMs = 0;
        if (tokens !== undefined) {
          const taken = await this.#store.consume('tpm', tokens, identity.id, charge);
          if (!taken.ok) {
            // Another process took the room first; the request slot stays spent (never over-admits).
            handedOut();
            await abortable(taken.waitMs + 1, request.signal);
            continue;
          }
          chargedAt = Date.now();
          ttlMs = taken.ttlMs;
        }
        // A worker may have published a Retry-After while this call waited (the line's script
        // looked, in the same instant, when the call was let go at once).
        if (!ticket.checkedHoldOff || tokens !== undefined || ticket.goInMs > 0)
          await this.#waitOutHoldOff(identity, request, maxHoldOff);
        return { lease, charges: { window: tokens, tokens: charge, chargedAt, ttlMs }, handedOut };
      }
    } catch (error) {
      handedOut();
      if (lease !== undefined) await this.#dropLease(identity.id, lease.id);
      throw error;
    }
  }

  async #waitOutHoldOff(identity: LaneIdentity, request: LlmCallRequest, maxHoldOff: number) {
    for (;;) {
      const held = await this.#store.run('read the hold-off', () =>
        this.#store.redis.llmGovHeld(this.#store.laneKey(identity.id)),
      );
      if (held <= 0) return;
      if (held > maxHoldOff) throw new RateLimitedTooLongError(held, identity.provider);
      await this.#holdOff(held, request.signal);
    }
  }

  #holdLease(laneId: string, lease: string): void {
    let held = this.#leases.get(laneId);
    if (held === undefined) this.#leases.set(laneId, (held = new Map()));
    held.set(lease, Date.now());
  }

  async #dropLease(laneId: string, lease: string): Promise<void> {
    this.#leases.get(laneId)?.delete(lease);
    await this.#store
      .run('release a lease', () =>
        this.#store.redis.llmGovRelease(this.#store.leaseKey(laneId), lease),
      )
      .catch(() => undefined); // an unreleased lease expires by itself
  }

  async #renewLeases(): Promise<void> {
    for (const [laneId, leases] of this.#leases) {
      for (const [lease, takenAt] of leases)
        if (Date.now() - takenAt > this.#maxPermitMs) {
          leases.delete(lease);
          this.#logger?.warn(
            { lane: laneId },
            'an LLM permit was never settled: its lease is let go',
          );
        }
      if (leases.size === 0) continue;
      try {
        await this.#store.run('renew the leases', () =>
          this.#store.redis.llmGovRenew(
            this.#store.leaseKey(laneId),
            this.#leaseMs,
            ...leases.keys(),
          ),
        );
      } catch (error) {
        this.#logger?.warn(
          { err: error },
          'could not renew LLM leases: they expire if Redis stays away',
        );
      }
    }
  }

  /** Gives back tokens charged in a window that is still open. */
  async #refundTokens(identity: LaneIdentity, charge: TokenCharge, points: number) {
    if (charge.window === undefined || points <= 0) return;
    await this.#store.refund(
      'tpm',
      charge.window,
      identity.id,
      points,
      charge.ttlMs - (Date.now() - charge.chargedAt),
    );
  }

  async #settle(
    identity: LaneIdentity,
    limits: LaneLimits,
    cap: number,
    request: LlmCallRequest,
    lease: string,
    wave: number,
    charge: TokenCharge,
    outcome: LlmOutcome,
    budget: LlmBudget | undefined,
  ): Promise<LlmSettlement> {
    this.#leases.get(identity.id)?.delete(lease);
    const hints = readRateHints(outcome.headers);
    const ok = outcome.kind === 'ok';
    const usage = ok ? outcome.usage : undefined;
    const tokensIn = ok ? (usage?.promptTokens ?? request.estimate.promptTokens) : 0;
    const tokensOut = ok ? (usage?.completionTokens ?? request.estimate.maxTokens) : 0;
    const price: ModelPrice | undefined = limits.price;
    const cost = ok ? costOf(price, tokensIn, tokensOut) : 0;
    const nano = Math.round((cost ?? 0) * NANO);
    const hold = outcome.kind === 'rate-limited' ? holdOffMs(hints, this.#fallbackMs) : 0;
    const minute = Math.floor(Date.now() / 60_000);
    const learned =
      ok && limits.window === undefined ? this.#learnShape(identity, charge, hints) : undefined;
    await this.#store.run('settle the call', () =>
      this.#store.redis.llmGovSettle(
        this.#store.laneKey(identity.id),
        this.#store.minuteKey(identity.id, minute),
        this.#store.leaseKey(identity.id),
        lease,
        outcome.kind === 'ok' ? 'ok' : outcome.kind === 'rate-limited' ? 'limited' : 'failed',
        wave,
        cap,
        this.#factor,
        Math.ceil(hold),
        tokensIn + tokensOut,
        nano,
        limits.requestsPerMinute === undefined ? (hints.limitRequests ?? 0) : 0,
        limits.tokensPerMinute === undefined ? (hints.limitTokens ?? 0) : 0,
        hints.remainingRequests ?? -1,
        hints.resetRequestsMs ?? 0,
        learned?.shape ?? '',
        learned?.resetAtMs === undefined ? 0 : Math.round(learned.resetAtMs - Date.now()),
        this.#spanSeconds * 1000,
      ),
    );
    if (hold > 0)
      this.#logger?.warn(
        {
          provider: identity.provider,
          key: identity.keyFingerprint,
          model: identity.model,
          status: 'status' in outcome ? outcome.status : undefined,
          holdOffMs: Math.ceil(hold),
        },
        'LLM provider rate-limited the fleet: every worker holds off',
      );

    // Tokens: a settled call keeps its real count in the window it was charged to.
    const used = tokensIn + tokensOut;
    if (charge.window !== undefined) {
      if (used > charge.tokens)
        await this.#store.penalize('tpm', charge.window, identity.id, used - charge.tokens);
      else await this.#refundTokens(identity, charge, charge.tokens - used);
    }

    let budgetReached: BudgetScope | undefined;
    const attribution = request.attribution;
    if (attribution !== undefined && ok) {
      const [runNano, taskNano] = await this.#store.run('record the spend', () =>
        this.#store.redis.llmGovSpend(
          this.#store.runSpendKey(attribution.runId),
          this.#store.taskSpendKey(attribution.runId, attribution.taskId),
          nano,
          tokensIn,
          tokensOut,
          `attempt:${attribution.attempt}`,
          cost === null ? 1 : 0,
          SPEND_TTL_S,
          identity.id,
        ),
      );
      if (budget?.taskUsd !== undefined && Number(taskNano) / NANO >= budget.taskUsd)
        budgetReached = 'task';
      else if (budget?.runUsd !== undefined && Number(runNano) / NANO >= budget.runUsd) {
        budgetReached = 'run';
        await this.#fenceRun(this.#store.runSpendKey(attribution.runId));
      }
    }
    return {
      tokensIn,
      tokensOut,
      costUsd: cost,
      priceKnown: price !== undefined,
      ...(budgetReached !== undefined && { budgetReached }),
      ...(hold > 0 && { holdOffMs: Math.ceil(hold) }),
    };
  }

  /** The window shape this answer, with the lane's last ones, tells (undefined: none yet). */
  #learnShape(identity: LaneIdentity, charge: TokenCharge, hints: ProviderRateHints) {
    const { limitRequests, remainingRequests, resetRequestsMs } = hints;
    if (limitRequests === undefined || remainingRequests === undefined) return undefined;
    if (resetRequestsMs === undefined) return undefined;
    return this.#shapes.observe(identity.id, {
      // When the buckets let the call go: no later than it was sent (a sliding log's reset is a span after).
      sentAt: charge.chargedAt,
      receivedAt: Date.now(),
      limitPerMinute: limitRequests,
      remaining: remainingRequests,
      resetMs: resetRequestsMs,
    });
  }

  /** Spend of a run across the fleet, as the governor counted it. */
  async runSpend(runId: string): Promise<SpendTotals> {
    return this.#spend(this.#store.runSpendKey(runId));
  }

  /**
   * A run's own calls on each lane it used (lane id → totals), as the governor counted them: a
   * lane is shared by every run on its key and model, and its snapshot counts them all.
   */
  async runLaneSpend(runId: string): Promise<ReadonlyMap<string, RunLaneSpend>> {
    const key = this.#store.runSpendKey(runId);
    const fields = await this.#store.run('read the spend', () => this.#store.redis.hgetall(key));
    const byLane = new Map<string, Record<string, string>>();
    for (const [field, value] of Object.entries(fields)) {
      if (!field.startsWith('lane:')) continue;
      // Lane ids hold one ':' (fingerprint:model, the model URI-encoded): the total is after the last.
      const cut = field.lastIndexOf(':');
      const laneId = field.slice('lane:'.length, cut);
      const totals = byLane.get(laneId) ?? {};
      totals[field.slice(cut + 1)] = value;
      byLane.set(laneId, totals);
    }
    return new Map(
      [...byLane].map(([laneId, totals]) => {
        const { usd, tokensIn, tokensOut, calls, unpricedCalls } = spendOf(totals);
        return [laneId, { usd, tokensIn, tokensOut, calls, unpricedCalls }];
      }),
    );
  }

  async taskSpend(
    runId: string,
    taskId: string,
  ): Promise<SpendTotals & { byAttempt: Record<number, number> }> {
    const key = this.#store.taskSpendKey(runId, taskId);
    const fields = await this.#store.run('read the spend', () => this.#store.redis.hgetall(key));
    const byAttempt: Record<number, number> = {};
    for (const [field, value] of Object.entries(fields))
      if (field.startsWith('attempt:')) byAttempt[Number(field.slice(8))] = Number(value) / NANO;
    return { ...spendOf(fields), byAttempt };
  }

  async #spend(key: string): Promise<SpendTotals> {
    return spendOf(await this.#store.run('read the spend', () => this.#store.redis.hgetall(key)));
  }

  /**
   * The Redis keys `snapshot()` reads for these lanes at this minute (and `runSpend(runId)` for a
   * run), so a viewer can say where its numbers come from.
   */
  keysRead(laneIds: readonly string[], runId?: string, at = Date.now()): string[] {
    const store = this.#store;
    const minute = Math.floor(at / 60_000);
    return [
      store.lanesKey(),
      ...laneIds.flatMap((laneId) => [
        store.laneKey(laneId),
        store.leaseKey(laneId),
        store.minuteKey(laneId, minute),
        store.minuteKey(laneId, minute - 1),
      ]),
      ...(runId === undefined ? [] : [store.runSpendKey(runId)]),
    ];
  }

  /** Every lane the fleet has used, with its limits, rates, target, in-flight calls, hold-off and spend. */
  async snapshot(): Promise<GovernorSnapshot> {
    const store = this.#store;
    const lanes = await store.run('read the lanes', () => store.redis.hgetall(store.lanesKey()));
    const minute = Math.floor(Date.now() / 60_000);
    const elapsed = (Date.now() % 60_000) / 60_000;
    const out: LaneSnapshot[] = [];
    for (const [laneId, json] of Object.entries(lanes)) {
      const record = JSON.parse(json) as LaneRecord;
      const [state, [now, inFlight], current, previous] = await store.run('read a lane', () =>
        Promise.all([
          store.redis.hgetall(store.laneKey(laneId)),
          store.redis.llmGovLaneState(store.laneKey(laneId), store.leaseKey(laneId)),
          store.redis.hgetall(store.minuteKey(laneId, minute)),
          store.redis.hgetall(store.minuteKey(laneId, minute - 1)),
        ]),
      );
      const sliding = (field: string): number =>
        Math.round(Number(current[field] ?? 0) + Number(previous[field] ?? 0) * (1 - elapsed));
      const learnedRpm = Number(state.learnedRpm ?? 0);
      const learnedTpm = Number(state.learnedTpm ?? 0);
      out.push({
        laneId,
        provider: record.provider,
        keyFingerprint: record.keyFingerprint,
        model: record.model,
        limits: {
          requestsPerMinute: {
            ...(record.configured.requestsPerMinute !== undefined && {
              configured: record.configured.requestsPerMinute,
            }),
            ...(learnedRpm > 0 && { learned: learnedRpm }),
          },
          tokensPerMinute: {
            ...(record.configured.tokensPerMinute !== undefined && {
              configured: record.configured.tokensPerMinute,
            }),
            ...(learnedTpm > 0 && { learned: learnedTpm }),
          },
          maxConcurrency: record.configured.maxConcurrency,
        },
        requestsPerMinute: sliding('requests'),
        tokensPerMinute: sliding('tokens'),
        rateLimitedPerMinute: sliding('rateLimited'),
        totals: {
          requests: Number(state.requests ?? 0),
          tokens: Number(state.tokens ?? 0),
          rateLimited: Number(state.rateLimited ?? 0),
        },
        concurrency: { target: Number(state.target ?? this.#initial), inFlight: Number(inFlight) },
        heldOffForMs: Math.max(0, Number(state.closedUntil ?? 0) - Number(now)),
        spentUsd: Number(state.spentNanoUsd ?? 0) / NANO,
        priceKnown: record.configured.priced,
      });
    }
    return { at: Date.now(), lanes: out };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#heartbeat);
    await this.#store.close();
  }
}

interface TokenCharge {
  readonly window: BucketWindow | undefined;
  readonly tokens: number;
  readonly chargedAt: number;
  readonly ttlMs: number;
}

/** How a settled call ends its GenAI span: real usage only (an estimate is not usage), the cost counted. */
function callEnd(
  outcome: LlmOutcome,
  waitedMs: number,
  settlement: LlmSettlement | undefined,
): LlmCallEnd {
  const common = {
    waitedMs,
    ...(settlement !== undefined && { costUsd: settlement.costUsd }),
  };
  if (outcome.kind === 'ok')
    return {
      outcome: 'ok',
      ...common,
      ...(outcome.usage !== undefined && {
        inputTokens: outcome.usage.promptTokens,
        outputTokens: outcome.usage.completionTokens,
      }),
      ...(outcome.responseModel !== undefined && { responseModel: outcome.responseModel }),
      ...(outcome.responseId !== undefined && { responseId: outcome.responseId }),
      ...(outcome.finishReasons !== undefined && { finishReasons: outcome.finishReasons }),
    };
  if (outcome.kind === 'rate-limited')
    return { outcome: 'rate-limited', ...common, errorType: String(outcome.status) };
  // The caller's cause first: a 200 whose body was unreadable is not a "200" error.
  const errorType =
    outcome.errorType ?? (outcome.status !== undefined ? String(outcome.status) : undefined);
  return { outcome: 'failed', ...common, ...(errorType !== undefined && { errorType }) };
}

function spendOf(fields: Record<string, string>): SpendTotals {
  return {
    usd: Number(fields.nanoUsd ?? 0) / NANO,
    tokensIn: Number(fields.tokensIn ?? 0),
    tokensOut: Number(fields.tokensOut ?? 0),
    calls: Number(fields.calls ?? 0),
    unpricedCalls: Number(fields.unpricedCalls ?? 0),
    fencedAt: fields.fencedAt === undefined ? null : Number(fields.fencedAt),
    laneIds: Object.keys(fields)
      .filter((field) => field.startsWith(RUN_LANE_FIELD))
      .map((field) => field.slice(RUN_LANE_FIELD.length)),
  };
}
