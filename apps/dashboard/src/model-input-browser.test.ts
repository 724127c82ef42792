import { beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { ModelInputRecorder } from '@benchfleet/db';
import { solidColorPng, useTestServices } from '@benchfleet/testing';
import { useDashboardInChromium } from '../test-support/dashboard-in-chromium.js';
import { waitForText } from '../test-support/headless-chromium.js';
import { TWO_STEP_OSWORLD_TASK, writeFixtureRun } from '../test-support/run-fixtures.js';

// The step view's model-input panel in Chromium against SQL: rows written by the real recorder,
// a step opened, its messages shown as llm_calls and llm_input_blobs hold them, the screenshot
// every call resends stored once and shown once per call; a task whose inputs were not stored
// shows none.

const services = useTestServices();
const dash = useDashboardInChromium(services);
const RUN = 'run-inputs';
const PNG = solidColorPng(32, 24, [200, 10, 10]);
const DATA_URL = `data:image/png;base64,${PNG.toString('base64')}`;

beforeAll(async () => {
  await writeFixtureRun(services.db, dash.sut.artifacts, {
    id: RUN,
    name: 'inputs-fixture',
    benchmark: 'osworld',
    model: { provider: 'proxy', name: 'm', title: 'M' },
    agent: { kind: 'bytebot' },
    tasks: [
      { taskId: 'stored', ...TWO_STEP_OSWORLD_TASK },
      { taskId: 'not-stored', ...TWO_STEP_OSWORLD_TASK },
    ],
  });
  // Bytebot resends its whole history with every call: step 2's call repeats step 1's messages.
  const recorder = new ModelInputRecorder({ db: services.db });
  const history = [
    { role: 'system', content: 'You drive a desktop.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Here is the screen.' },
        { type: 'image_url', image_url: { url: DATA_URL } },
      ],
    },
  ];
  for (const step of [1, 2])
    recorder.record({
      owner: { runId: RUN, taskId: 'stored', attempt: 1 },
      callNo: step,
      step,
      at: new Date(),
      model: 'm',
      request: {
        model: 'm',
        messages:
          step === 1
            ? history
            : [
                ...history,
                { role: 'assistant', content: 'one' },
                { role: 'user', content: 'go on' },
              ],
        temperature: 0,
      },
      tokensIn: 10 * step,
      tokensOut: 1,
    });
  await recorder.flush();
  expect(recorder.counts.written).toBe(2);
});

interface ShownMessage {
  role: string;
  texts: string[];
  images: string[];
}

/** What SQL holds for a step's one call: each message's role, texts and image digests, in order. */
async function messagesInSql(step: number): Promise<ShownMessage[]> {
  const { rows } = await sql<{ body: Record<string, unknown> }>`
    select b.body
    from llm_calls c
    cross join lateral unnest(c.message_digests) with ordinality as m(digest, n)
    join llm_input_blobs b on b.run_id = c.run_id and b.digest = m.digest
    where c.run_id = ${RUN} and c.task_id = 'stored' and c.attempt = 1 and c.step = ${step}
    order by m.n
  `.execute(services.db);
  return rows.map(({ body }) => {
    const content = body['content'];
    const parts = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
    const texts: string[] = [];
    const images: string[] = [];
    for (const part of parts as Array<Record<string, unknown>>) {
      if (typeof part['text'] === 'string') texts.push(part['text']);
      const url = (part['image_url'] as { url?: Record<string, unknown> } | undefined)?.url;
      if (url && typeof url['$image'] === 'string') images.push(url['$image']);
    }
    return { role: String(body['role']), texts, images };
  });
}

async function openModelInput(taskId: string, step: number) {
  const page = await dash.browser.newPage();
  await page.goto(`${dash.sut.dashboard.url}/runs/${RUN}/tasks/${taskId}?attempt=1&step=${step}`);
  const panel = page.locator(`details[data-model-input="${step}"]`);
  await panel.locator('summary').click();
  return { page, panel };
}

describe('the model-input panel of the step view', () => {
  it('shows the messages of the chosen step as SQL has them, the resent screenshot stored once', async () => {
    const { rows: images } = await sql<{ digest: string; data: Buffer }>`
      select digest, data from llm_input_blobs where run_id = ${RUN} and kind = 'image'
    `.execute(services.db);
    expect(images).toHaveLength(1);
    const [image] = images;
    expect(image!.data.equals(PNG)).toBe(true);

    const expected = await messagesInSql(2);
    expect(expected.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(expected[1]!.images).toEqual([image!.digest]);

    const { page, panel } = await openModelInput('stored', 2);
    await waitForText(panel.locator('[data-call="2"]'), 'Call #2: m, 4 messages, 20 tokens in');
    const shown: ShownMessage[] = [];
    for (const item of await panel.locator('li.model-message').all())
      shown.push({
        role: (await item.getAttribute('data-role')) ?? '',
        texts: await item.locator('pre.model-text').allTextContents(),
        images: (
          await item
            .locator('img.model-image')
            .evaluateAll((images) => images.map((image) => image.getAttribute('src') ?? ''))
        ).map((src) => src.split('/').pop() ?? ''),
      });
    expect(shown).toEqual(expected);
    // Shown once in the call, by the one stored blob, and the browser decodes it.
    expect(await panel.locator('img.model-image').count()).toBe(1);
    await page.waitForFunction(
      "document.querySelector('img.model-image')?.naturalWidth === 32",
      undefined,
      { timeout: 600_000 },
    );
    await page.close();
  });

  it("shows step 1's own call, with the same stored screenshot", async () => {
    const expected = await messagesInSql(1);
    const { page, panel } = await openModelInput('stored', 1);
    await waitForText(panel.locator('[data-call="1"]'), 'Call #1: m, 2 messages, 10 tokens in');
    expect(await panel.locator('li.model-message').count()).toBe(expected.length);
    expect(await panel.locator('img.model-image').getAttribute('src')).toBe(
      `/api/runs/${RUN}/model-inputs/${expected[1]!.images[0]}`,
    );
    await page.close();
  });

  it('shows nothing for a task whose inputs were not stored', async () => {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from llm_calls where run_id = ${RUN} and task_id = 'not-stored'
    `.execute(services.db);
    expect(rows[0]!.n).toBe(0);
    const { page, panel } = await openModelInput('not-stored', 2);
    await waitForText(panel, 'No model input was stored for this step.');
    expect(await panel.locator('li.model-message').count()).toBe(0);
    expect(await panel.locator('img').count()).toBe(0);
    await page.close();
  });
});
