import { describe, expect, it } from 'vitest';
import { AtifValidationError, parseAtifTrajectory } from './atif-reader.js';
import { isIso8601Timestamp } from './atif-schema.js';

// The ATIF-v1.7 model against the RFC: a trajectory using every field the RFC defines is taken as
// it is, and each rule of the RFC refuses a document that breaks it, naming the field.

/** Every field of every ATIF-v1.7 object, the optional ones included. */
function everyField(): Record<string, unknown> {
  return {
    schema_version: 'ATIF-v1.7',
    session_id: 'run-1',
    trajectory_id: 'root',
    agent: {
      name: 'planner',
      version: '2.1.0',
      model_name: 'model-a',
      tool_definitions: [
        {
          type: 'function',
          function: {
            name: 'search',
            description: 'Searches',
            parameters: { type: 'object', properties: { q: { type: 'string' } } },
          },
        },
      ],
      extra: { prompting: 'react' },
    },
    steps: [
      {
        step_id: 1,
        timestamp: '2026-04-01T10:00:00Z',
        source: 'system',
        message: 'You are a planner.',
        llm_call_count: 0,
        is_copied_context: true,
        extra: { context_management: { type: 'compaction', boundary: 'replace' } },
        observation: {
          results: [
            {
              content: 'Summary of earlier turns',
              subagent_trajectory_ref: [
                {
                  trajectory_id: 'child',
                  trajectory_path: null,
                  session_id: 'run-1',
                  extra: { summary: 'compacted' },
                },
              ],
            },
          ],
        },
      },
      {
        step_id: 2,
        timestamp: '2026-04-01T10:00:01.250+02:00',
        source: 'user',
        message: [
          { type: 'text', text: 'What is on this page?' },
          { type: 'image', source: { media_type: 'image/png', path: 'images/page.png' } },
        ],
      },
      {
        step_id: 3,
        timestamp: '2026-04-01T10:00:02',
        source: 'agent',
        model_name: 'model-b',
        reasoning_effort: 'medium',
        message: 'Searching.',
        reasoning_content: 'A search answers it.',
        tool_calls: [
          {
            tool_call_id: 'c1',
            function_name: 'search',
            arguments: { q: 'page' },
            extra: { timeout_s: 5 },
          },
          { tool_call_id: 'c2', function_name: 'noop', arguments: {} },
        ],
        observation: {
          results: [
            {
              source_call_id: 'c1',
              content: [
                { type: 'text', text: 'found' },
                {
                  type: 'image',
                  source: { media_type: 'image/webp', path: 'https://x.test/a.webp' },
                },
              ],
              extra: { retrieval_score: 0.9 },
            },
            { source_call_id: 'c2', content: 'ok' },
            { content: 'a result of no tool call' },
          ],
        },
        metrics: {
          prompt_tokens: 100,
          completion_tokens: 3,
          cached_tokens: 40,
          cost_usd: 0.0012,
          prompt_token_ids: [1, 2, 3],
          completion_token_ids: [4, 5, 6],
          logprobs: [-0.1, -0.2, -0.3],
          extra: { reasoning_tokens: 1 },
        },
        llm_call_count: 1,
        is_copied_context: false,
        extra: { latency_ms: 40 },
      },
      { step_id: 4, source: 'agent', message: '', llm_call_count: 0, tool_calls: [] },
    ],
    notes: 'every field',
    final_metrics: {
      total_prompt_tokens: 100,
      total_completion_tokens: 3,
      total_cached_tokens: 40,
      total_cost_usd: 0.0012,
      total_steps: 4,
      extra: { wall_s: 2 },
    },
    continued_trajectory_ref: 'part-2.json',
    extra: { custom: [1, 2] },
    subagent_trajectories: [
      {
        schema_version: 'ATIF-v1.7',
        trajectory_id: 'child',
        agent: { name: 'summariser', version: '1' },
        steps: [{ step_id: 1, source: 'agent', message: 'summary' }],
      },
    ],
  };
}

function issuesOf(document: unknown): Array<{ path: string; message: string }> {
  try {
    parseAtifTrajectory(document);
  } catch (error) {
    if (error instanceof AtifValidationError) return [...error.issues];
    throw error;
  }
  throw new Error('the document was taken');
}

/** A copy of `everyField()` changed by `change`. */
function changed(change: (document: any) => void): unknown {
  const document = everyField();
  change(document);
  return document;
}

