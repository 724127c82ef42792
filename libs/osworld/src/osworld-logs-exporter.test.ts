import { mkdtemp, readdir, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  writeOsworldLogs,
  type OsworldLogStep,
  type OsworldLogTask,
} from './osworld-logs-exporter.js';

describe('writeOsworldLogs', () => {
  let outDir: string;
  beforeEach(async () => {
    outDir = await mkdtemp(path.join(tmpdir(), 'osworld-logs-'));
  });
  afterEach(async () => {
    await rm(outDir, { recursive: true, force: true });
  });

  const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
  const successSteps: OsworldLogStep[] = [
    {
      step_number: 1,
      timestamp: '2026-02-08T10:00:05.000Z',
      message_id: 'm-1',
      tool_calls: [{ name: 'computer_screenshot', input: {} }],
      text_content: 'Looking',
      screenshot: png,
    },
    {
      step_number: 2,
      timestamp: '2026-02-08T10:00:09.000Z',
      message_id: 'm-2',
      tool_calls: [
        { name: 'set_task_status', input: { status: 'completed', description: 'Done' } },
      ],
      text_content: '',
      screenshot: null,
    },
  ];
  const successTask: OsworldLogTask = {
    task_id: '030eeff7-b492-4218-b312-701ec99ee0cc',
    domain: 'chrome',
    instruction: 'Enable “Do Not Track”',
    bytebot_task_id: 'b-1',
    status: 'success',
    final_api_status: 'COMPLETED',
    total_steps: 2,
    start_time: '2026-02-08T10:00:00.100000+00:00',
    end_time: '2026-02-08T10:01:35.350000+00:00',
    error_message: null,
    steps: successSteps,
  };
  const createFailedTask: OsworldLogTask = {
    task_id: 'bb5e4c0d-f964-439c-97b6-bdb9747de3f4',
    domain: 'chrome',
    instruction: 'Make Bing the search engine',
    bytebot_task_id: '',
    status: 'error',
    final_api_status: 'CREATE_FAILED',
    total_steps: 0,
    start_time: '2026-02-08T10:02:00+00:00',
    end_time: '2026-02-08T10:02:01+00:00',
    error_message: 'POST /tasks failed with HTTP 500: Internal server error',
    steps: [],
  };

  it('writes step files, screenshots, result.json and final.json in the original layout', async () => {
    async function* tasks(): AsyncIterable<OsworldLogTask> {
      yield {
        ...successTask,
        steps: (async function* () {
          yield* successSteps;
        })(),
      };
      yield createFailedTask;
    }
    const finalJson = await writeOsworldLogs(outDir, {
      benchmark_config: {
        max_steps: 100,
        model: { provider: 'proxy', name: 'fake-model', title: 'Fake' },
      },
      started_at: '2026-02-08T10:00:00+00:00',
      finished_at: '2026-02-08T10:31:35.250000+00:00',
      tasks: tasks(),
    });

    const taskDir = path.join(outDir, successTask.task_id);
    expect((await readdir(taskDir)).sort()).toEqual([
      'result.json',
      'screenshots',
      'step_001.json',
      'step_002.json',
    ]);
    expect(await readdir(path.join(taskDir, 'screenshots'))).toEqual(['step_001.png']);
    expect(await readFile(path.join(taskDir, 'screenshots', 'step_001.png'))).toEqual(png);
    expect(JSON.parse(await readFile(path.join(taskDir, 'step_001.json'), 'utf8'))).toEqual({
      step_number: 1,
      timestamp: '2026-02-08T10:00:05.000Z',
      message_id: 'm-1',
      tool_calls: [{ name: 'computer_screenshot', input: {} }],
      text_content: 'Looking',
      has_screenshot: true,
      screenshot_file: 'screenshots/step_001.png',
    });
    expect(JSON.parse(await readFile(path.join(taskDir, 'step_002.json'), 'utf8'))).toMatchObject({
      has_screenshot: false,
      screenshot_file: null,
    });

    const resultText = await readFile(path.join(taskDir, 'result.json'), 'utf8');
    expect(resultText).toContain('"instruction": "Enable \\u201cDo Not Track\\u201d"');
    expect(Object.entries(JSON.parse(resultText))).toEqual([
      ['task_id', successTask.task_id],
      ['domain', 'chrome'],
      ['instruction', 'Enable “Do Not Track”'],
      ['bytebot_task_id', 'b-1'],
      ['status', 'success'],
      ['final_api_status', 'COMPLETED'],
      ['total_steps', 2],
      ['start_time', '2026-02-08T10:00:00.100000+00:00'],
      ['end_time', '2026-02-08T10:01:35.350000+00:00'],
      ['duration_seconds', 95.2],
      ['error_message', null],
    ]);
    // As the original: a failed create leaves an empty screenshots directory and no result.json.
    await expect(
      readFile(path.join(outDir, createFailedTask.task_id, 'result.json'), 'utf8'),
    ).rejects.toThrow(/ENOENT/);
    expect(await readdir(path.join(outDir, createFailedTask.task_id, 'screenshots'))).toEqual([]);

    const finalText = await readFile(path.join(outDir, 'final.json'), 'utf8');
    // Python's floats stay floats (2.0, not 2); the failed create's duration is the int 0.
    expect(finalText).toContain('"avg_steps": 2.0,');
    expect(finalText).toContain('"success_rate": 0.5,');
    expect(finalText).toMatch(
      /"status": "error",\n\s+"total_steps": 0,\n\s+"duration_seconds": 0\n/,
    );
    const written = JSON.parse(finalText);
    expect(written).toEqual(finalJson);
    expect(Object.keys(written)).toEqual([
      'benchmark_config',
      'summary',
      'per_domain',
      'started_at',
      'finished_at',
      'total_duration_seconds',
      'tasks',
    ]);
    expect(written).toMatchObject({
      summary: {
        total_tasks: 2,
        completed: 1,
        failed: 0,
        cancelled: 0,
        errors: 1,
        success_rate: 0.5,
        avg_steps: 2,
        avg_duration_seconds: 95.2,
        max_steps_task: { task_id: successTask.task_id, steps: 2 },
        min_steps_task: { task_id: successTask.task_id, steps: 2 },
        longest_task: { task_id: successTask.task_id, duration_seconds: 95.2 },
      },
      per_domain: { chrome: { total: 2, completed: 1, success_rate: 0.5, avg_steps: 2 } },
      total_duration_seconds: 1895.2,
      tasks: [
        {
          task_id: successTask.task_id,
          domain: 'chrome',
          status: 'success',
          total_steps: 2,
          duration_seconds: 95.2,
        },
        {
          task_id: createFailedTask.task_id,
          domain: 'chrome',
          status: 'error',
          total_steps: 0,
          duration_seconds: 0,
        },
      ],
    });
  });

  it('reads screenshots through a reader and removes step files of an earlier, longer export', async () => {
    const taskDir = path.join(outDir, successTask.task_id);
    await mkdir(path.join(taskDir, 'screenshots'), { recursive: true });
    await writeFile(path.join(taskDir, 'step_007.json'), '{}');
    await writeFile(path.join(taskDir, 'screenshots', 'step_007.png'), 'old');
    await writeOsworldLogs(outDir, {
      benchmark_config: {},
      started_at: '2026-02-08T10:00:00+00:00',
      finished_at: '2026-02-08T10:00:00+00:00',
      tasks: [{ ...successTask, steps: [{ ...successSteps[0]!, screenshot: async () => png }] }],
    });
    expect((await readdir(taskDir)).sort()).toEqual([
      'result.json',
      'screenshots',
      'step_001.json',
    ]);
    expect(await readdir(path.join(taskDir, 'screenshots'))).toEqual(['step_001.png']);
  });

  it('refuses a task id that cannot name a directory', async () => {
    await expect(
      writeOsworldLogs(outDir, {
        benchmark_config: {},
        started_at: '2026-02-08T10:00:00+00:00',
        finished_at: '2026-02-08T10:00:00+00:00',
        tasks: [{ ...createFailedTask, task_id: '../escape' }],
      }),
    ).rejects.toThrow(/cannot name a directory/);
  });
});
