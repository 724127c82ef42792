import { AttemptsRepository } from './attempts-repository.js';
import { LlmInputsRepository } from './llm-inputs-repository.js';
import { splitModelCall } from './model-input.js';
import {
  cancelOpenTasksStatement,
  cancelRunStatement,
  finishRunStatement,
  haltForBudgetStatement,
  haltOnInfraErrorsStatement,
  liftInfraHaltStatement,
  markQueuedStatement,
} from './run-outcome-statements.js';
import { RunsRepository } from './runs-repository.js';
import type { NewStep } from './schema.js';
import type { ListedStatement, SqlStatementList } from './sql-statement-list.js';
import { insertStepsStatement, StepsRepository } from './steps-repository.js';
import {
  failLostStatement,
  openAttemptsStatement,
  openTaskOfRunStatement,
  recordAttemptCauseStatement,
  recordAttemptUsageStatement,
  reopenStatement,
  restoreOutcomesStatement,
  settleStatement,
  type SettleRequest,
} from './task-outcome-statements.js';
import { recordRescoreStatement, TaskScoresRepository } from './task-scores-repository.js';
import { TasksRepository } from './tasks-repository.js';

// Every statement the core repositories build, with example arguments (see sql-statement-list.ts).
// The outcome-deciding builders first, each with the arguments that show its every branch.

/** One settle of each kind the fleet records: success, agent failure, infrastructure error, cancel. */
const settles: SettleRequest[] = [
  {
    runId: 'run-1',
    taskId: 'succeeds',
    attempt: 1,
    taskFinal: true,
    outcome: {
      status: 'success',
      finalApiStatus: 'COMPLETED',
      totalSteps: 3,
      reward: 1,
      durationMs: 1_234.4,
      tokensIn: 100,
      tokensOut: 20,
      costUsd: 0.01,
      answer: 'done',
      result: { score: 1 },
      externalId: 'bytebot-1',
    },
  },
  {
    runId: 'run-1',
    taskId: 'fails',
    attempt: 2,
    taskFinal: true,
    outcome: { status: 'failed', finalApiStatus: 'NEEDS_HELP', totalSteps: 5, durationMs: 2_000 },
  },
  {
    runId: 'run-1',
    taskId: 'infra-error',
    attempt: 1,
    // BullMQ retries it: only the attempt's outcome is written.
    taskFinal: false,
    outcome: {
      status: 'error',
      errorClass: 'infra',
      error: 'Bytebot did not answer',
      totalSteps: 0,
      durationMs: 500,
    },
  },
  {
    runId: 'run-1',
    taskId: 'cancelled',
    attempt: 1,
    taskFinal: true,
    outcome: { status: 'cancelled', totalSteps: 50, durationMs: 9_000, costUsd: null },
  },
];

const lastStep: NewStep = {
  run_id: 'run-1',
  task_id: 'succeeds',
  attempt: 1,
  step: 3,
  at: new Date(0),
  action: JSON.stringify({ type: 'click' }),
  text: 'clicked',
  tokens_in: 10,
  tokens_out: 2,
  latency_ms: 300,
};

const attemptKey = { runId: 'run-1', taskId: 'a', attempt: 1 };

