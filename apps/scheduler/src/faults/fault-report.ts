import type { FaultResult } from '@benchfleet/testing';

/** The line each fault test prints: what converged, and how long it took after the fault. */
export function reportFault(result: FaultResult): void {
  process.stdout.write(
    `[fault] ${result.fault}: ${result.tasks} tasks, lost ${result.lost}, double ${result.double}, stuck ${result.stuck}, converged ${result.seconds.toFixed(1)} s after the fault\n[fault]   checks ${JSON.stringify(result.checks)}\n${lostLines(result)}`,
  );
}

function lostLines(result: FaultResult): string {
  return result.lostTasks
    .map((lost) => `[fault]   lost ${lost.task}: ${lost.attempts.join(' | ')}\n`)
    .join('');
}
