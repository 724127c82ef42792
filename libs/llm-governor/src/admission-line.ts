import { RateLimitedTooLongError } from './governor-errors.js';
import type { GovernorStore } from './governor-store.js';
import type { LimitWindow, RequestWindow } from './llm-limits.js';

/** What the lane has learned, as the last lease taken read it (0: nothing learned). */
interface LaneLearned {
  readonly learnedRpm: number;
  readonly learnedTpm: number;
  readonly learnedWindow: LimitWindow | undefined;
}

/** A lease under the fleet's concurrency target, and the wave of decreases it was taken in. */
export interface HeldLease {
  readonly id: string;
  readonly wave: number;
}

/** A waiter let through the line: its lease, and its request counted against the provider's limit. */
interface AdmissionTicket extends LaneLearned {
  readonly lease: HeldLease;
  /** When it may go: 0, or a bucket's refill reserved that far ahead (it goes then, without asking again). */
  readonly goInMs: number;
  /** The hold-off was looked at in the instant it was let go: no need to look again. */
  readonly checkedHoldOff: boolean;
  /**
   * Call once the call is handed to its sender (or sleeps till its go-in, or comes back, or
   * fails): the line's next round waits for every call of the last to get this far.
   */
  readonly handedOut: () => void;
}

/** What the line needs of the governor that owns it (one line per lane per process). */
interface AdmissionLineOptions {
  readonly store: GovernorStore;
  readonly laneId: string;
  readonly provider: string;
  readonly leaseMs: number;
  readonly cap: number;
  readonly initialTarget: number;
  readonly pollMs: number;
  /** The request window of the lane's limits, told or as learned (undefined: no limit known). */
  readonly requestWindow: (learned: LaneLearned) => RequestWindow | undefined;
  readonly newLeaseId: () => string;
  /** The governor renews the leases it holds; the line hands each it takes over at once. */
  readonly holdLease: (leaseId: string) => void;
  readonly dropLease: (leaseId: string) => Promise<void>;
  /** How long to wait out a hold-off of this many ms (with jitter). */
  readonly holdOffMs: (ms: number) => number;
}

interface Waiter {
  readonly signal: AbortSignal;
  readonly maxHoldOffMs: number;
  lease: HeldLease | undefined;
  done: boolean;
  readonly resolve: (ticket: AdmissionTicket) => void;
  readonly reject: (error: unknown) => void;
  readonly onAbort: () => void;
}

/**
 * The most waiters one round lets go. A request is counted when it is let go and reaches the
 * provider when its process gets to send it: a loaded process (load 45 on 2 cores) sent the last
 * of 64 let go at once more than the 2 s grace after it was counted, and a sliding log refused
 * 6 % of the calls. Rounds of 16, each after the last one's calls were handed out, keep that lag
 * to a fraction of the grace at a few round trips per burst.
 */
const MAX_BATCH = 16;

const NONE_LEARNED: LaneLearned = { learnedRpm: 0, learnedTpm: 0, learnedWindow: undefined };
const LEARNED_WINDOWS: readonly (LimitWindow | undefined)[] = [
  undefined,
  'sliding',
  'fixed',
  'bucket',
];

/**
 * One process's line for one lane. Its waiters are admitted together: one script call takes
 * leases for every waiter that has none (as many as the concurrency target leaves room for), one
 * more counts requests for every waiter with a lease (as many as the provider's window allows),
 * and the first ones go. A burst of N waiters costs two Redis round trips, not 2N one waiter at
 * a time (issue 33: 600 waiters through the old line were seconds at load 20–50). The rest wait
 * for the instant the window frees its next slot, and ask again together. Safety is the
 * scripts': never more than the limit in any window, whatever the batch.
 */
export class AdmissionLine {
  readonly #options: AdmissionLineOptions;
  readonly #waiters: Waiter[] = [];
  #learned: LaneLearned = NONE_LEARNED;
  #draining = false;
  /** The calls the last round let go that are not yet handed out. */
  #unsent = 0;
  #allSent: (() => void) | undefined;

  constructor(options: AdmissionLineOptions) {
    this.#options = options;
  }

  /** What the lane had learned at the last lease taken (for a token pre-check before the line). */
  get learned(): LaneLearned {
    return this.#learned;
  }

