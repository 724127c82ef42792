import { TransientError } from '@benchfleet/core';

/** Asks one part of a stack whether it works: null when it does, else why not (its address and the cause). */
export type StackProbe = (signal: AbortSignal) => Promise<string | null>;

export type StackPart = 'desktop' | 'agent';

/** A part of the stack judged gone while a task ran, and the evidence. */
export interface StackLoss {
  part: StackPart;
  /** The last failed probe's reason (the part's address and the cause). */
  reason: string;
  /** What the judgement rests on, e.g. `3 probes failed in a row over 21 s`. */
  evidence: string;
  /** Probes that failed in a row. */
  failures: number;
}

/** The stack's desktop died while a task ran on it: the attempt is an infrastructure fault, retried. */
export class DesktopLostError extends TransientError {
  override readonly name = 'DesktopLostError';
}

export interface StackWatchOptions {
  desktop?: StackProbe;
  agent?: StackProbe;
  /** Pause between the end of one round of probes and the start of the next. */
  intervalMs?: number;
  /** A part is gone when its probes have failed, with no pass between, for at least this long… */
  windowMs?: number;
  /** …and at least this many times. */
  failures?: number;
}

/**
 * How a dying desktop is told from a slow one, while a task runs. Every 5 s the desktop (and the
 * Bytebot agent) is probed; a probe fails when it gets no answer within its deadline (10 s for the
 * desktop) or an error. A slow desktop answers within the deadline and passes; a blip (one failed
 * probe, bytebotd restarted by its supervisor) is followed by a pass, which starts the count again.
 * A part is gone when its probes failed for 20 s and at least 3 times in a row: about 20 s for a
 * desktop that refuses connections, about 40 s for one that accepts them and never answers. The
 * agent's own tool results are the other evidence (see the episode): two computer actions in a row
 * that came back without a screenshot, then one failed probe, and the desktop is gone at once.
 */
const STACK_WATCH_DEFAULTS = { intervalMs: 5_000, windowMs: 20_000, failures: 3 } as const;

interface Streak {
  failures: number;
  since: number;
  reason: string;
}

/** Probes a stack's desktop and agent in the background while one task runs on it. */
export class StackWatch {
  private readonly streaks = new Map<StackPart, Streak>();
  private readonly intervalMs: number;
  private readonly windowMs: number;
  private readonly failures: number;
  private readonly stopped = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private loss: StackLoss | null = null;

  constructor(
    private readonly options: StackWatchOptions,
    private readonly onLost: (loss: StackLoss) => void,
  ) {
    this.intervalMs = options.intervalMs ?? STACK_WATCH_DEFAULTS.intervalMs;
    this.windowMs = options.windowMs ?? STACK_WATCH_DEFAULTS.windowMs;
    this.failures = options.failures ?? STACK_WATCH_DEFAULTS.failures;
  }

  get lost(): StackLoss | null {
    return this.loss;
  }

  get watchesDesktop(): boolean {
    return this.options.desktop !== undefined;
  }

  start(): void {
    if (this.options.desktop || this.options.agent) this.schedule();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.stopped.abort();
  }

  /** One probe of the desktop now (the agent's results suggest it is gone); it counts like any other. */
  async probeDesktopNow(): Promise<string | null> {
    return this.options.desktop ? this.probe('desktop', this.options.desktop) : null;
  }

  private schedule(): void {
    this.timer = setTimeout(() => void this.round(), this.intervalMs);
    this.timer.unref();
  }

  private async round(): Promise<void> {
    if (this.options.desktop) await this.probe('desktop', this.options.desktop);
    if (this.options.agent) await this.probe('agent', this.options.agent);
    if (!this.stopped.signal.aborted && !this.loss) this.schedule();
  }

  private async probe(part: StackPart, probe: StackProbe): Promise<string | null> {
    const startedAt = Date.now();
    const problem = await probe(this.stopped.signal).catch((error: unknown) =>
      error instanceof Error ? error.message : String(error),
    );
    if (this.stopped.signal.aborted || this.loss) return problem;
    if (problem === null) {
      this.streaks.delete(part);
      return null;
    }
    const streak = this.streaks.get(part) ?? { failures: 0, since: startedAt, reason: problem };
    streak.failures++;
    streak.reason = problem;
    this.streaks.set(part, streak);
    const seconds = (Date.now() - streak.since) / 1000;
    if (streak.failures >= this.failures && seconds * 1000 >= this.windowMs) {
      this.declare({
        part,
        reason: problem,
        evidence: `${streak.failures} probes failed in a row over ${Math.round(seconds)} s`,
        failures: streak.failures,
      });
    }
    return problem;
  }

  /** Declares a loss found by other evidence (the agent's tool results) and a failed probe. */
  declare(loss: StackLoss): void {
    if (this.loss) return;
    this.loss = loss;
    this.onLost(loss);
  }
}
