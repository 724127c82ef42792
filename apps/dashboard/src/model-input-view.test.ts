import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelInputRecorder } from '@benchfleet/db';
import { solidColorPng, useTestServices } from '@benchfleet/testing';
import type { StepModelInput } from '../shared/view-rows.js';
import {
  startDashboardUnderTest,
  type DashboardUnderTest,
} from '../test-support/dashboard-under-test.js';
import { TWO_STEP_OSWORLD_TASK, writeFixtureRun } from '../test-support/run-fixtures.js';

// The step view's model input over HTTP, against real Postgres: a step's calls with their
// messages in order, images linked to the run's image route (never inlined), and what is refused.

const services = useTestServices();
let sut: DashboardUnderTest;
const PNG = solidColorPng(32, 24, [200, 10, 10]);
const DATA_URL = `data:image/png;base64,${PNG.toString('base64')}`;

beforeAll(async () => {
  sut = await startDashboardUnderTest(services);
  await writeFixtureRun(services.db, sut.artifacts, {
    id: 'run-inputs',
    name: 'inputs-fixture',
    benchmark: 'osworld',
    model: { provider: 'proxy', name: 'm', title: 'M' },
    agent: { kind: 'bytebot' },
    tasks: [{ taskId: 't1', ...TWO_STEP_OSWORLD_TASK }],
  });
  const recorder = new ModelInputRecorder({ db: services.db });
  const history = [
    { role: 'system', content: 'You drive a desktop.' },
    { role: 'user', content: [{ type: 'image_url', image_url: { url: DATA_URL } }] },
  ];
  for (const step of [1, 2])
    recorder.record({
      owner: { runId: 'run-inputs', taskId: 't1', attempt: 1 },
      callNo: step,
      step,
      at: new Date(),
      model: 'm',
      request: {
        model: 'm',
        messages: step === 1 ? history : [...history, { role: 'assistant', content: 'one' }],
        temperature: 0,
      },
      tokensIn: 10 * step,
      tokensOut: 1,
    });
  await recorder.flush();
  expect(recorder.counts.written).toBe(2);
});

afterAll(async () => {
  await sut.close();
});

const get = (path: string) => fetch(`${sut.dashboard.url}${path}`);
const STEP = '/api/runs/run-inputs/tasks/t1/attempts/1/steps';

describe("a step's model input in the dashboard", () => {
  it('gives the calls of the chosen step with their messages, images as links to the run’s image route', async () => {
    const response = await get(`${STEP}/2/model-input`);
    expect(response.status).toBe(200);
    const input = (await response.json()) as StepModelInput;
    expect(input.calls).toHaveLength(1);
    const [call] = input.calls;
    expect(call).toMatchObject({
      call_no: 2,
      model: 'm',
      tokens_in: 20,
      parameters: { temperature: 0 },
    });
    const [system, user, assistant] = call!.messages as Array<Record<string, unknown>>;
    expect(system).toEqual({ role: 'system', content: 'You drive a desktop.' });
    expect(assistant).toEqual({ role: 'assistant', content: 'one' });
    const image = (user!['content'] as Array<{ image_url: { url: { url: string } } }>)[0]!.image_url
      .url;
    expect(image.url).toMatch(/^\/api\/runs\/run-inputs\/model-inputs\/[0-9a-f]{64}$/);
    expect(JSON.stringify(input)).not.toContain(PNG.toString('base64'));

    const picture = await get(image.url);
    expect(picture.status).toBe(200);
    expect(picture.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await picture.arrayBuffer()).equals(PNG)).toBe(true);
  });

  it('answers no calls for a step without stored input, and 404 for an image of no run or a bad digest', async () => {
    expect(await (await get(`${STEP}/3/model-input`)).json()).toEqual({ calls: [] });
    const input = (await (await get(`${STEP}/1/model-input`)).json()) as StepModelInput;
    const digest = JSON.stringify(input).match(/model-inputs\/([0-9a-f]{64})/)![1]!;
    expect((await get(`/api/runs/other-run/model-inputs/${digest}`)).status).toBe(404);
    expect((await get('/api/runs/run-inputs/model-inputs/not-a-digest')).status).toBe(404);
    expect((await get(`${STEP}/x/model-input`)).status).toBe(404);
  });
});
