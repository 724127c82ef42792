import { defineQuery } from '@benchfleet/db';

// The SQL of a task's page, as run (psql-style variables, shown under "Show SQL"). A benchmark's
// own detail queries live with its display (`display.taskDetail`), not here.

export const taskQuery = defineQuery({
  name: 'task',
  title: 'The task and its outcome',
  params: ['run', 'task'],
  sql: `
select t.run_id, t.task_id, t.seq, t.domain, t.instruction, t.spec, t.status, t.final_api_status, t.attempts,
       t.total_steps, t.reward, t.success, t.duration_ms, t.tokens_in, t.tokens_out, t.cost_usd,
       t.answer, t.result, t.error, t.worker_id, t.started_at, t.finished_at, r.benchmark, r.name as run_name
from tasks t
join runs r on r.id = t.run_id
where t.run_id = :run and t.task_id = :task`,
});

export const attemptsQuery = defineQuery({
  name: 'attempts',
  title: 'Every attempt of the task',
  params: ['run', 'task'],
  sql: `
select attempt, job_attempt, worker_id, external_id, status, error_class, error, started_at, finished_at
from attempts
where run_id = :run and task_id = :task
order by attempt`,
});

export const stepsQuery = defineQuery({
  name: 'steps',
  title: 'Every step of every attempt',
  params: ['run', 'task'],
  sql: `
select attempt, step, at, action, text, observation, reward, screenshot_uri is not null as has_screenshot,
       tokens_in, tokens_out, latency_ms
from steps
where run_id = :run and task_id = :task
order by attempt, step`,
});

export const screenshotQuery = defineQuery({
  name: 'screenshot',
  title: 'Where a step screenshot is stored',
  params: ['run', 'task', 'attempt', 'step'],
  sql: `
select screenshot_uri
from steps
where run_id = :run and task_id = :task and attempt = :attempt and step = :step`,
});