const outcomeStatements: ListedStatement[] = [
  {
    name: 'open-attempts',
    source: 'openAttemptsStatement',
    run: (db) =>
      openAttemptsStatement([
        { runId: 'run-1', taskId: 'a', workerId: 'worker-1', jobAttempt: 1 },
        { runId: 'run-1', taskId: 'b', workerId: 'worker-2', jobAttempt: 3 },
      ]).execute(db),
  },
  {
    name: 'settle',
    source: 'settleStatement',
    run: (db) => settleStatement(settles, [lastStep]).execute(db),
  },
  {
    name: 'open-task-of-run',
    source: 'openTaskOfRunStatement',
    run: (db) => openTaskOfRunStatement('run-1').execute(db),
  },
  {
    name: 'fail-lost',
    source: 'failLostStatement',
    run: (db) =>
      failLostStatement('run-1', 'a', 'lost: job stalled more than allowable limit').execute(db),
  },
  {
    name: 'record-attempt-cause',
    source: 'recordAttemptCauseStatement',
    run: (db) =>
      recordAttemptCauseStatement(
        db,
        attemptKey,
        'handed back: Postgres did not answer',
        new Date(0),
      ).execute(),
  },
  {
    name: 'record-attempt-usage',
    source: 'recordAttemptUsageStatement',
    run: (db) =>
      recordAttemptUsageStatement(db, attemptKey, {
        tokensIn: 1000,
        tokensOut: 100,
        costUsd: 0.0035,
      }).execute(),
  },
  {
    name: 'reopen-resume',
    source: 'reopenStatement',
    run: (db) => reopenStatement('run-1', { includeFailed: true }).execute(db),
  },
  {
    name: 'reopen-retry',
    source: 'reopenStatement',
    run: (db) => reopenStatement('run-1', { statuses: ['error', 'failed'] }).execute(db),
  },
  {
    name: 'restore-outcomes',
    source: 'restoreOutcomesStatement',
    run: (db) =>
      restoreOutcomesStatement([
        {
          runId: 'run-1',
          taskId: 'succeeds',
          attempt: 1,
          workerId: 'worker-1',
          at: new Date(0),
          outcome: {
            status: 'success',
            totalSteps: 3,
            reward: 1,
            durationMs: 1_000,
            costUsd: 0.01,
          },
        },
      ]).execute(db),
  },
  {
    name: 'cancel-run',
    source: 'cancelRunStatement',
    run: (db) => cancelRunStatement(db, 'run-1').execute(),
  },
  {
    name: 'cancel-open-tasks',
    source: 'cancelOpenTasksStatement',
    run: (db) => cancelOpenTasksStatement('run-1').execute(db),
  },
  {
    name: 'finish-run',
    source: 'finishRunStatement',
    run: (db) => finishRunStatement(db, 'run-1', { succeeded: 1 }, new Date(0)).execute(),
  },
  {
    name: 'mark-run-queued',
    source: 'markQueuedStatement',
    run: (db) => markQueuedStatement(db, 'run-1').execute(),
  },
  {
    name: 'halt-for-budget',
    source: 'haltForBudgetStatement',
    run: (db) =>
      haltForBudgetStatement('run-1', 'the run spend limit of $1 is reached').execute(db),
  },
  {
    name: 'halt-on-infra-errors',
    source: 'haltOnInfraErrorsStatement',
    run: (db) => haltOnInfraErrorsStatement('run-1').execute(db),
  },
  {
    name: 'lift-infra-halt',
    source: 'liftInfraHaltStatement',
    run: (db) => liftInfraHaltStatement(db, 'run-1').execute(),
  },
  {
    name: 'record-rescore',
    source: 'recordRescoreStatement',
    run: (db) =>
      recordRescoreStatement(db, {
        runId: 'run-1',
        taskId: 'task-1',
        attempt: 1,
        scorerVersion: 'v1',
        before: { success: false, reward: 0 },
        after: { success: true, reward: 1, details: {} },
      }).execute(),
  },
  {
    name: 'insert-steps',
    source: 'insertStepsStatement',
    run: (db) => insertStepsStatement([lastStep]).execute(db),
  },
];

const runsStatements: ListedStatement[] = [
  {
    name: 'runs.get',
    source: 'RunsRepository.get',
    run: (db) => new RunsRepository(db).get('run-1'),
  },
  {
    name: 'runs.list',
    source: 'RunsRepository.list',
    run: (db) => new RunsRepository(db).list(20),
  },
  {
    name: 'runs.summary',
    source: 'RunsRepository.summary',
    run: (db) => new RunsRepository(db).summary('run-1'),
  },
  {
    name: 'runs.going-on',
    source: 'RunsRepository.goingOn',
    run: (db) => new RunsRepository(db).goingOn(30_000),
  },
  {
    name: 'runs.create-with-tasks',
    source: 'RunsRepository.createWithTasks',
    run: (db) =>
      new RunsRepository(db).createWithTasks({
        run: {
          id: 'run-1',
          name: 'example',
          benchmark: 'example',
          config: JSON.stringify({ split: 'test' }),
          code_version: 'abc123',
          epochs: 2,
        },
        tasks: [
          { task_id: 'a', seq: 0, domain: 'd', instruction: 'do a', spec: '{"goal":0}' },
          {
            task_id: 'a.epoch2',
            base_task_id: 'a',
            epoch: 2,
            seq: 1,
            domain: 'd',
            instruction: 'do a',
            spec: '{"goal":0}',
          },
        ],
      }),
  },
  {
    name: 'runs.delete',
    source: 'RunsRepository.delete',
    run: (db) => new RunsRepository(db).delete('run-1'),
  },
  {
    name: 'runs.mark-queued',
    source: 'RunsRepository.markQueued',
    run: (db) => new RunsRepository(db).markQueued('run-1'),
  },
  {
    name: 'runs.record-model-if-unset',
    source: 'RunsRepository.recordModelIfUnset',
    run: (db) => new RunsRepository(db).recordModelIfUnset('run-1', { name: 'qwen2.5-7b' }),
  },
  {
    // The run gone: the cancel's statement, then the read that says why it took nothing.
    name: 'runs.cancel',
    source: 'RunsRepository.cancel',
    run: (db) => new RunsRepository(db).cancel('run-1'),
  },
  {
    name: 'runs.save-summary',
    source: 'RunsRepository.saveSummary',
    run: (db) => new RunsRepository(db).saveSummary('run-1', { succeeded: 1 }, new Date(0)),
  },
  {
    name: 'runs.halt-of',
    source: 'RunsRepository.haltOf',
    run: (db) => new RunsRepository(db).haltOf('run-1'),
  },
  {
    name: 'runs.halt-for-budget',
    source: 'RunsRepository.haltForBudget',
    run: (db) => new RunsRepository(db).haltForBudget('run-1', 'the run spend limit is reached'),
  },
  {
    name: 'runs.halt-on-infra-errors',
    source: 'RunsRepository.haltOnInfraErrors',
    run: (db) => new RunsRepository(db).haltOnInfraErrors('run-1'),
  },
  {
    name: 'runs.lift-infra-halt',
    source: 'RunsRepository.liftInfraHalt',
    run: (db) => new RunsRepository(db).liftInfraHalt('run-1'),
  },
];

