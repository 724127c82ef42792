/** How the fake agent's task ends once its computer-action steps are done. */
type FakeBytebotEnding =
  /** `set_task_status` completed with `answer`, then COMPLETED. */
  | { kind: 'completed'; answer: string }
  /** `set_task_status` needs_help with `answer`, then NEEDS_HELP (control passes to the user). */
  | { kind: 'needs_help'; answer: string }
  /** The model call throws: FAILED, with no message. */
  | { kind: 'failed' }
  /** The model call never returns: the task stays RUNNING and nothing more happens. */
  | { kind: 'silent' }
  /** The whole server stops answering: connections are accepted, requests never get a response. */
  | { kind: 'hang' }
  /** The whole server goes away: listener and every connection closed. */
  | { kind: 'die' };

/** One computer tool call of a scripted agent, sent to bytebotd as the real agent sends it. */
export interface ScriptedComputerAction {
  /** The agent's tool (`computer_application`, `computer_type_text`, `computer_wait`, …). */
  readonly name: `computer_${string}`;
  /** The tool's input: bytebotd receives `{action: name without computer_, ...input}`. */
  readonly input: Readonly<Record<string, unknown>>;
  /** What the agent says with it. */
  readonly text?: string;
  /**
   * A shell test on the desktop that must hold before the action is taken (what a real agent
   * would see on the screenshot first), checked through the server's `desktopCheck`.
   */
  readonly when?: string;
}

/** A scripted trajectory of the fake agent. */
export interface FakeBytebotScenario {
  /** Computer-action steps (ASSISTANT tool_use, then USER tool_result with a screenshot); `Infinity` never ends. */
  steps: number;
  ending: FakeBytebotEnding;
  /**
   * `POST /tasks` answers this status instead of creating the task: 500 as the real agent does when
   * it cannot store a body (its database is down, or the body is too big); 400 for a request it
   * refuses outright.
   */
  rejectCreate?: 400 | 500;
  /** `POST /tasks` answers 200 with a body that is not a task (a proxy's error page). */
  garbageCreate?: boolean;
  /** The model answers plain text without tool calls (bytebot issue #130): ASSISTANT messages only, no screenshots. */
  textOnly?: boolean;
  /**
   * With a fake desktop: the desktop is killed (a crashed bytebotd) right after this computer step's
   * result, and the agent goes on as the real one does: tool errors, no screenshots.
   */
  desktopDiesAfterStep?: number;
  /**
   * What the agent does to the desktop: at these computer steps (1-based) it types a shell command
   * into a terminal (a `computer_type_text` step), which runs on the stack's desktop through the
   * server's `desktopShell` (a test's sandbox), as a real agent acting on the desktop would.
   */
  desktopCommands?: Readonly<Record<number, string>>;
  /**
   * The computer steps, in order, each one tool call carried out on the stack's desktop (a real
   * bytebotd, or the fake): a scripted agent acting with the real agent's tools. `steps` should
   * be their count.
   */
  actions?: readonly ScriptedComputerAction[];
}

export const FAKE_BYTEBOT_SCENARIOS = {
  completes: { steps: 3, ending: { kind: 'completed', answer: 'The task is done.' } },
  'needs-help': {
    steps: 2,
    ending: { kind: 'needs_help', answer: 'I need the password to continue.' },
  },
  fails: { steps: 1, ending: { kind: 'failed' } },
  'never-finishes': { steps: Infinity, ending: { kind: 'silent' } },
  'text-only': { steps: Infinity, ending: { kind: 'silent' }, textOnly: true },
  silent: { steps: 0, ending: { kind: 'silent' } },
  'server-error': { steps: 0, ending: { kind: 'silent' }, rejectCreate: 500 },
  rejected: { steps: 0, ending: { kind: 'silent' }, rejectCreate: 400 },
  'create-garbage': { steps: 0, ending: { kind: 'silent' }, garbageCreate: true },
  hangs: { steps: 2, ending: { kind: 'hang' } },
  dies: { steps: 2, ending: { kind: 'die' } },
  'desktop-dies': { steps: Infinity, ending: { kind: 'silent' }, desktopDiesAfterStep: 2 },
} as const satisfies Record<string, FakeBytebotScenario>;

const MARKER = /\[fake:([A-Za-z0-9_-]+)\]/;

/** Puts a scenario marker into a task description: `withFakeScenario('Open VLC', 'dies')`. */
export function withFakeScenario(description: string, scenario: string): string {
  return `${description} [fake:${scenario}]`;
}

/** The scenario named by a `[fake:<name>]` marker in the description, if any. */
export function fakeScenarioMarkerOf(description: string): string | undefined {
  return MARKER.exec(description)?.[1];
}
