import type {
  AttemptPhases,
  RunDetail,
  RunDetailContext,
  TaskDetailContext,
  TaskGrade,
  TaskPanel,
  TaskPanelCell,
  TaskPanelRow,
  TaskPanelText,
} from '@benchfleet/benchmark-kit';
import { defineQuery } from '@benchfleet/db';
import type { OsworldGradeRow, OsworldRunGradingRow } from './osworld-grades-repository.js';

// What the dashboard shows of graded OSWorld, as data it draws: the grade beside the agent's word
// (a task's latest grade of the attempt its outcome is from, as the `osworld_task_grades` view),
// the run's claimed × graded table, and each task's grading trace with its end-state files.

/** The grade the dashboard shows beside the agent-reported success. */
export const osworldTaskGrade: TaskGrade = {
  label: 'graded',
  meaning:
    "OSWorld's own evaluation of the desktop's end state (score 0–1; a graded success is a score of 1)",
  sql: `select g.score from osworld_grades g
  where g.run_id = t.run_id and g.task_id = t.task_id and g.attempt = t.attempts
  order by g.grade_no desc limit 1`,
};

/**
 * A graded attempt's phases, as its own grade (grade 1) recorded them in `setup.timings`. An
 * ungraded attempt (no grading stack) records none and shows the generic phases.
 */
export const osworldAttemptPhases: AttemptPhases = {
  names: [
    { name: 'reset', meaning: "the stack's reset command, then until the desktop answers" },
    { name: 'setup', meaning: "the task's config steps (downloads, files, windows)" },
    { name: 'agent', meaning: 'the Bytebot task, created to terminal' },
    { name: 'grading', meaning: 'postconfig, getters, metrics and storing the end state' },
  ],
  sql: `(select jsonb_build_object(
            'reset', (g.setup->'timings'->>'resetMs')::float8 + (g.setup->'timings'->>'readyMs')::float8,
            'setup', (g.setup->'timings'->>'setupMs')::float8,
            'agent', (g.setup->'timings'->>'agentMs')::float8,
            'grading', (g.setup->'timings'->>'gradeMs')::float8)
          from osworld_grades g
          where g.run_id = a.run_id and g.task_id = a.task_id and g.attempt = a.attempt
            and g.grade_no = 1 and g.setup ? 'timings')`,
};

export const runGradingQuery = defineQuery({
  name: 'osworld_run_grading',
  title: 'Claimed success × graded success of the run (view osworld_run_grading)',
  params: ['run'],
  sql: `
select tasks, graded, scored, no_score, degraded, ungraded,
       claimed_and_passed, claimed_but_failed, unclaimed_but_passed, unclaimed_and_failed,
       claimed_success_rate, graded_success_rate, mean_score
from osworld_run_grading
where run_id = :run`,
});

// Where a worker records the desktop image its stack runs (from its environment); none do yet.
export const desktopImagesQuery = defineQuery({
  name: 'osworld_desktop_images',
  title: 'The desktop images the tasks ran on, as the workers recorded them',
  params: ['run'],
  sql: `
select string_agg(distinct t.result->>'desktop_image', ', ') as images
from tasks t
where t.run_id = :run and t.result ? 'desktop_image'`,
});

export const taskGradeQuery = defineQuery({
  name: 'osworld_task_grade',
  title: "The task's grade: the latest of the attempt its outcome is from, with its trace",
  params: ['run', 'task'],
  sql: `
select g.attempt, g.grade_no, g.regraded_from, g.metric_version, g.final_signal, g.bytebot_status,
       g.final_signal_mapping, g.fidelity, g.fidelity_reason, g.substitutions, g.score, g.python_type,
       g.no_score_cause, g.reason, g.details, g.end_state, g.setup, g.graded_at,
       (select count(*) from osworld_grades o
        where o.run_id = g.run_id and o.task_id = g.task_id and o.attempt = g.attempt)::int as grades
from tasks t
join osworld_grades g on g.run_id = t.run_id and g.task_id = t.task_id and g.attempt = t.attempts
where t.run_id = :run and t.task_id = :task
order by g.grade_no desc
limit 1`,
});

const percent = (value: number | null): string =>
  value === null ? '–' : `${(value * 100).toFixed(1)}%`;

