import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OsworldDataset, OsworldTask } from './osworld-dataset.js';
import {
  extractOsworldDataset,
  OsworldDatasetError,
  UnknownOsworldDomainError,
  writeOsworldDataset,
} from './osworld-dataset-extraction.js';
import { loadOsworldDataset } from './osworld-dataset-loading.js';
import { formatPythonJson } from './python-compatible-format.js';

const EVALUATION_EXAMPLES = '/work/shared/osworld/evaluation_examples';
const SEED_FILE = '/work/shared/osworld-seed/osworld_dataset.json';

/**
 * Task files edited upstream after the seed was extracted (2026-02-08), with the fields that differ.
 * Derived by comparing the raw task files (not this extractor's output) with the seed, see below;
 * 05dd4c1d is xlang-ai/OSWorld PR #464 (2026-03-23), which reworded that instruction.
 */
const CHANGED_SINCE_SEED: Record<string, string[]> = {
  'chrome/480bcfea-d68f-4aaa-a0a9-2589ef319381': ['evaluator'],
  'chrome/93eabf48-6a27-4cb6-b963-7d5fe1e0d3a9': ['config', 'evaluator'],
  'chrome/82bc8d6a-36eb-4d2d-8801-ef714fb1e55a': ['evaluator'],
  'chrome/b070486d-e161-459b-aa2b-ef442d973b92': ['evaluator'],
  'libreoffice_calc/ecb0df7a-4e8d-4a03-b162-053391d3afaf': ['evaluator'],
  'libreoffice_impress/986fc832-6af2-417c-8845-9272b3a1528b': ['instruction'],
  'libreoffice_impress/b8adbc24-cef2-4b15-99d5-ecbe7ff445eb': ['instruction', 'evaluator'],
  'libreoffice_impress/05dd4c1d-c489-4c85-8389-a7836c4f0567': ['instruction'],
  'libreoffice_impress/04578141-1d42-4146-b9cf-6fab4ce5fd74': ['evaluator'],
  'multi_apps/f8cfa149-d1c1-4215-8dac-4a0932bad3c2': ['evaluator'],
  'multi_apps/b5062e3e-641c-4e3a-907b-ac864d2e7652': ['config'],
  'multi_apps/00fa164e-2612-4439-992e-157d019a8436': ['instruction'],
  'multi_apps/873cafdd-a581-47f6-8b33-b9696ddb7b05': ['evaluator'],
  'multi_apps/ce2b64a2-ddc1-4f91-8c7d-a88be7121aac': ['instruction', 'evaluator'],
  'os/37887e8c-da15-4192-923c-08fa390a176d': ['instruction'],
  'thunderbird/dfac9ee8-9bc4-4cdc-b465-4a4bfcd2f397': ['evaluator'],
  'thunderbird/15c3b339-88f7-4a86-ab16-e71c58dcb01e': ['evaluator'],
  'thunderbird/dd84e895-72fd-4023-a336-97689ded257c': ['evaluator'],
  'thunderbird/d38192b0-17dc-4e1d-99c3-786d0117de77': ['evaluator'],
  'vlc/5ac2891a-eacd-4954-b339-98abba077adb': ['config', 'evaluator'],
};
/** The fields an upstream task fix edits; everything else is the extractor's mapping and defaults. */
const CONTENT_FIELDS = ['instruction', 'config', 'evaluator'] as const;

let extracted: OsworldDataset;
let seed: OsworldDataset;
let seedText: string;
let scratch: string;

