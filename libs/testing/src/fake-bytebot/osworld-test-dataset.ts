import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { OsworldDataset, OsworldTask } from '@benchfleet/osworld';

/** A task in the extracted-dataset format; the instruction carries the fake's scenario marker. */
export function osworldTestTask(taskId: string, instruction: string, domain = 'os'): OsworldTask {
  return {
    task_id: taskId,
    domain,
    instruction,
    snapshot: domain,
    related_apps: [domain],
    source: 'benchfleet test',
    config: [],
    evaluator: { func: 'infeasible' },
    trajectory: 'trajectories/',
    proxy: false,
    fixed_ip: false,
    possibility_of_env_change: 'low',
  };
}

/** Writes `<dir>/<name>.json` in the original `osworld_dataset.json` format and returns its path. */
export async function writeOsworldTestDataset(
  dir: string,
  name: string,
  tasks: OsworldTask[],
): Promise<string> {
  const domains: Record<string, number> = {};
  for (const task of tasks) domains[task.domain] = (domains[task.domain] ?? 0) + 1;
  const dataset: OsworldDataset = {
    metadata: {
      total_tasks: tasks.length,
      domains,
      extracted_at: '2026-02-08T19:09:47.129855+00:00',
    },
    tasks,
  };
  const file = path.join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify(dataset));
  return file;
}