function claimedGradedPanel(row: OsworldRunGradingRow): TaskPanel {
  const claimedRow = (key: string, label: string, pass: number, fail: number): TaskPanelRow => ({
    key,
    cells: { claim: label, pass: String(pass), fail: String(fail), total: String(pass + fail) },
  });
  return {
    id: 'claimed-graded',
    title: 'Agent-reported against graded',
    paragraphs: [
      {
        field: 'grading-rates',
        text: [
          `Over the ${row.scored} tasks with a score: agent-reported success ${percent(row.claimed_success_rate)}, graded success ${percent(row.graded_success_rate)}; OSWorld's mean score `,
          { code: row.mean_score === null ? '–' : row.mean_score.toFixed(4) },
          '.',
        ],
      },
      {
        field: 'grading-coverage',
        text: [
          `${row.graded} of ${row.tasks} tasks graded; ${row.no_score} with no score, ${row.degraded} degraded (a named stand-in for what the desktop lacks), ${row.ungraded} ungraded.`,
          ...(row.claimed_but_failed > 0
            ? [
                {
                  muted: [
                    ` The agent claimed ${row.claimed_but_failed} successes the grade did not confirm.`,
                  ],
                },
              ]
            : []),
        ],
      },
    ],
    table: {
      name: 'claimed-graded',
      rowAttribute: 'claim',
      columns: [
        { key: 'claim', label: '' },
        { key: 'pass', label: 'graded success (score 1)', numeric: true, attribute: 'graded-pass' },
        {
          key: 'fail',
          label: 'graded failure (score < 1)',
          numeric: true,
          attribute: 'graded-fail',
        },
        { key: 'total', label: 'total', numeric: true },
      ],
      rows: [
        claimedRow(
          'claimed',
          'agent reported success',
          row.claimed_and_passed,
          row.claimed_but_failed,
        ),
        claimedRow(
          'not-claimed',
          'agent did not',
          row.unclaimed_but_passed,
          row.unclaimed_and_failed,
        ),
      ],
    },
  };
}

/** OSWorld's `display.runDetail`: the claimed × graded table of a graded run; the desktop images. */
export async function osworldRunDetail({ query }: RunDetailContext): Promise<RunDetail> {
  const [[grading], [images]] = await Promise.all([
    query<OsworldRunGradingRow>(runGradingQuery),
    query<{ images: string | null }>(desktopImagesQuery),
  ]);
  return {
    // A run nobody graded shows the agent's word only, as the original scripts do.
    panels: grading && grading.graded > 0 ? [claimedGradedPanel(grading)] : [],
    provenance: [{ label: 'desktop image', value: images?.images ?? null }],
  };
}

type TaskGradeRow = Pick<
  OsworldGradeRow,
  | 'attempt'
  | 'grade_no'
  | 'regraded_from'
  | 'metric_version'
  | 'final_signal'
  | 'bytebot_status'
  | 'final_signal_mapping'
  | 'fidelity'
  | 'fidelity_reason'
  | 'substitutions'
  | 'score'
  | 'python_type'
  | 'no_score_cause'
  | 'reason'
  | 'details'
  | 'end_state'
  | 'setup'
  | 'graded_at'
> & { grades: number };

interface EndStateEntry {
  name: string;
  size?: number;
  sha256?: string;
  uri: string;
}

/** A trace event as recorded (`GradeDetails.trace`); read as stored, fields may be missing. */
interface TraceEvent {
  kind?: string;
  steps?: number;
  slot?: { side?: string; index?: number | null };
  type?: string;
  name?: string;
  index?: number | null;
  config?: unknown;
  args?: unknown;
  options?: unknown;
  output?: unknown;
  value?: { type?: string; value?: unknown };
  raised?: { type?: string; message?: string };
}

const CACHE = '<CACHE>/';

function short(value: unknown, limit = 240): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'None');
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}

/** A getter's output, its cache paths linked to the end-state file the artifact store keeps. */
function outputCell(output: unknown, files: ReadonlyMap<string, EndStateEntry>): TaskPanelCell {
  const paths = (Array.isArray(output) ? output : [output]).filter(
    (item): item is string => typeof item === 'string' && item.startsWith(CACHE),
  );
  const linked = paths.flatMap((path) => {
    const file = files.get(path.slice(CACHE.length));
    return file ? [{ artifact: file.uri, label: file.name }] : [];
  });
  if (linked.length === 0) return short(output);
  return {
    text: [short(output), ' → ', ...linked.flatMap((link, i) => (i ? [', ', link] : [link]))],
  };
}

function traceRows(trace: readonly TraceEvent[], files: ReadonlyMap<string, EndStateEntry>) {
  return trace.map((event, i): TaskPanelRow => {
    const key = String(i + 1);
    if (event.kind === 'getter') {
      const slot = event.slot
        ? `${event.slot.side ?? ''}${event.slot.index === null || event.slot.index === undefined ? '' : `[${event.slot.index}]`}`
        : '';
      return {
        key,
        cells: {
          n: key,
          kind: 'getter',
          call: `${event.type ?? '?'} (${slot})`,
          inputs: short(event.config),
          result: event.raised
            ? `raised ${event.raised.type ?? ''}: ${event.raised.message ?? ''}`
            : outputCell(event.output, files),
        },
      };
    }
    if (event.kind === 'metric') {
      const value = event.value;
      return {
        key,
        cells: {
          n: key,
          kind: 'metric',
          call: `${event.name ?? '?'}${event.index === null || event.index === undefined ? '' : ` [${event.index}]`}`,
          inputs: short({ args: event.args, options: event.options }),
          result: event.raised
            ? `raised ${event.raised.type ?? ''}: ${event.raised.message ?? ''}`
            : value
              ? `${short(value.value)} (${value.type ?? '?'})`
              : '–',
        },
      };
    }
    return {
      key,
      cells: {
        n: key,
        kind: event.kind ?? '?',
        call: `${event.steps ?? 0} step(s)`,
        inputs: '',
        result: '',
      },
    };
  });
}

