import type { ScriptedComputerAction } from '../fake-bytebot/fake-bytebot-scenarios.js';

// What a scripted agent does on a real desktop for OSWorld tasks: per task, a right path (an end
// state OSWorld's evaluator scores 1) and a wrong one (the agent still claims success, the end
// state scores 0), as computer-use actions of Bytebot's agent (bytebotd carries them out: apps
// opened, text typed into a terminal or pasted into an editor, keys pressed). Each action waits for what a real agent would
// see on its screenshot first (`when`), never for an amount of time. Tests pick tasks from
// osworld-task-scripts.ts and upstream-task-scripts.ts; one per domain is the aim. Files a task's
// setup downloads are made by `downloads`, never fetched.

/** How a scripted agent's task ends: the agent's word (set_task_status) after its actions. */
interface ScriptedEnding {
  readonly kind: 'completed' | 'needs_help';
  readonly answer: string;
}

interface ScriptedTrajectory {
  readonly actions: readonly ScriptedComputerAction[];
  readonly ending: ScriptedEnding;
}

export interface OsworldTaskScript {
  readonly taskId: string;
  readonly domain: string;
  /** What is being shown, for a test's name. */
  readonly about: string;
  /** Ends in a state the task's evaluator scores 1. */
  readonly right: ScriptedTrajectory;
  /** Ends in a state it scores 0, the agent saying it succeeded. */
  readonly wrong: ScriptedTrajectory;
  /** Files the task's setup downloads (URL → content), made here. */
  readonly downloads?: () => Promise<Readonly<Record<string, Buffer>>>;
}

/** Bytebot's agent offers `computer_wait` with 500 ms only. */
export const wait = (ms: 500): ScriptedComputerAction => ({
  name: 'computer_wait',
  input: { duration: ms },
});

/** Keys pressed together (X keysym names, as bytebotd takes them), once `when` holds. */
export const keys = (pressed: readonly string[], when: string): ScriptedComputerAction => ({
  name: 'computer_type_keys',
  input: { keys: pressed },
  text: `Pressing ${pressed.join('+')}.`,
  when,
});

/** The active window's title contains this text. */
export const activeWindowIs = (title: string) =>
  `xdotool getactivewindow getwindowname | grep -qF ${JSON.stringify(title)}`;

/** A window whose title contains this text is on the screen. */
export const windowShown = (title: string) => `wmctrl -l | grep -qF ${JSON.stringify(title)}`;

/** The focused window is a terminal (the first thing an agent checks on its screenshot). */
const TERMINAL_FOCUSED = 'xprop -id "$(xdotool getactivewindow)" WM_CLASS | grep -qi terminal';

/** Bytebot's `application: terminal`, once a window (WM_CLASS pattern) the setup opens shows. */
function openTerminal(afterWindow: string | undefined): ScriptedComputerAction {
  return {
    name: 'computer_application',
    input: { application: 'terminal' },
    text: 'Opening a terminal.',
    // An app the setup started is on the screen first, so that its window cannot take the focus later.
    ...(afterWindow ? { when: `wmctrl -lx | grep -qiE ${JSON.stringify(afterWindow)}` } : {}),
  };
}

/**
 * A terminal opened (Bytebot's `application: terminal`), then each line typed into it and run,
 * each once the one before has finished: a line ends by touching a marker in /tmp, which the next
 * action waits for, as an agent waits to see the prompt again. `afterWindow`: a window (WM_CLASS
 * pattern) the task's setup opens, waited for before the terminal is opened.
 */
export function inTerminal(
  lines: readonly string[],
  options: { afterWindow?: string } = {},
): ScriptedComputerAction[] {
  // Short: bytebotd types a character in 0.2 s (nut-js waits 100 ms after each press and release).
  const marker = (n: number) => `/tmp/.s${n}`;
  return [
    openTerminal(options.afterWindow),
    ...lines.map((line, index): ScriptedComputerAction => ({
      name: 'computer_type_text',
      input: { text: `${line}; touch ${marker(index + 1)}\n` },
      text: `Typing: ${line}`,
      when: index === 0 ? TERMINAL_FOCUSED : `[ -e ${marker(index)} ]`,
    })),
    { ...wait(500), when: `[ -e ${marker(lines.length)} ]` },
  ];
}

