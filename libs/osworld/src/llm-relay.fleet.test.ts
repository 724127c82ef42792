import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';
import { LlmGovernor } from '@benchfleet/llm-governor';
import {
  BYTEBOT_PROXY_TOOLS,
  deleteKeysWithPrefix,
  startFakeLlm,
  uniqueQueuePrefix,
  waitFor,
  type FakeLlm,
} from '@benchfleet/testing';

const redisUrl = inject('redisUrl');
const prefix = uniqueQueuePrefix();
const PROCESS_FILE = fileURLToPath(
  new URL('../test-support/llm-relay-process.ts', import.meta.url),
);

interface RelayEvent {
  name: string;
  event: string;
  url?: string;
  outcome?: string;
  status?: number;
  tries?: number;
}

interface RelayProcess {
  readonly name: string;
  readonly child: ChildProcessWithoutNullStreams;
  readonly events: RelayEvent[];
  output(): string;
}

const started: RelayProcess[] = [];
const fakes: FakeLlm[] = [];

function startRelayProcess(name: string, env: Record<string, string>): RelayProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', PROCESS_FILE], {
    env: { ...process.env, REDIS_URL: redisUrl, PREFIX: prefix, NAME: name, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const events: RelayEvent[] = [];
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    const lines = stdout.split('\n');
    stdout = lines.pop() ?? '';
    for (const line of lines) if (line.startsWith('{')) events.push(JSON.parse(line) as RelayEvent);
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-20_000)));
  const relay = {
    name,
    child,
    events,
    output: () => `${JSON.stringify(events.slice(-5))}\n${stderr}`,
  };
  started.push(relay);
  return relay;
}

async function waitForEvent(relay: RelayProcess, event: string): Promise<RelayEvent> {
  return waitFor(
    `${relay.name} to report '${event}'`,
    () => {
      if (relay.child.exitCode !== null) throw new Error(`${relay.name} exited: ${relay.output()}`);
      return relay.events.find((e) => e.event === event);
    },
    600_000,
    25,
  );
}

const bytebotCall = (url: string): Promise<Response> =>
  fetch(`${url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer dummy-key-for-proxy' },
    body: JSON.stringify({
      model: 'relay-broadcast',
      messages: [
        { role: 'system', content: 'You are Bytebot.' },
        { role: 'user', content: 'Open the terminal' },
      ],
      max_tokens: 8192,
      tools: BYTEBOT_PROXY_TOOLS,
      reasoning_effort: 'high',
    }),
  });

afterEach(async () => {
  for (const relay of started.splice(0)) {
    if (relay.child.exitCode !== null || relay.child.signalCode !== null) continue;
    const exited = new Promise((resolve) => relay.child.once('exit', resolve));
    relay.child.kill('SIGKILL');
    await exited;
  }
  for (const fake of fakes.splice(0)) await fake.close();
});

afterAll(async () => {
  await deleteKeysWithPrefix(redisUrl, prefix);
});

describe('LLM relays across worker processes', () => {
  it("share a provider's Retry-After: once one relay is answered 429, the other sends nothing until it has passed, and each agent gets one answer", async () => {
    const fake = await startFakeLlm({
      models: ['relay-broadcast'],
      script: ['ok'],
      faults: { status429Times: 1, retryAfterSeconds: 2 },
    });
    fakes.push(fake);
    const env = { FAKE_BASE_URL: fake.baseUrl, MODEL: 'relay-broadcast' };
    const [first, second] = [startRelayProcess('first', env), startRelayProcess('second', env)];
    const [firstUrl, secondUrl] = await Promise.all(
      [first, second].map(async (relay) => (await waitForEvent(relay, 'ready')).url!),
    );

    const firstAnswer = bytebotCall(firstUrl!);
    await fake.until(() => fake.arrivals[0]?.status === 429);
    const refusedAt = fake.arrivals[0]!.at;
    // Once the first relay has published the hold-off in Redis (what the fleet shares; on a busy
    // machine that can come well after the provider's 429 left), the other stack's agent calls.
    const observer = new LlmGovernor({ redisUrl, prefix });
    try {
      await waitFor(
        'the first relay to publish the Retry-After in Redis',
        async () => (await observer.snapshot()).lanes.some((lane) => lane.heldOffForMs > 0),
        600_000,
        10,
      );
    } finally {
      await observer.close();
    }
    const secondAnswer = await bytebotCall(secondUrl!);
    expect(secondAnswer.status).toBe(200);
    expect((await firstAnswer).status).toBe(200);

    expect(fake.arrivals.map((a) => a.status)).toEqual([429, 200, 200]);
    for (const arrival of fake.arrivals.slice(1))
      expect(arrival.at - refusedAt).toBeGreaterThanOrEqual(2000);
    // The first relay waited the 429 out itself: its agent saw a single answer.
    const calls = await Promise.all([first, second].map((relay) => waitForEvent(relay, 'call')));
    expect(calls.map((c) => [c.name, c.outcome, c.tries])).toEqual([
      ['first', 'ok', 2],
      ['second', 'ok', 1],
    ]);
  });
});
