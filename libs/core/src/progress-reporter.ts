import cliProgress from 'cli-progress';

export interface ProgressReporter {
  update(done: number, extra?: Record<string, string | number>): void;
  setTotal(total: number): void;
  stop(): void;
}

/**
 * A progress bar on a terminal; elsewhere (CI, pipes) one JSON line now and then, so long work is
 * visible in logs without flooding them.
 */
export function createProgressReporter(
  label: string,
  total: number,
  options: { quiet?: boolean; format?: string } = {},
): ProgressReporter {
  if (options.quiet)
    return { update: () => undefined, setTotal: () => undefined, stop: () => undefined };
  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        format:
          options.format ?? `${label} [{bar}] {value}/{total} {percentage}% | eta {eta_formatted}`,
        stream: process.stderr,
        hideCursor: true,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total, 0);
    return {
      update: (done, extra) => bar.update(done, extra),
      setTotal: (n) => bar.setTotal(n),
      stop: () => bar.stop(),
    };
  }
  let lastLogged = 0;
  let currentTotal = total;
  return {
    update(done, extra) {
      const now = Date.now();
      if (now - lastLogged < 2_000 && done < currentTotal) return;
      lastLogged = now;
      process.stderr.write(
        `${JSON.stringify({ progress: label, done, total: currentTotal, ...extra })}\n`,
      );
    },
    setTotal: (n) => (currentTotal = n),
    stop: () => undefined,
  };
}