/** Mousepad (XFCE's editor, in Bytebot's desktop) holds the focused window. */
const EDITOR_FOCUSED = 'xprop -id "$(xdotool getactivewindow)" WM_CLASS | grep -qi mousepad';

/**
 * What inTerminal does, for long lines, in a fraction of the time: bytebotd types a character in
 * 0.2 s but pastes any text at once (`computer_paste_text`: xclip, then Ctrl+V), and a terminal
 * takes Ctrl+V as a key, not a paste. So, as Bytebot's agent is told to paste long text: an editor
 * opened from the terminal on an empty script (typed), the lines pasted into it, saved (Ctrl+S)
 * and closed (Ctrl+Q), then the script run from the terminal (typed), each action once the one
 * before shows.
 */
export function pastedInTerminal(
  lines: readonly string[],
  options: { afterWindow?: string } = {},
): ScriptedComputerAction[] {
  const done = '/tmp/.pasted';
  const script = `${[...lines, `touch ${done}`].join('\n')}\n`;
  const saved = `grep -qxF ${JSON.stringify(`touch ${done}`)} /tmp/s.sh`;
  return [
    openTerminal(options.afterWindow),
    {
      name: 'computer_type_text',
      // An existing file: Mousepad marks a new one edited ('*' in its title) before anything is pasted.
      input: { text: 'cd /tmp; >s.sh; mousepad s.sh &\n' },
      text: 'Opening an editor on a script.',
      when: TERMINAL_FOCUSED,
    },
    {
      name: 'computer_paste_text',
      input: { text: script },
      text: `Pasting: ${lines.join('; ')}`,
      when: `${EDITOR_FOCUSED} && ${activeWindowIs('/tmp/s.sh')}`,
    },
    // Saved once the paste shows: Mousepad marks an edited document's title with '*'.
    {
      ...keys(['Control_L', 's'], `${EDITOR_FOCUSED} && ${activeWindowIs('*/tmp/s.sh')}`),
      text: 'Saving.',
    },
    { ...keys(['Control_L', 'q'], `${EDITOR_FOCUSED} && ${saved}`), text: 'Closing the editor.' },
    {
      name: 'computer_type_text',
      input: { text: 'bash s.sh\n' },
      text: 'Running the script.',
      when: `! pidof mousepad >/dev/null && ${TERMINAL_FOCUSED}`,
    },
    { ...wait(500), when: `[ -e ${done} ]` },
  ];
}

/**
 * A shell line that ends a program and returns once its processes are gone: pidof, not pgrep, as
 * one the VM server launched stays its zombie (the server never reaps what it launches).
 */
export const killAndWait = (program: string) =>
  `pkill -f ${program}; while pidof ${program} >/dev/null; do sleep .2; done`;

/**
 * A dialog that opens over an app the setup started and takes the focus (a first start's tip or
 * template chooser): waited for once the app's window (WM_CLASS pattern) shows, closed with Escape,
 * and gone, as an agent closes it before it works.
 */
export function dismissDialog(appWindow: string, dialog: string): ScriptedComputerAction[] {
  return [
    { ...wait(500), when: `wmctrl -lx | grep -qiE ${JSON.stringify(appWindow)}` },
    { ...wait(500), when: windowShown(dialog) },
    { ...keys(['Escape'], activeWindowIs(dialog)), text: `Closing ${dialog}.` },
    { ...wait(500), when: `! ${windowShown(dialog)}` },
  ];
}

export const completed = (answer: string): ScriptedEnding => ({ kind: 'completed', answer });
