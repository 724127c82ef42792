import type { ShownQuery, StepRow } from './api';

/** What every trajectory panel gets: one attempt's steps, the chosen one, and the steps query. */
export interface TrajectoryPanelProps {
  runId: string;
  taskId: string;
  steps: StepRow[];
  index: number;
  onIndex: (i: number) => void;
  queries: ShownQuery[];
}
