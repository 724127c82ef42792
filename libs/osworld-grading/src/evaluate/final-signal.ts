/**
 * OSWorld scores against the agent's last action (FAIL / DONE); Bytebot has no such action, only a
 * task status. This mapping is a harness decision, not upstream behaviour, so every grade records
 * its name and version.
 *
 * Version 1:
 * - NEEDS_HELP → FAIL. The agent's own `set_task_status needs_help`: it gives up and asks a human,
 *   the closest Bytebot has to OSWorld's "this task is infeasible" (the reference's proposal).
 * - COMPLETED → DONE. The agent's `set_task_status completed`; DONE changes nothing in evaluate():
 *   the end state is scored.
 * - anything else → no signal. FAILED is set by Bytebot on an LLM or runtime error, never by the
 *   agent; CANCELLED is our step limit or stall rule; NEEDS_REVIEW is never set. None of them is
 *   the agent's verdict, so the end state is scored as OSWorld scores a trajectory that ran out
 *   of steps.
 */
export const FINAL_SIGNAL_MAPPING = {
  name: 'bytebot-status-to-osworld-final-action',
  version: 1,
} as const;

type OsworldFinalAction = 'FAIL' | 'DONE';

export interface FinalSignal {
  /** The last action evaluate() sees; null = no special action (the history ends with an ordinary one). */
  readonly action: OsworldFinalAction | null;
  /** What the mapping was applied to. */
  readonly bytebotStatus: string;
  readonly mapping: typeof FINAL_SIGNAL_MAPPING;
}

export function finalSignalOf(bytebotStatus: string): FinalSignal {
  const action: OsworldFinalAction | null =
    bytebotStatus === 'NEEDS_HELP' ? 'FAIL' : bytebotStatus === 'COMPLETED' ? 'DONE' : null;
  return { action, bytebotStatus, mapping: FINAL_SIGNAL_MAPPING };
}

/** The action history evaluate() is given: only its last entry matters upstream. */
export function actionHistoryOf(signal: FinalSignal): readonly unknown[] {
  return signal.action === null ? [] : [signal.action];
}
