import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage, type Logger } from '@benchfleet/core';
import { runResetCommand, STACK_RESET_DEFAULTS, waitForStackReady } from './stack-reset.js';
import type { StackProbe } from './stack-watch.js';

/**
 * How a dead desktop is brought back. Three health checks in a row that find it down (10 s at the
 * default rhythm; a blip passes one) while no task runs on the stack, and the worker runs its
 * `--reset-command` and waits for bytebotd (and the VM server) as a graded task's reset does.
 * Three tries, 5 s and then 10 s apart; when none brings it back the stack is broken.
 */
export const STACK_REVIVAL_DEFAULTS = { failedChecks: 3, tries: 3, backoffMs: 5_000 } as const;

export interface StackRevivalOptions {
  readonly resetCommand: string;
  /** What must answer after the command: bytebotd, and the VM server of a grading stack. */
  readonly probes: Readonly<Record<string, StackProbe>>;
  readonly tries?: number;
  /** Before the second try; doubled before each later one. */
  readonly backoffMs?: number;
  readonly commandDeadlineMs?: number;
  readonly readyDeadlineMs?: number;
  readonly logger: Logger;
}

type RevivalState =
  | { readonly kind: 'up' }
  | { readonly kind: 'down'; readonly failedChecks: number }
  | { readonly kind: 'reviving'; readonly attempt: number; readonly problem: string }
  | { readonly kind: 'broken'; readonly reason: string };

/**
 * A worker's dead desktop, recreated by the worker itself (never left paused for a person). The
 * worker's health check tells it what each check found (`observe`); while it recreates the
 * desktop the check reports that (`reviving`), and a stack the command could not bring back is
 * broken: its worker stays paused, saying so (log, heartbeat, /healthz, `scheduler status`), takes
 * no task, and hands back any it had, so its tasks run on other stacks and none is scored here.
 * It is no longer broken once its desktop answers again (someone fixed it).
 */
export class StackRevival {
  #state: RevivalState = { kind: 'up' };
  readonly #tries: number;
  readonly #backoffMs: number;
  readonly #stopped = new AbortController();

  constructor(private readonly options: StackRevivalOptions) {
    this.#tries = options.tries ?? STACK_REVIVAL_DEFAULTS.tries;
    this.#backoffMs = options.backoffMs ?? STACK_REVIVAL_DEFAULTS.backoffMs;
  }

  /** While the desktop is being recreated, why the worker is not ready; null otherwise. */
  get reviving(): string | null {
    const state = this.#state;
    return state.kind === 'reviving' ? this.#recreating(state.problem, state.attempt) : null;
  }

  /**
   * What one health check found of the desktop (null: it answers) and whether a task runs on the
   * stack; returns what the check reports (null: ready). A desktop down for enough checks while
   * the stack is idle is recreated in the background.
   */
  observe(problem: string | null, busy: boolean): string | null {
    const state = this.#state;
    if (problem === null) {
      if (state.kind === 'broken')
        this.options.logger.info(
          "the stack's desktop answers again: the stack is no longer broken",
        );
      this.#state = { kind: 'up' };
      return null;
    }
    if (state.kind === 'broken') return state.reason;
    if (state.kind === 'reviving') return this.#recreating(state.problem, state.attempt);
    const failedChecks = state.kind === 'down' ? state.failedChecks + 1 : 1;
    // A task running on the stack ends by itself (the desktop watch, the hand-back) before a reset.
    if (failedChecks < STACK_REVIVAL_DEFAULTS.failedChecks || busy) {
      this.#state = { kind: 'down', failedChecks };
      return problem;
    }
    this.#state = { kind: 'reviving', attempt: 1, problem };
    void this.#revive(problem);
    return this.#recreating(problem, 1);
  }

  /** Stops a revival under way (its command is killed): the worker is closing. */
  stop(): void {
    this.#stopped.abort();
  }

  #recreating(problem: string, attempt: number): string {
    return `${problem}: recreating it with --reset-command (try ${attempt} of ${this.#tries})`;
  }

  async #revive(firstProblem: string): Promise<void> {
    const { logger } = this.options;
    const signal = this.#stopped.signal;
    let last = firstProblem;
    for (let attempt = 1; attempt <= this.#tries; attempt += 1) {
      this.#state = { kind: 'reviving', attempt, problem: firstProblem };
      logger.warn(
        { problem: last, try: attempt, tries: this.#tries },
        `the stack's desktop is down: ${this.#recreating(firstProblem, attempt)}`,
      );
      try {
        const started = Date.now();
        await runResetCommand(this.options.resetCommand, {
          deadlineMs: this.options.commandDeadlineMs ?? STACK_RESET_DEFAULTS.commandDeadlineMs,
          signal,
        });
        const readyMs = await waitForStackReady({
          probes: this.options.probes,
          deadlineMs: this.options.readyDeadlineMs ?? STACK_RESET_DEFAULTS.readyDeadlineMs,
          signal,
        });
        logger.info(
          { try: attempt, durationMs: Date.now() - started, readyMs },
          "the stack's desktop is back: recreated with --reset-command",
        );
        this.#state = { kind: 'up' };
        return;
      } catch (error) {
        if (signal.aborted) return;
        last = errorMessage(error);
        logger.warn({ try: attempt, reason: last }, "recreating the stack's desktop failed");
      }
      if (attempt < this.#tries) {
        const slept = await sleep(this.#backoffMs * 2 ** (attempt - 1), true, { signal }).catch(
          () => false,
        );
        if (!slept) return;
      }
    }
    const reason = `stack broken: its desktop did not come back after ${this.#tries} tries of --reset-command (the last: ${last}); it takes no task until the desktop answers again, and its tasks run on other stacks`;
    this.#state = { kind: 'broken', reason };
    logger.error({ tries: this.#tries }, reason);
  }
}
