import { runNamedQuery, type SqlStatementList } from '@benchfleet/db';
import { EchoAnswersRepository } from './echo-answers-repository.js';
import { echoAnswersQuery } from './echo-task-detail.js';

// Every statement echo builds, with example arguments: the SQL snapshot test runs each on a
// recording database, writes `__snapshots__/<name>.sql` beside this file and has Postgres EXPLAIN
// it; a repository method or named query of this package missing here fails that test.

/** Echo's statements (`sqlStatements` of its descriptor). */
export const echoSqlStatements: SqlStatementList = {
  sourceDir: new URL('./', import.meta.url),
  snapshotDir: new URL('./__snapshots__/', import.meta.url),
  statements: [
    {
      name: 'answers.record',
      source: 'EchoAnswersRepository.record',
      run: (db) =>
        new EchoAnswersRepository(db).record({
          run_id: 'run-1',
          task_id: 'echo-000',
          attempt: 1,
          answer: 'say 0',
          steps: 1,
        }),
    },
    {
      name: 'query.echo-answers',
      source: echoAnswersQuery.name,
      run: (db) => runNamedQuery(db, echoAnswersQuery, { run: 'run-1', task: 'echo-000' }),
    },
  ],
};
