import { finalSignalOf, OSWORLD_GRADING_VERSION } from '@benchfleet/osworld-grading';
import { runNamedQuery, type ListedStatement, type SqlStatementList } from '@benchfleet/db';
import { desktopImagesQuery, runGradingQuery, taskGradeQuery } from './osworld-display.js';
import { FINAL_SIGNAL_MAPPING_ID, type OsworldGrade } from './osworld-grade.js';
import {
  OsworldGradesRepository,
  recordAttemptGradeStatement,
  recordGraderComparisonStatement,
  recordRegradeStatement,
} from './osworld-grades-repository.js';

// Every statement OSWorld's repository and task panels build, with example arguments, for the
// SQL snapshot test (see SqlStatementList, @benchfleet/db).

const key = { runId: 'run-1', taskId: 'os-1', attempt: 1 };

function grade(score: number | null, overrides: Partial<OsworldGrade> = {}): OsworldGrade {
  const finalSignal = finalSignalOf('COMPLETED');
  return {
    score,
    pythonType: score === null ? null : 'float',
    gradedSuccess: score === null ? null : score === 1,
    noScoreCause: score === null ? 'exception' : null,
    reason: score === null ? 'TypeError: boom' : null,
    fidelity: { level: 'graded' },
    metricVersion: OSWORLD_GRADING_VERSION,
    finalSignal,
    finalSignalMapping: FINAL_SIGNAL_MAPPING_ID,
    details: { finalSignal, postconfig: [], trace: [{ kind: 'postconfig', steps: 0 }] },
    endState: [{ name: 'log.txt', sha256: 'a'.repeat(64), size: 3, uri: 'file:///x/log.txt' }],
    ...overrides,
  };
}

const degraded = grade(1, {
  fidelity: { level: 'degraded', substitutions: ['chromium-for-chrome'] },
});
const repository = (db: Parameters<ListedStatement['run']>[0]) => new OsworldGradesRepository(db);

const statements: ListedStatement[] = [
  {
    name: 'record-attempt-grade',
    source: 'recordAttemptGradeStatement',
    run: (db) => recordAttemptGradeStatement(key, degraded, null).execute(db),
  },
  {
    name: 'record-regrade',
    source: 'recordRegradeStatement',
    run: (db) => recordRegradeStatement(key, grade(0), 1, false).execute(db),
  },
  {
    name: 'record-grader-comparison',
    source: 'recordGraderComparisonStatement',
    run: (db) =>
      recordGraderComparisonStatement(key, { port: grade(1), upstream: grade(null) }).execute(db),
  },
  {
    name: 'grades.record-attempt-grade',
    source: 'OsworldGradesRepository.recordAttemptGrade',
    run: (db) => repository(db).recordAttemptGrade(key, grade(1), null),
  },
  {
    name: 'grades.record-grader-comparison',
    source: 'OsworldGradesRepository.recordGraderComparison',
    run: (db) => repository(db).recordGraderComparison(key, { port: grade(1), upstream: grade(1) }),
  },
  {
    name: 'grades.record-regrade',
    source: 'OsworldGradesRepository.recordRegrade',
    run: (db) => repository(db).recordRegrade(key, grade(1), { regradedFrom: 1, force: true }),
  },
  {
    name: 'grades.grades-of-task',
    source: 'OsworldGradesRepository.gradesOfTask',
    run: (db) => repository(db).gradesOfTask('run-1', 'os-1'),
  },
  {
    name: 'grades.regrade-sources',
    source: 'OsworldGradesRepository.regradeSources',
    run: (db) => repository(db).regradeSources('run-1', 'os-1'),
  },
  {
    name: 'grades.task-grades',
    source: 'OsworldGradesRepository.taskGrades',
    run: (db) => repository(db).taskGrades('run-1'),
  },
  {
    name: 'grades.run-grading',
    source: 'OsworldGradesRepository.runGrading',
    run: (db) => repository(db).runGrading('run-1'),
  },
  {
    name: 'grades.latest-attempt-grades',
    source: 'OsworldGradesRepository.latestAttemptGrades',
    run: (db) => repository(db).latestAttemptGrades('run-1'),
  },
  {
    name: 'grades.graded-metric-versions',
    source: 'OsworldGradesRepository.gradedDistinct',
    run: (db) => repository(db).gradedDistinct('run-1', 'metric_version'),
  },
  {
    name: 'grades.graded-final-signal-mappings',
    source: 'OsworldGradesRepository.gradedDistinct',
    run: (db) => repository(db).gradedDistinct('run-1', 'final_signal_mapping'),
  },
  {
    name: 'grades.domain-grading',
    source: 'OsworldGradesRepository.domainGrading',
    run: (db) => repository(db).domainGrading('run-1'),
  },
  {
    name: 'query.osworld-run-grading',
    source: runGradingQuery.name,
    run: (db) => runNamedQuery(db, runGradingQuery, { run: 'run-1' }),
  },
  {
    name: 'query.osworld-desktop-images',
    source: desktopImagesQuery.name,
    run: (db) => runNamedQuery(db, desktopImagesQuery, { run: 'run-1' }),
  },
  {
    name: 'query.osworld-task-grade',
    source: taskGradeQuery.name,
    run: (db) => runNamedQuery(db, taskGradeQuery, { run: 'run-1', task: 'os-1' }),
  },
];

/** OSWorld's statements (`sqlStatements` of its descriptor). */
export const osworldSqlStatements: SqlStatementList = {
  sourceDir: new URL('./', import.meta.url),
  snapshotDir: new URL('./__snapshots__/', import.meta.url),
  statements,
};
