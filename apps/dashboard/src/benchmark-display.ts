// Every benchmark-specific display choice of the dashboard, keyed by benchmark name, in one place
// (server and browser both import it), so a benchmark registry can later supply these instead.

export type TrajectoryView = 'screenshots' | 'webshop-pages';

export interface BenchmarkDisplay {
  /** What "success" means for this benchmark, shown next to every success rate. */
  successLabel: string;
  successExplanation: string;
  trajectoryView: TrajectoryView;
  /** The BullMQ queue its tasks go to, for the fleet panel. */
  queue: string;
  /** How a user adds a worker, for the "nothing is consuming this run" notice. */
  workerCommand: string;
  /** Why a task ended, by `tasks.result.stop_reason`. */
  stopReasons: Record<string, string>;
  /** What a `tasks.final_api_status` means. */
  finalStatuses: Record<string, string>;
}

const DISPLAYS: Record<string, BenchmarkDisplay> = {
  osworld: {
    successLabel: 'agent-reported',
    successExplanation: 'OSWorld success is what the agent reported (Bytebot task COMPLETED); no evaluator checks the desktop.',
    trajectoryView: 'screenshots',
    queue: 'osworld',
    workerCommand: 'npx worker-osworld --bytebot-url http://127.0.0.1:9991 --stack-id stack-1',
    stopReasons: {
      end_status: 'Bytebot ended the task with a terminal status',
      step_limit: 'the step limit was reached: the Bytebot task was cancelled',
      stalled: 'no new message within the stall timeout: the Bytebot task was cancelled',
      create_failed: 'Bytebot refused to create the task',
    },
    finalStatuses: {
      COMPLETED: 'the agent reported the task done (counted as success)',
      FAILED: 'the agent or its model failed',
      NEEDS_HELP: 'the agent asked a human for help (counted as failed)',
      NEEDS_REVIEW: 'the agent asked for its result to be reviewed (counted as failed)',
      CANCELLED: 'cancelled (step limit, stall, or the run was cancelled)',
      CREATE_FAILED: 'the task could not be created on the stack',
    },
  },
  webshop: {
    successLabel: 'reward = 1',
    successExplanation: 'WebShop success is a purchase with reward exactly 1 (every attribute, option, price and type matched).',
    trajectoryView: 'webshop-pages',
    queue: 'webshop',
    workerCommand: 'npx worker-webshop --concurrency 32',
    stopReasons: {
      bought: 'the agent bought a product: the reward scores that purchase',
      step_limit: 'the step limit was reached without a purchase (reward 0)',
    },
    finalStatuses: {
      BOUGHT: 'the episode ended with a purchase',
      STEP_LIMIT: 'the episode ran out of steps',
    },
  },
};

const UNKNOWN: BenchmarkDisplay = {
  successLabel: 'as recorded',
  successExplanation: 'The success flag as the worker recorded it.',
  trajectoryView: 'webshop-pages',
  queue: '',
  workerCommand: '',
  stopReasons: {},
  finalStatuses: {},
};

export function benchmarkDisplay(benchmark: string): BenchmarkDisplay {
  return DISPLAYS[benchmark] ?? UNKNOWN;
}

export function displayedBenchmarks(): string[] {
  return Object.keys(DISPLAYS);
}
