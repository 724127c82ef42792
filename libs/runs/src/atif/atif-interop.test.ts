import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AtifValidationError, parseAtifTrajectory, readAtifTrajectoryFile } from './atif-reader.js';

// A trajectory another tool wrote: NVIDIA NeMo Relay's Node.js binding (npm: nemo-relay-node
// 0.9.2, AtifExporter), recorded by fixtures/make-nemo-relay-trajectory.cjs. Our reader takes it
// whole; the package has no ATIF reader or validator of its own to check ours against.

const FIXTURE = fileURLToPath(
  new URL('./fixtures/nemo-relay-node-0.9.2.trajectory.json', import.meta.url),
);

describe('a trajectory written by NeMo Relay', () => {
  it('is read by our reader, every field kept', async () => {
    const trajectory = await readAtifTrajectoryFile(FIXTURE);
    expect(trajectory).toEqual(JSON.parse(await readFile(FIXTURE, 'utf8')));
    expect(trajectory.schema_version).toBe('ATIF-v1.7');
    expect(trajectory.agent).toEqual({
      name: 'shop-agent',
      version: '0.3.0',
      model_name: 'shop-model',
    });
    expect(
      trajectory.steps.map((step) => [step.step_id, step.source, step.tool_calls?.length ?? 0]),
    ).toEqual([
      [1, 'user', 0],
      [2, 'agent', 1],
      [3, 'user', 0],
      [4, 'agent', 2],
      [5, 'user', 0],
      [6, 'agent', 0],
    ]);
    const search = trajectory.steps[1]!;
    expect(search.tool_calls).toEqual([
      { tool_call_id: 'call_search', function_name: 'search', arguments: { query: 'red shirt' } },
    ]);
    expect(search.observation?.results[0]).toMatchObject({
      source_call_id: 'call_search',
      content: 'B0001 red shirt $20; B0002 red shirt $45',
    });
    expect(search.metrics).toMatchObject({
      prompt_tokens: 120,
      completion_tokens: 14,
      cached_tokens: 40,
    });
    expect(search.llm_call_count).toBe(1);
    // Nanosecond timestamps with a +00:00 offset are ISO 8601 too.
    expect(search.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}\+00:00$/);
    expect(
      trajectory.steps[3]!.observation?.results.map((result) => result.source_call_id),
    ).toEqual(['call_click', 'call_reviews']);
    expect(trajectory.final_metrics).toEqual({
      total_prompt_tokens: 540,
      total_completion_tokens: 45,
      total_cached_tokens: 40,
      total_steps: 6,
    });
  });

  it('is refused once a field is broken, naming it: the reader is not taking anything', async () => {
    const document = JSON.parse(await readFile(FIXTURE, 'utf8'));
    document.steps[3].tool_calls[1].arguments = '{"target":"reviews"}';
    document.steps[0].metrics = { prompt_tokens: 1 };
    expect(() => parseAtifTrajectory(document, 'nemo-relay.json')).toThrow(AtifValidationError);
    expect(() => parseAtifTrajectory(document, 'nemo-relay.json')).toThrow(
      /^nemo-relay\.json is not a valid ATIF trajectory: steps\[0\]\.metrics: only an agent step may have metrics .*; steps\[3\]\.tool_calls\[1\]\.arguments: /,
    );
  });
});