function verdictText(grade: TaskGradeRow): TaskPanelText[] {
  if (grade.score === null)
    return [
      'No score: ',
      { code: grade.no_score_cause ?? '?' },
      ...(grade.reason ? [{ muted: [` — ${grade.reason}`] }] : []),
    ];
  return [
    'Score ',
    { code: `${grade.score} (${grade.python_type ?? '?'})` },
    grade.score === 1 ? ': graded success' : ': graded failure',
  ];
}

function fidelityText(grade: TaskGradeRow): TaskPanelText[] {
  const level = { chip: `fidelity: ${grade.fidelity}` };
  if (grade.fidelity === 'degraded')
    return [level, ` stand-ins: ${grade.substitutions.join(', ') || 'none named'}`];
  if (grade.fidelity === 'ungraded') return [level, ` ${grade.fidelity_reason ?? ''}`];
  return [level, ' setup and evaluation as OSWorld runs them'];
}

function setupText(grade: TaskGradeRow): TaskPanelText[] {
  if (grade.regraded_from !== null)
    return [
      `Regrade: scored again from the end state grade ${grade.regraded_from} saved (nothing was set up again).`,
    ];
  const record = grade.setup as {
    reset?: { command?: string; exitCode?: number | null } | null;
    setup?: { steps?: unknown[]; downloads?: unknown[] } | null;
  } | null;
  if (!record) return ['Before the agent: not recorded.'];
  const reset = record.reset
    ? `reset by ${record.reset.command ?? '?'} (exit ${record.reset.exitCode ?? '?'})`
    : 'no reset';
  const steps = record.setup
    ? `${record.setup.steps?.length ?? 0} config step(s), ${record.setup.downloads?.length ?? 0} download(s)`
    : 'not set up';
  return [`Before the agent: ${reset}; ${steps}.`];
}

function gradePanel(grade: TaskGradeRow, claimed: boolean | null): TaskPanel {
  const details = (grade.details ?? {}) as { postconfig?: unknown[] | null; trace?: TraceEvent[] };
  const files = new Map(
    ((grade.end_state ?? []) as EndStateEntry[]).map((file) => [file.name, file] as const),
  );
  const postconfig = details.postconfig;
  return {
    id: 'grade',
    title: 'Grade: the metric’s inputs and verdict',
    paragraphs: [
      { field: 'grade-verdict', text: verdictText(grade) },
      {
        field: 'grade-claim',
        text: [
          'The agent ended with ',
          { code: grade.bytebot_status },
          claimed === null ? '' : claimed ? ' (agent-reported success)' : ' (no success claimed)',
          '; OSWorld’s final action: ',
          { code: grade.final_signal ?? 'none' },
          { muted: [` (mapping ${grade.final_signal_mapping})`] },
        ],
      },
      { field: 'grade-fidelity', text: fidelityText(grade) },
      {
        field: 'grade-version',
        text: [
          'Metric version ',
          { code: grade.metric_version },
          `; grade ${grade.grade_no} of attempt ${grade.attempt}`,
          grade.regraded_from === null ? '' : ` (regraded from grade ${grade.regraded_from})`,
          { muted: [` · ${grade.grades} grade(s) of this attempt`] },
        ],
      },
      { field: 'grade-setup', text: setupText(grade) },
      {
        field: 'grade-postconfig',
        text: [
          postconfig === null || postconfig === undefined
            ? 'Postconfig: not run again (a regrade).'
            : `Postconfig: ${postconfig.length} step(s) run after the agent stopped.`,
        ],
      },
      {
        field: 'end-state',
        text:
          files.size === 0
            ? ['End state: no file fetched.']
            : [
                'End-state files: ',
                ...[...files.values()].flatMap((file, i): TaskPanelText[] => [
                  ...(i ? [', '] : []),
                  { artifact: file.uri, label: file.name },
                  { muted: [` (${file.size ?? '?'} bytes)`] },
                ]),
              ],
      },
    ],
    table: {
      name: 'grade-trace',
      rowAttribute: 'trace-event',
      columns: [
        { key: 'n', label: '#' },
        { key: 'kind', label: 'Kind', attribute: 'kind' },
        { key: 'call', label: 'Getter / metric', attribute: 'call' },
        { key: 'inputs', label: 'Inputs' },
        { key: 'result', label: 'Output / result', attribute: 'result' },
      ],
      rows: traceRows(details.trace ?? [], files),
    },
    raw: { label: 'grade details', value: grade.details },
  };
}

/** OSWorld's `display.taskDetail`: the grade's trace beside the agent's word; nothing for an ungraded task. */
export async function osworldTaskDetail({ task, query }: TaskDetailContext): Promise<TaskPanel[]> {
  const [grade] = await query<TaskGradeRow>(taskGradeQuery);
  return grade ? [gradePanel(grade, task.success)] : [];
}
