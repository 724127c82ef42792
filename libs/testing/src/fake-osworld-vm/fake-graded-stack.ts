import {
  startFakeBytebot,
  type FakeBytebot,
  type FakeBytebotOptions,
} from '../fake-bytebot/fake-bytebot-server.js';
import type { FakeBytebotScenario } from '../fake-bytebot/fake-bytebot-scenarios.js';
import {
  startFakeBytebotDesktop,
  type FakeBytebotDesktop,
} from '../fake-bytebot/fake-bytebot-desktop.js';
import {
  startFakeOsworldVm,
  type FakeOsworldVm,
  type FakeOsworldVmOptions,
} from './fake-osworld-vm-server.js';
import { startFakeWebServer, type FakeWebServer } from './fake-web-server.js';

// One graded OSWorld stack of fakes sharing one desktop: the fake Bytebot agent, its bytebotd,
// and the fake OSWorld VM server over a sandbox; the agent's scripted `desktopCommands` run in that
// sandbox as the user's shell, so what the agent does is what the grader sees.

export interface FakeGradedStackOptions {
  /** The agent's trajectory for every task until `setScenario` changes it. */
  readonly scenario: FakeBytebotScenario;
  /** Timings and faults of the fake agent (its desktop and shell are this stack's). */
  readonly bytebot?: Omit<FakeBytebotOptions, 'desktop' | 'desktopShell'>;
  readonly vm?: FakeOsworldVmOptions;
  /** A web host shared by several stacks; by default the stack starts (and closes) its own. */
  readonly web?: FakeWebServer;
}

export interface FakeGradedStack {
  readonly vm: FakeOsworldVm;
  readonly bytebotd: FakeBytebotDesktop;
  readonly bytebot: FakeBytebot;
  readonly web: FakeWebServer;
  /** A real `--reset-command` for this fake desktop: its home emptied, as a recreated desktop's. */
  readonly resetCommand: string;
  /** The trajectory of the tasks created from now on. */
  setScenario(scenario: FakeBytebotScenario): void;
  close(): Promise<void>;
}

export async function startFakeGradedStack(
  options: FakeGradedStackOptions,
): Promise<FakeGradedStack> {
  const vm = await startFakeOsworldVm(options.vm);
  const web = options.web ?? (await startFakeWebServer());
  const bytebotd = await startFakeBytebotDesktop();
  let scenario = options.scenario;
  const bytebot = await startFakeBytebot({
    pendingDelayMs: 10,
    stepIntervalMs: 10,
    toolDelayMs: 3,
    ...options.bytebot,
    chooseScenario: () => scenario,
    desktop: bytebotd,
    desktopShell: async (command) => {
      const result = await vm.shell(command);
      if (result.returncode !== 0)
        throw new Error(result.stderr.trim() || `exit status ${result.returncode}`);
    },
  });
  return {
    vm,
    bytebotd,
    bytebot,
    web,
    resetCommand: `rm -rf '${vm.home}' && mkdir -p '${vm.home}'`,
    setScenario(next) {
      scenario = next;
    },
    async close() {
      await bytebot.close();
      await bytebotd.close();
      await vm.close();
      if (!options.web) await web.close();
    },
  };
}