beforeAll(async () => {
  extracted = (await extractOsworldDataset({ osworldDir: EVALUATION_EXAMPLES })).dataset;
  seedText = await readFile(SEED_FILE, 'utf8');
  seed = JSON.parse(seedText) as OsworldDataset;
  scratch = await mkdtemp(path.join(tmpdir(), 'osworld-extract-'));
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('extractOsworldDataset on the real OSWorld data', () => {
  it('extracts all 369 tasks with the per-domain counts, domains in sorted order', () => {
    expect(extracted.metadata.total_tasks).toBe(369);
    expect(extracted.tasks).toHaveLength(369);
    expect(Object.entries(extracted.metadata.domains)).toEqual([
      ['chrome', 46],
      ['gimp', 26],
      ['libreoffice_calc', 47],
      ['libreoffice_impress', 47],
      ['libreoffice_writer', 23],
      ['multi_apps', 101],
      ['os', 24],
      ['thunderbird', 15],
      ['vlc', 17],
      ['vs_code', 23],
    ]);
    expect(extracted.metadata.extracted_at).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$/,
    );
  });

  it('keeps the task list order inside each domain, as the seed does', () => {
    const seedOrder = seed.tasks.map((task) => `${task.domain}/${task.task_id}`);
    const ours = extracted.tasks.map((task) => `${task.domain}/${task.task_id}`);
    expect(ours.filter((key) => key !== 'vs_code/982d12a5-beab-424f-8d38-d2a48429e511')).toEqual(
      seedOrder,
    );
  });

  it('fills a missing config with [] (os/c288e301 has none)', () => {
    const task = extracted.tasks.find((candidate) => candidate.task_id.startsWith('c288e301'));
    expect(task?.config).toEqual([]);
  });

  it('matches the seed field by field (and key order) for every task whose file did not change', async () => {
    // Deciding "the file did not change" must not use this extractor: the raw task file is read
    // directly and its content fields (instruction, config, evaluator) are compared with the
    // seed's. Those are what upstream fixes edit; the other fields are pure mapping and defaults,
    // which is what this test checks.
    const changed: Record<string, string[]> = {};
    for (const seedTask of seed.tasks) {
      const key = `${seedTask.domain}/${seedTask.task_id}`;
      const raw = JSON.parse(
        await readFile(path.join(EVALUATION_EXAMPLES, 'examples', `${key}.json`), 'utf8'),
      ) as Record<string, unknown>;
      const differing = CONTENT_FIELDS.filter(
        (field) =>
          JSON.stringify(raw[field] ?? (field === 'config' ? [] : undefined)) !==
          JSON.stringify(seedTask[field]),
      );
      if (differing.length > 0) changed[key] = differing;
    }
    expect(changed).toEqual(CHANGED_SINCE_SEED);

    const ours = new Map(extracted.tasks.map((task) => [`${task.domain}/${task.task_id}`, task]));
    let compared = 0;
    for (const seedTask of seed.tasks) {
      const key = `${seedTask.domain}/${seedTask.task_id}`;
      const task = ours.get(key);
      expect(task, key).toBeDefined();
      const differing = CHANGED_SINCE_SEED[key];
      if (differing === undefined) {
        expect(formatPythonJson(task), key).toBe(formatPythonJson(seedTask));
        compared++;
      } else {
        const unchangedFields = Object.keys(seedTask).filter((field) => !differing.includes(field));
        for (const field of unchangedFields) {
          expect(task?.[field as keyof OsworldTask], `${key} ${field}`).toEqual(
            seedTask[field as keyof OsworldTask],
          );
        }
      }
    }
    expect(compared).toBe(348);
  });

  it('serialises exactly like the original json.dump, but for integral floats (3.0 is written 3)', () => {
    const integralFloats = /^(\s*(?:"[^"]*": )?-?\d+)\.0(,?)$/gm;
    expect(formatPythonJson(seed)).toBe(seedText.replace(integralFloats, '$1$2'));
  });

  it('extracts only the requested domains, sorted', async () => {
    const { dataset } = await extractOsworldDataset({
      osworldDir: '/work/shared/osworld',
      domains: ['vlc', 'gimp'],
    });
    expect(dataset.metadata.domains).toEqual({ gimp: 26, vlc: 17 });
    expect(dataset.tasks[0]?.domain).toBe('gimp');
  });

  it('reads another task list, from the working directory or else inside evaluation_examples', async () => {
    const { dataset } = await extractOsworldDataset({
      osworldDir: EVALUATION_EXAMPLES,
      testAllFile: 'test_small.json',
    });
    expect(dataset.metadata.total_tasks).toBe(39);
    const ownList = path.join(scratch, 'two-tasks.json');
    await writeFile(
      ownList,
      JSON.stringify({
        os: ['c288e301-e626-4b98-a1ab-159dcb162af5'],
        vlc: ['59f21cfb-0120-4326-b255-a5b827b38967'],
      }),
    );
    const relative = path.relative(process.cwd(), ownList);
    const own = await extractOsworldDataset({
      osworldDir: EVALUATION_EXAMPLES,
      testAllFile: relative,
    });
    expect(own.dataset.metadata.domains).toEqual({ os: 1, vlc: 1 });
  });

  it('rejects an unknown domain, listing the available ones', async () => {
    const error = await extractOsworldDataset({
      osworldDir: EVALUATION_EXAMPLES,
      domains: ['chrome', 'excel'],
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnknownOsworldDomainError);
    expect((error as Error).message).toContain(`'excel'`);
    expect((error as Error).message).toContain(
      'Available: chrome, gimp, libreoffice_calc, libreoffice_impress, libreoffice_writer, multi_apps, os, thunderbird, vlc, vs_code',
    );
  });
});

describe('extractOsworldDataset on irregular data', () => {
  async function makeOsworldCopy(
    name: string,
    testAll: unknown,
    files: Record<string, unknown>,
  ): Promise<string> {
    const root = path.join(scratch, name);
    for (const [file, content] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(root, 'evaluation_examples', 'examples', file)), {
        recursive: true,
      });
      await writeFile(
        path.join(root, 'evaluation_examples', 'examples', file),
        JSON.stringify(content),
      );
    }
    await mkdir(path.join(root, 'evaluation_examples', 'examples'), { recursive: true });
    await writeFile(
      path.join(root, 'evaluation_examples', 'test_all.json'),
      JSON.stringify(testAll),
    );
    return root;
  }

  it('skips a listed task whose file is missing, with a warning, and fills absent fields with the defaults', async () => {
    const root = await makeOsworldCopy(
      'missing',
      { os: ['t1', 'gone'], chrome: ['t2'] },
      {
        'os/t1.json': { id: 't1', instruction: 'Do it', proxy: true },
        'chrome/t2.json': { instruction: 'Browse', source: ['a', 'b'] },
      },
    );
    const { dataset, warnings } = await extractOsworldDataset({
      osworldDir: root,
      now: () => new Date(Date.UTC(2026, 0, 2)),
    });
    expect(warnings).toEqual([
      `Task file not found: ${path.join(root, 'evaluation_examples', 'examples', 'os', 'gone.json')}`,
    ]);
    expect(dataset).toEqual({
      metadata: {
        total_tasks: 2,
        domains: { chrome: 1, os: 1 },
        extracted_at: '2026-01-02T00:00:00+00:00',
      },
      tasks: [
        {
          task_id: 't2',
          domain: 'chrome',
          instruction: 'Browse',
          snapshot: '',
          related_apps: [],
          source: ['a', 'b'],
          config: [],
          evaluator: {},
          trajectory: '',
          proxy: false,
          fixed_ip: false,
          possibility_of_env_change: 'low',
        },
        {
          task_id: 't1',
          domain: 'os',
          instruction: 'Do it',
          snapshot: '',
          related_apps: [],
          source: '',
          config: [],
          evaluator: {},
          trajectory: '',
          proxy: true,
          fixed_ip: false,
          possibility_of_env_change: 'low',
        },
      ],
    });
  });

  it('warns about an id reused across domains and keeps both (key by domain and id)', async () => {
    const root = await makeOsworldCopy(
      'reused',
      { chrome: ['same'], thunderbird: ['same'] },
      {
        'chrome/same.json': { id: 'same', instruction: 'a' },
        'thunderbird/same.json': { id: 'same', instruction: 'b' },
      },
    );
    const { dataset, warnings } = await extractOsworldDataset({ osworldDir: root });
    expect(dataset.tasks.map((task) => `${task.domain}/${task.task_id}`)).toEqual([
      'chrome/same',
      'thunderbird/same',
    ]);
    expect(warnings).toEqual([
      `Task id same appears in domains 'chrome' and 'thunderbird'; key tasks by (domain, id)`,
    ]);
  });

  it('names the file when a task file is not valid', async () => {
    const root = await makeOsworldCopy(
      'invalid',
      { os: ['bad'] },
      { 'os/bad.json': { id: 'bad', instruction: 42 } },
    );
    const error = await extractOsworldDataset({ osworldDir: root }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(OsworldDatasetError);
    expect((error as Error).message).toContain(path.join('os', 'bad.json'));
    expect((error as Error).message).toContain('instruction');
  });
});

describe('loadOsworldDataset', () => {
  it('loads an extracted dataset file (the seed)', async () => {
    const { dataset, warnings } = await loadOsworldDataset(SEED_FILE);
    expect(dataset.tasks).toHaveLength(368);
    expect(warnings).toEqual([]);
  });

  it('extracts from an OSWorld directory', async () => {
    const { dataset } = await loadOsworldDataset('/work/shared/osworld', { domains: ['os'] });
    expect(dataset.metadata).toMatchObject({ total_tasks: 24, domains: { os: 24 } });
  });

  it('round-trips what writeOsworldDataset wrote, and filters it by domain', async () => {
    const file = path.join(scratch, 'out', 'osworld_dataset.json');
    await writeOsworldDataset(file, extracted);
    expect((await loadOsworldDataset(file)).dataset).toEqual(extracted);
    const { dataset } = await loadOsworldDataset(file, { domains: ['vs_code'] });
    expect(dataset.metadata).toEqual({
      ...extracted.metadata,
      total_tasks: 23,
      domains: { vs_code: 23 },
    });
    await expect(loadOsworldDataset(file, { domains: ['excel'] })).rejects.toBeInstanceOf(
      UnknownOsworldDomainError,
    );
  });

  it('names the file and the problem for a file that is not a dataset', async () => {
    const file = path.join(scratch, 'not-a-dataset.json');
    await writeFile(
      file,
      JSON.stringify({ metadata: { total_tasks: 1 }, tasks: [{ task_id: 'x' }] }),
    );
    const error = await loadOsworldDataset(file).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OsworldDatasetError);
    expect((error as Error).message).toContain(file);
    expect((error as Error).message).toMatch(/tasks\[0\]\.domain|metadata\.domains/);
    await expect(loadOsworldDataset(path.join(scratch, 'nothing-here.json'))).rejects.toThrow(
      /nothing-here\.json: no such file/,
    );
    await writeFile(path.join(scratch, 'broken.json'), '{"metadata": ');
    await expect(loadOsworldDataset(path.join(scratch, 'broken.json'))).rejects.toThrow(
      /broken\.json: invalid JSON/,
    );
  });
});