  /**
   * Waits its turn: a lease (unless it holds one already: a call whose tokens did not fit comes
   * back for another request) and one request counted. Aborting stops the waiting; a lease the
   * line took for it is given back.
   */
  take(signal: AbortSignal, maxHoldOffMs: number, lease?: HeldLease): Promise<AdmissionTicket> {
    signal.throwIfAborted();
    return new Promise<AdmissionTicket>((resolve, reject) => {
      const waiter: Waiter = {
        signal,
        maxHoldOffMs,
        lease,
        done: false,
        resolve: (ticket) => {
          if (waiter.done) return;
          waiter.done = true;
          signal.removeEventListener('abort', waiter.onAbort);
          resolve(ticket);
        },
        reject: (error) => {
          if (waiter.done) return;
          waiter.done = true;
          signal.removeEventListener('abort', waiter.onAbort);
          reject(error);
        },
        onAbort: () => this.#leave(waiter, signal.reason),
      };
      signal.addEventListener('abort', waiter.onAbort, { once: true });
      this.#waiters.push(waiter);
      if (!this.#draining) void this.#drain();
    });
  }

  /** Takes a waiter out of the line, failing it; a lease it holds is given back. */
  #leave(waiter: Waiter, error: unknown): void {
    const at = this.#waiters.indexOf(waiter);
    if (at >= 0) this.#waiters.splice(at, 1);
    if (waiter.lease !== undefined) void this.#options.dropLease(waiter.lease.id);
    waiter.reject(error);
  }

  async #drain(): Promise<void> {
    this.#draining = true;
    try {
      while (this.#waiters.length > 0) {
        try {
          await this.#round();
        } catch (error) {
          // Redis failed (past its deadline): every waiter's call fails as it would have alone.
          for (const waiter of [...this.#waiters]) this.#leave(waiter, error);
        }
      }
    } finally {
      this.#draining = false;
    }
  }

  /** One round: leases for those without, then requests for those with; waits when none can go. */
  async #round(): Promise<void> {
    const options = this.#options;
    let checkedHoldOff = false;
    const unleased = this.#waiters.filter((w) => w.lease === undefined).slice(0, MAX_BATCH);
    if (unleased.length > 0) {
      const ids = unleased.map(() => options.newLeaseId());
      const admitted = await options.store.admit(
        options.laneId,
        ids,
        options.leaseMs,
        options.cap,
        options.initialTarget,
      );
      if (admitted.kind === 'held') return this.#holdOff(admitted.waitMs);
      if (admitted.kind === 'leased') {
        this.#learned = {
          learnedRpm: admitted.learnedRpm,
          learnedTpm: admitted.learnedTpm,
          learnedWindow: LEARNED_WINDOWS[admitted.learnedWindow],
        };
        checkedHoldOff = true;
        for (let i = 0; i < admitted.granted; i += 1)
          this.#giveLease(unleased[i]!, { id: ids[i]!, wave: admitted.wave });
      }
    }
    const leased = this.#waiters.filter((w) => w.lease !== undefined).slice(0, MAX_BATCH);
    if (leased.length === 0) return sleep(options.pollMs * (0.5 + Math.random()));
    const window = options.requestWindow(this.#learned);
    if (window === undefined) {
      // No request limit known: a lease is all a call needs.
      for (const waiter of leased) this.#letGo(waiter, 0, checkedHoldOff);
      return this.#handedOut();
    }
    const taken = await options.store.takeRequests(
      window,
      options.laneId,
      leased.length,
      leased.length,
    );
    if (taken.held) return this.#holdOff(taken.waitMs);
    taken.goInMs.forEach((goInMs, i) => this.#letGo(leased[i]!, goInMs, goInMs === 0));
    await this.#handedOut();
    if (taken.goInMs.length < leased.length) await sleep(taken.waitMs + 1);
  }

  /** Resolves when every call the last round let go has been handed out (self-clocking). */
  async #handedOut(): Promise<void> {
    if (this.#unsent === 0) return;
    await new Promise<void>((resolve) => (this.#allSent = resolve));
  }

  #giveLease(waiter: Waiter, lease: HeldLease): void {
    // An aborted waiter (it left while the script ran) gives its new lease straight back.
    if (waiter.done) {
      void this.#options.dropLease(lease.id);
      return;
    }
    waiter.lease = lease;
    this.#options.holdLease(lease.id);
  }

  #letGo(waiter: Waiter, goInMs: number, checkedHoldOff: boolean): void {
    const at = this.#waiters.indexOf(waiter);
    if (at >= 0) this.#waiters.splice(at, 1);
    // Left while the script ran (its lease given back as it left): its request stays counted.
    if (waiter.done) return;
    this.#unsent += 1;
    let sent = false;
    const handedOut = (): void => {
      if (sent) return;
      sent = true;
      this.#unsent -= 1;
      if (this.#unsent === 0) this.#allSent?.();
    };
    waiter.resolve({ ...this.#learned, lease: waiter.lease!, goInMs, checkedHoldOff, handedOut });
  }

  /** The lane is held off (a Retry-After): waiters that would wait longer than they may fail now. */
  async #holdOff(waitMs: number): Promise<void> {
    for (const waiter of [...this.#waiters])
      if (waitMs > waiter.maxHoldOffMs)
        this.#leave(waiter, new RateLimitedTooLongError(waitMs, this.#options.provider));
    if (this.#waiters.length > 0) await sleep(this.#options.holdOffMs(waitMs));
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
