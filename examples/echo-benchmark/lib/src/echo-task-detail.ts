import type { TaskDetailContext, TaskPanel } from '@benchfleet/benchmark-kit';
import { defineQuery } from '@benchfleet/db';

// Echo's own panel of a task page: what each attempt answered, read from its own table by a named
// query (the dashboard shows its SQL under "Show SQL", runnable in psql as it stands).

export const echoAnswersQuery = defineQuery({
  name: 'echo_answers',
  title: 'What each attempt of the echo task answered',
  params: ['run', 'task'],
  sql: `
select attempt, answer, steps, answered_at
from echo_answers
where run_id = :run and task_id = :task
order by attempt`,
});

interface EchoAnswerRow {
  attempt: number;
  answer: string;
  steps: number;
  answered_at: Date | string;
}

/** Echo's `display.taskDetail`: its answers, attempt by attempt; nothing for a task not answered yet. */
export async function echoTaskDetail({ query }: TaskDetailContext): Promise<TaskPanel[]> {
  const answers = await query<EchoAnswerRow>(echoAnswersQuery);
  if (answers.length === 0) return [];
  return [
    {
      id: 'echo-answers',
      title: 'Answers',
      table: {
        name: 'echo-answers',
        rowAttribute: 'attempt',
        columns: [
          { key: 'attempt', label: 'Attempt', attribute: 'attempt' },
          { key: 'answer', label: 'Answer', attribute: 'answer' },
          { key: 'steps', label: 'Steps' },
          { key: 'answered_at', label: 'Answered at' },
        ],
        rows: answers.map((row) => ({
          key: String(row.attempt),
          cells: {
            attempt: String(row.attempt),
            answer: row.answer,
            steps: String(row.steps),
            answered_at: new Date(row.answered_at).toISOString(),
          },
        })),
      },
    },
  ];
}
