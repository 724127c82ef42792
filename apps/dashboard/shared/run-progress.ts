// What a run's progress bar shows, shared by the server's first paint and the browser: the tasks
// that ran to an outcome out of all, so a run cancelled before it started shows an empty bar, not
// a full one (its tasks are settled, as cancelled, but none of them ran).

export interface RunProgressCounts {
  total: number;
  queued: number;
  running: number;
  /** Tasks cancelled before any attempt started them. */
  never_started?: number;
}

export interface RunProgress {
  /** Tasks with an outcome, whatever it is. */
  settled: number;
  /** Settled tasks that an attempt ran: the bar's value. */
  ran: number;
  neverStarted: number;
  text: string;
}

export function runProgress(run: RunProgressCounts): RunProgress {
  const settled = run.total - run.queued - run.running;
  const neverStarted = run.never_started ?? 0;
  const ran = settled - neverStarted;
  return {
    settled,
    ran,
    neverStarted,
    text:
      neverStarted > 0
        ? `${ran} / ${run.total} ran · ${neverStarted} cancelled before they started`
        : `${settled} / ${run.total} settled`,
  };
}
