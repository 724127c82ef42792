import type { FaultResult } from '@benchfleet/testing';

/** The line each fault test prints: what converged, how long it took after the fault, and what else it checked. */
export function reportFault(result: FaultResult): void {
  process.stdout.write(
    `[fault] ${result.fault}: ${result.tasks} tasks, lost ${result.lost}, double ${result.double}, stuck ${result.stuck}, converged ${result.seconds.toFixed(1)} s after the fault; ${JSON.stringify(result.checks)}\n`,
  );
}