describe('the ATIF-v1.7 model', () => {
  it('takes a trajectory that uses every field of the RFC, unchanged', () => {
    const document = everyField();
    expect(parseAtifTrajectory(structuredClone(document))).toEqual(document);
  });

  it('takes the smallest trajectory, and optional fields given as null', () => {
    const smallest = {
      schema_version: 'ATIF-v1.0',
      agent: { name: 'a', version: '1' },
      steps: [{ step_id: 1, source: 'user', message: '' }],
    };
    expect(parseAtifTrajectory(smallest)).toEqual(smallest);
    const nulls = {
      ...smallest,
      session_id: null,
      notes: null,
      final_metrics: null,
      extra: null,
      steps: [{ step_id: 1, source: 'agent', message: 'x', model_name: null, metrics: null }],
    };
    expect(parseAtifTrajectory(nulls)).toEqual(nulls);
  });

  it('refuses a field of the wrong type with a message naming the field', () => {
    expect(issuesOf(changed((d) => (d.steps[2].metrics.prompt_tokens = '100')))).toEqual([
      {
        path: 'steps[2].metrics.prompt_tokens',
        message: expect.stringMatching(/expected number, received string/),
      },
    ]);
    expect(issuesOf(changed((d) => (d.final_metrics.total_cost_usd = '0.1')))).toEqual([
      { path: 'final_metrics.total_cost_usd', message: expect.stringMatching(/expected number/) },
    ]);
    expect(issuesOf(changed((d) => (d.steps[2].tool_calls[0].arguments = 'q=page')))).toEqual([
      {
        path: 'steps[2].tool_calls[0].arguments',
        message: expect.stringMatching(/expected record/),
      },
    ]);
    expect(issuesOf(changed((d) => (d.steps[0].step_id = 1.5)))).toEqual([
      { path: 'steps[0].step_id', message: expect.stringMatching(/expected int/) },
    ]);
    // Inside a string-or-parts field, the part that is wrong is named.
    expect(issuesOf(changed((d) => (d.steps[1].message[0].text = 7)))).toEqual([
      { path: 'steps[1].message[0].text', message: expect.stringMatching(/expected string/) },
    ]);
    expect(issuesOf(changed((d) => (d.steps[1].message = 7)))).toEqual([
      { path: 'steps[1].message', message: 'expected a string or an array of content parts' },
    ]);
    const error = (() => {
      try {
        parseAtifTrajectory(
          changed((d) => (d.agent.version = 2)),
          'trajectory.json',
        );
      } catch (caught) {
        return caught as Error;
      }
    })();
    expect(error?.message).toMatch(
      /^trajectory\.json is not a valid ATIF trajectory: agent\.version: /,
    );
  });

  it('requires what the RFC requires', () => {
    expect(issuesOf(changed((d) => delete d.schema_version))).toEqual([
      { path: 'schema_version', message: expect.any(String) },
    ]);
    expect(issuesOf(changed((d) => delete d.agent.version))).toEqual([
      { path: 'agent.version', message: expect.any(String) },
    ]);
    expect(issuesOf(changed((d) => delete d.steps[2].message))).toEqual([
      { path: 'steps[2].message', message: expect.any(String) },
    ]);
    expect(issuesOf(changed((d) => delete d.steps[2].tool_calls[1].arguments))).toEqual([
      { path: 'steps[2].tool_calls[1].arguments', message: expect.any(String) },
    ]);
    expect(issuesOf(changed((d) => delete d.steps[2].observation.results))).toEqual([
      { path: 'steps[2].observation.results', message: expect.any(String) },
    ]);
    expect(issuesOf(changed((d) => delete d.steps[1].message[1].source.path))).toEqual([
      { path: 'steps[1].message[1].source.path', message: expect.any(String) },
    ]);
    expect(issuesOf(changed((d) => (d.steps = [])))).toEqual([
      { path: 'steps', message: expect.stringMatching(/>=1 items/) },
    ]);
  });

  it('refuses keys the RFC does not define, which belong in extra', () => {
    expect(issuesOf(changed((d) => (d.steps[2].reward = 1)))).toEqual([
      {
        path: 'steps[2].reward',
        message: 'not an ATIF field (custom data goes in an extra object)',
      },
    ]);
    expect(issuesOf(changed((d) => (d.steps[1].message[1].text = 'caption')))).toEqual([
      { path: 'steps[1].message[1].text', message: expect.any(String) },
    ]);
  });

  it('keeps the values the RFC allows', () => {
    expect(issuesOf(changed((d) => (d.schema_version = 'ATIF-v2.0')))).toEqual([
      { path: 'schema_version', message: expect.stringMatching(/ATIF-v1\.7/) },
    ]);
    expect(issuesOf(changed((d) => (d.steps[2].source = 'tool')))).toEqual([
      { path: 'steps[2].source', message: expect.any(String) },
    ]);
    expect(
      issuesOf(changed((d) => (d.steps[1].message[1].source.media_type = 'image/bmp'))),
    ).toEqual([{ path: 'steps[1].message[1].source.media_type', message: expect.any(String) }]);
    expect(issuesOf(changed((d) => (d.steps[1].message[1].type = 'audio')))).toEqual([
      { path: 'steps[1].message[1].type', message: expect.any(String) },
    ]);
    expect(issuesOf(changed((d) => (d.steps[2].llm_call_count = -1)))).toEqual([
      { path: 'steps[2].llm_call_count', message: expect.any(String) },
    ]);
    expect(issuesOf(changed((d) => (d.steps[2].timestamp = '2026-02-30T10:00:00Z')))).toEqual([
      { path: 'steps[2].timestamp', message: 'expected an ISO 8601 timestamp' },
    ]);
    expect(issuesOf(changed((d) => (d.steps[2].timestamp = 'yesterday')))).toEqual([
      { path: 'steps[2].timestamp', message: 'expected an ISO 8601 timestamp' },
    ]);
  });

  it('checks the rules between fields', () => {
    expect(issuesOf(changed((d) => (d.steps[2].step_id = 5)))).toEqual([
      { path: 'steps[2].step_id', message: 'expected 3 (step ids are sequential from 1), got 5' },
    ]);
    expect(issuesOf(changed((d) => (d.steps[1].metrics = { prompt_tokens: 1 })))).toEqual([
      {
        path: 'steps[1].metrics',
        message: "only an agent step may have metrics (this step's source is user)",
      },
    ]);
    expect(issuesOf(changed((d) => (d.steps[0].reasoning_content = 'why')))).toEqual([
      { path: 'steps[0].reasoning_content', message: expect.stringMatching(/only an agent step/) },
    ]);
    expect(issuesOf(changed((d) => (d.steps[3].metrics = { prompt_tokens: 1 })))).toEqual([
      {
        path: 'steps[3].metrics',
        message: 'must be absent when llm_call_count is 0 (a deterministic dispatch)',
      },
    ]);
    expect(
      issuesOf(changed((d) => (d.steps[2].observation.results[1].source_call_id = 'c9'))),
    ).toEqual([
      {
        path: 'steps[2].observation.results[1].source_call_id',
        message: '"c9" is not the tool_call_id of a tool call of step 3',
      },
    ]);
    expect(issuesOf(changed((d) => (d.steps[2].tool_calls[1].tool_call_id = 'c1')))).toEqual([
      {
        path: 'steps[2].tool_calls[1].tool_call_id',
        message: 'duplicate tool_call_id "c1" in step 3',
      },
      // c2 is gone with it: its result refers to nothing.
      expect.objectContaining({ path: 'steps[2].observation.results[1].source_call_id' }),
    ]);
    expect(
      issuesOf(
        changed(
          (d) =>
            (d.steps[0].observation.results[0].subagent_trajectory_ref[0] = {
              session_id: 'run-1',
            }),
        ),
      ),
    ).toEqual([
      {
        path: 'steps[0].observation.results[0].subagent_trajectory_ref[0]',
        message: expect.stringMatching(/needs trajectory_id or trajectory_path/),
      },
    ]);
    expect(issuesOf(changed((d) => delete d.subagent_trajectories[0].trajectory_id))).toEqual([
      {
        path: 'subagent_trajectories[0].trajectory_id',
        message: 'required on an embedded subagent trajectory',
      },
    ]);
    expect(
      issuesOf(
        changed((d) => d.subagent_trajectories.push(structuredClone(d.subagent_trajectories[0]))),
      ),
    ).toEqual([
      {
        path: 'subagent_trajectories[1].trajectory_id',
        message: '"child" is not unique within subagent_trajectories',
      },
    ]);
    // An embedded trajectory is checked by the same rules.
    expect(issuesOf(changed((d) => (d.subagent_trajectories[0].steps[0].step_id = 2)))).toEqual([
      {
        path: 'subagent_trajectories[0].steps[0].step_id',
        message: expect.stringMatching(/expected 1/),
      },
    ]);
  });

  it('lists every problem of a document, not only the first', () => {
    const issues = issuesOf(
      changed((d) => {
        d.agent.name = 1;
        d.steps[2].metrics.completion_tokens = 'x';
        d.final_metrics.total_steps = 'four';
      }),
    );
    expect(issues.map((issue) => issue.path)).toEqual([
      'agent.name',
      'steps[2].metrics.completion_tokens',
      'final_metrics.total_steps',
    ]);
  });

  it('reads ISO 8601 dates and date-times as Python fromisoformat does after Z becomes +00:00', () => {
    for (const good of [
      '2025-10-16T14:30:00Z',
      '2025-10-16',
      '2025-10-16T14:30',
      '2025-10-16 14:30:00.123456',
      '2025-10-16T14:30:00-05:30',
      '2024-02-29T00:00:00+0100',
    ])
      expect(isIso8601Timestamp(good), good).toBe(true);
    for (const bad of [
      '2025-13-01',
      '2025-10-16T24:00:00Z',
      '2023-02-29',
      '16/10/2025',
      '2025-10-16T14:30:00ZZ',
    ])
      expect(isIso8601Timestamp(bad), bad).toBe(false);
  });
});