const tasksStatements: ListedStatement[] = [
  {
    name: 'tasks.get',
    source: 'TasksRepository.get',
    run: (db) => new TasksRepository(db).get('run-1', 'a'),
  },
  {
    name: 'tasks.list-by-run',
    source: 'TasksRepository.listByRun',
    run: (db) => new TasksRepository(db).listByRun('run-1'),
  },
  {
    name: 'tasks.open-task-ids',
    source: 'TasksRepository.openTaskIds',
    run: (db) => new TasksRepository(db).openTaskIds('run-1'),
  },
  {
    name: 'tasks.open-tasks',
    source: 'TasksRepository.openTasks',
    run: (db) => new TasksRepository(db).openTasks('run-1'),
  },
  {
    name: 'tasks.between-attempts',
    source: 'TasksRepository.betweenAttempts',
    run: (db) => new TasksRepository(db).betweenAttempts('run-1'),
  },
  {
    name: 'tasks.open-attempt',
    source: 'TasksRepository.openAttempt',
    run: (db) => new TasksRepository(db).openAttempt('run-1', 'a', 'worker-1', 1),
  },
  {
    name: 'tasks.open-attempts',
    source: 'TasksRepository.openAttempts',
    run: (db) =>
      new TasksRepository(db).openAttempts([
        { runId: 'run-1', taskId: 'a', workerId: 'worker-1', jobAttempt: 1 },
      ]),
  },
  {
    name: 'tasks.set-external-id',
    source: 'TasksRepository.setExternalId',
    run: (db) => new TasksRepository(db).setExternalId('run-1', 'a', 1, 'bytebot-1'),
  },
  {
    // Not recorded (the recording database answers with no row): no question about the run after it.
    name: 'tasks.settle',
    source: 'TasksRepository.settle',
    run: (db) =>
      new TasksRepository(db).settle('run-1', 'fails', 2, settles[1]!.outcome, true, [lastStep]),
  },
  {
    name: 'tasks.settle-many',
    source: 'TasksRepository.settleMany',
    run: (db) => new TasksRepository(db).settleMany(settles.slice(0, 2)),
  },
  {
    name: 'tasks.run-has-no-open-task',
    source: 'TasksRepository.runHasNoOpenTask',
    run: (db) => new TasksRepository(db).runHasNoOpenTask('run-1'),
  },
  {
    name: 'tasks.reopen',
    source: 'TasksRepository.reopen',
    run: (db) => new TasksRepository(db).reopen('run-1'),
  },
  {
    name: 'tasks.record-attempt-cause',
    source: 'TasksRepository.recordAttemptCause',
    run: (db) =>
      new TasksRepository(db).recordAttemptCause('run-1', 'a', 1, 'handed back', new Date(0)),
  },
  {
    name: 'tasks.record-attempt-usage',
    source: 'TasksRepository.recordAttemptUsage',
    run: (db) =>
      new TasksRepository(db).recordAttemptUsage(attemptKey, {
        tokensIn: 10,
        tokensOut: 1,
        costUsd: null,
      }),
  },
  {
    name: 'tasks.fail-lost',
    source: 'TasksRepository.failLost',
    run: (db) => new TasksRepository(db).failLost('run-1', 'a', 'lost'),
  },
  {
    name: 'tasks.restore-outcomes',
    source: 'TasksRepository.restoreOutcomes',
    run: (db) =>
      new TasksRepository(db).restoreOutcomes([
        {
          runId: 'run-1',
          taskId: 'fails',
          attempt: 2,
          workerId: 'worker-1',
          at: new Date(0),
          outcome: settles[1]!.outcome,
        },
      ]),
  },
];

