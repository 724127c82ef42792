import { afterEach, describe, expect, it } from 'vitest';
import {
  fakeScreenshotPng,
  startFakeBytebot,
  startFakeBytebotDesktop,
  withFakeScenario,
  type FakeBytebot,
  type FakeBytebotDesktop,
  type FakeBytebotScenario,
} from '@benchfleet/testing';
import { BytebotClient } from './bytebot-client.js';
import { BytebotDesktopClient } from './bytebot-desktop.js';
import {
  runOsworldEpisode,
  type OsworldEpisodeStep,
  type RunOsworldEpisodeOptions,
} from './osworld-episode.js';
import { DesktopLostError, type StackWatchOptions } from './stack-watch.js';

// The episode watches its stack's desktop while the task runs: a fake agent whose computer actions
// go to a fake desktop over HTTP, as the real agent's do, and a desktop the test kills, freezes,
// slows down or makes drop requests at chosen steps.

const model = { provider: 'proxy', name: 'fake-model', title: 'Fake', contextWindow: 128_000 };

let agent: FakeBytebot | undefined;
let desktop: FakeBytebotDesktop | undefined;
afterEach(async () => {
  await agent?.close();
  await desktop?.close();
  agent = desktop = undefined;
});

async function startStack(scenarios: Record<string, FakeBytebotScenario> = {}) {
  desktop = await startFakeBytebotDesktop();
  agent = await startFakeBytebot({
    pendingDelayMs: 10,
    stepIntervalMs: 10,
    toolDelayMs: 3,
    desktop,
    scenarios,
  });
  return { agent, desktop };
}

function run(
  scenario: string,
  watch: StackWatchOptions | undefined,
  overrides: Partial<RunOsworldEpisodeOptions> = {},
) {
  const steps: OsworldEpisodeStep[] = [];
  const options: RunOsworldEpisodeOptions = {
    client: new BytebotClient({
      baseUrl: agent!.url,
      retryDelaysMs: [5, 10, 20],
      requestTimeoutMs: 500,
    }),
    task: { task_id: `desktop-${scenario}`, instruction: withFakeScenario('Do it', scenario) },
    model,
    maxSteps: 20,
    signal: new AbortController().signal,
    pollIntervalMs: 20,
    heartbeatIntervalMs: 200,
    idlePollIntervalMs: 10,
    stallTimeoutMs: 30_000,
    sink: { onTaskCreated: () => undefined, onStep: (step) => void steps.push(step) },
    ...(watch ? { watch } : {}),
    ...overrides,
  };
  return { steps, outcome: runOsworldEpisode(options) };
}

/** The desktop probed as the worker probes it; rarely, so only the agent's evidence triggers a probe. */
function probeOnly(desktopUrl: string, intervalMs = 60_000): StackWatchOptions {
  const client = new BytebotDesktopClient(desktopUrl, 1_000);
  return { desktop: (signal) => client.healthProblem({ signal }), intervalMs };
}

describe('the episode watches its desktop', () => {
  // Once: bytebotd died mid-task; the agent went on with tool errors and no screenshots until the
  // step limit, and the task was recorded as the agent's (cancelled).
  it('a desktop that dies mid-task ends the attempt as a lost desktop, the Bytebot task cancelled, long before the step limit', async () => {
    await startStack();
    const { steps, outcome } = run('desktop-dies', probeOnly(desktop!.url));
    const error = await outcome.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DesktopLostError);
    expect((error as Error).message).toMatch(
      /^the desktop died mid-task, after step 4: the Bytebot desktop at http:\/\/127\.0\.0\.1:\d+ does not answer \(ECONNREFUSED\); the agent's last 2 computer actions came back without a screenshot \(Error executing computer_click_mouse tool: fetch failed\)$/,
    );
    expect(steps.map((step) => step.screenshot !== null)).toEqual([true, true, false, false]);
    expect(agent!.tasks()[0]?.status).toBe('CANCELLED');
  });

  it('with no desktop to probe, three actions in a row without a screenshot are enough', async () => {
    await startStack();
    const { steps, outcome } = run('desktop-dies', undefined);
    await expect(outcome).rejects.toThrow(
      /after step 5: the desktop fails the agent \(no --desktop-url to probe\); the agent's last 3 computer actions came back without a screenshot/,
    );
    expect(steps).toHaveLength(5);
    expect(agent!.tasks()[0]?.status).toBe('CANCELLED');
  });

  it('a desktop that drops two requests but answers the probe after them is not lost: the task completes', async () => {
    await startStack({ six: { steps: 6, ending: { kind: 'completed', answer: 'Done.' } } });
    desktop!.dropRequests(2);
    const { steps, outcome } = run('six', probeOnly(desktop!.url));
    expect(await outcome).toMatchObject({ status: 'success', total_steps: 7 });
    expect(steps.map((step) => step.screenshot !== null)).toEqual([
      false,
      false,
      true,
      true,
      true,
      true,
      false, // set_task_status: text only
    ]);
    expect(desktop!.stats.actions['cursor_position']).toBe(1);
  });

  it('a slow desktop that answers within the probe deadline is not lost', async () => {
    await startStack({ six: { steps: 6, ending: { kind: 'completed', answer: 'Done.' } } });
    desktop!.setLatency(100);
    const { steps, outcome } = run('six', {
      ...probeOnly(desktop!.url, 20),
      windowMs: 100,
      failures: 2,
    });
    expect(await outcome).toMatchObject({ status: 'success', total_steps: 7 });
    expect(steps[5]?.screenshot).toEqual(fakeScreenshotPng(6));
    expect(desktop!.stats.actions['cursor_position']).toBeGreaterThan(0);
  });

  it('a desktop that freezes (accepts, never answers) is lost once its probes have failed for the window', async () => {
    await startStack();
    const client = new BytebotDesktopClient(desktop!.url, 100);
    const { outcome, steps } = run(
      'never-finishes',
      {
        desktop: (signal) => client.healthProblem({ signal }),
        intervalMs: 20,
        windowMs: 300,
        failures: 3,
      },
      {
        sink: {
          onTaskCreated: () => undefined,
          onStep: (step) => {
            steps.push(step);
            if (step.step_number === 2) desktop!.freeze();
          },
        },
      },
    );
    await expect(outcome).rejects.toThrow(
      /^the desktop died mid-task, after step \d+: the Bytebot desktop at \S+ does not answer \(no answer within 0\.1 s\); \d+ probes failed in a row over \d+ s$/,
    );
    expect(agent!.tasks()[0]?.status).toBe('CANCELLED');
  });
});
