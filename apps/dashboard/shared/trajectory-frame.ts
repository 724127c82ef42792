// Which steps a trajectory view shows, shared by the browser (to draw) and the server (to start
// loading the frame before the scripts run).

export interface StepRef {
  attempt: number;
  step: number;
  has_screenshot: boolean;
}

/** The attempt's steps and the index of the chosen one (the first when none or an unknown one is chosen). */
export function selectedStep<S extends StepRef>(
  steps: readonly S[],
  attempt: number,
  step: number | undefined,
): { steps: S[]; index: number } {
  const ofAttempt = steps.filter((candidate) => candidate.attempt === attempt);
  const index =
    step === undefined
      ? 0
      : Math.max(
          0,
          ofAttempt.findIndex((candidate) => candidate.step === step),
        );
  return { steps: ofAttempt, index };
}

/**
 * The frame to draw a step's action on: the screen as the previous step left it, which is what the
 * agent looked at when it chose the action; without one, the screen after the step itself.
 */
export function actionFrame<S extends StepRef>(
  steps: readonly S[],
  index: number,
): { frame: S | undefined; seenBefore: boolean } {
  const before = index > 0 ? steps[index - 1] : undefined;
  if (before?.has_screenshot) return { frame: before, seenBefore: true };
  const step = steps[index];
  return { frame: step?.has_screenshot ? step : undefined, seenBefore: false };
}

export function screenshotPath(runId: string, taskId: string, step: StepRef): string {
  return `/api/runs/${encodeURIComponent(runId)}/tasks/${encodeURIComponent(taskId)}/attempts/${step.attempt}/steps/${step.step}/screenshot`;
}