const modelCall = splitModelCall({
  owner: { runId: 'run-1', taskId: 'a', attempt: 1 },
  callNo: 1,
  step: 1,
  at: new Date(0),
  model: 'qwen2.5-7b',
  request: {
    messages: [{ role: 'user', content: 'buy a lamp' }],
    tools: [{ type: 'function', function: { name: 'click' } }],
    temperature: 0,
  },
  tokensIn: 12,
  tokensOut: 3,
});

const otherStatements: ListedStatement[] = [
  {
    name: 'attempts.list-of-tasks',
    source: 'AttemptsRepository.listOfTasks',
    run: (db) => new AttemptsRepository(db).listOfTasks('run-1', ['a', 'b']),
  },
  {
    name: 'steps.insert-many',
    source: 'StepsRepository.insertMany',
    run: (db) => new StepsRepository(db).insertMany([lastStep]),
  },
  {
    name: 'steps.priced-spend',
    source: 'StepsRepository.pricedSpend',
    run: (db) => new StepsRepository(db).pricedSpend('run-1'),
  },
  {
    name: 'steps.list-of-attempts',
    source: 'StepsRepository.listOfAttempts',
    run: (db) =>
      new StepsRepository(db).listOfAttempts('run-1', [
        { taskId: 'a', attempt: 1 },
        { taskId: 'b', attempt: 2 },
      ]),
  },
  {
    name: 'steps.list-by-run',
    source: 'StepsRepository.listByRun',
    run: (db) => new StepsRepository(db).listByRun('run-1'),
  },
  {
    name: 'steps.list-by-task',
    source: 'StepsRepository.listByTask',
    run: (db) => new StepsRepository(db).listByTask('run-1', 'a', 1),
  },
  {
    name: 'task-scores.record',
    source: 'TaskScoresRepository.record',
    run: (db) =>
      new TaskScoresRepository(db).record({
        runId: 'run-1',
        taskId: 'a',
        attempt: 1,
        scorerVersion: 'v1',
        before: { success: null, reward: null },
        after: { success: false, reward: 0.5, details: { why: 'example' } },
      }),
  },
  {
    name: 'task-scores.history',
    source: 'TaskScoresRepository.history',
    run: (db) => new TaskScoresRepository(db).history('run-1', 'a'),
  },
  {
    name: 'llm-inputs.insert-calls',
    source: 'LlmInputsRepository.insertCalls',
    run: (db) => new LlmInputsRepository(db).insertCalls([modelCall]),
  },
  {
    name: 'llm-inputs.calls-of-task',
    source: 'LlmInputsRepository.callsOfTask',
    run: (db) => new LlmInputsRepository(db).callsOfTask('run-1', 'a', 1),
  },
  {
    name: 'llm-inputs.calls-of-tasks',
    source: 'LlmInputsRepository.callsOfTasks',
    run: (db) => new LlmInputsRepository(db).callsOfTasks('run-1', ['a', 'b']),
  },
  {
    name: 'llm-inputs.calls-of-run',
    source: 'LlmInputsRepository.callsOfRun',
    run: (db) => new LlmInputsRepository(db).callsOfRun('run-1'),
  },
  {
    name: 'llm-inputs.blobs',
    source: 'LlmInputsRepository.blobs',
    run: (db) => new LlmInputsRepository(db).blobs('run-1', modelCall.messageDigests),
  },
  {
    // The recording database holds no blob, so no image is asked for after the messages.
    name: 'llm-inputs.input-of',
    source: 'LlmInputsRepository.inputOf',
    run: (db) =>
      new LlmInputsRepository(db).inputOf({
        run_id: 'run-1',
        message_digests: [...modelCall.messageDigests],
        tools_digest: modelCall.toolsDigest,
      }),
  },
  {
    name: 'llm-inputs.stored-size',
    source: 'LlmInputsRepository.storedSize',
    run: (db) => new LlmInputsRepository(db).storedSize('run-1'),
  },
];

/** Every statement libs/db's repositories build, for the SQL snapshot test. */
export const dbSqlStatements: SqlStatementList = {
  sourceDir: new URL('./', import.meta.url),
  snapshotDir: new URL('./__snapshots__/', import.meta.url),
  statements: [...outcomeStatements, ...runsStatements, ...tasksStatements, ...otherStatements],
};
