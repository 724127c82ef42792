import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { OsworldTask } from '@benchfleet/osworld';

const EXAMPLES = fileURLToPath(
  new URL('../../../../../shared/osworld/evaluation_examples/examples/', import.meta.url),
);

/** An OSWorld task file of the golden data (../shared/osworld), as `osworld extract` writes it. */
export async function osworldExampleTask(domain: string, taskId: string): Promise<OsworldTask> {
  const file = JSON.parse(await readFile(`${EXAMPLES}${domain}/${taskId}.json`, 'utf8')) as Record<
    string,
    unknown
  >;
  return {
    task_id: taskId,
    domain,
    instruction: String(file['instruction']),
    snapshot: String(file['snapshot'] ?? domain),
    related_apps: (file['related_apps'] as string[] | undefined) ?? [],
    source: (file['source'] as string | undefined) ?? '',
    config: (file['config'] as OsworldTask['config'] | undefined) ?? [],
    evaluator: file['evaluator'] as Record<string, unknown>,
    trajectory: 'trajectories/',
    proxy: false,
    fixed_ip: false,
    possibility_of_env_change: 'low',
  };
}
