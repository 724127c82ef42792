import { z } from 'zod';

/** OSWorld's domains; a `--domain` among them makes a run an OSWorld run; a run over all ten is the original's `--domain all`. */
export const OSWORLD_DOMAINS = [
  'chrome',
  'gimp',
  'libreoffice_calc',
  'libreoffice_impress',
  'libreoffice_writer',
  'multi_apps',
  'os',
  'thunderbird',
  'vlc',
  'vs_code',
] as const;

/** One step of a task's `config` (or `evaluator.postconfig`): `{type, parameters}`; never run by this benchmark. */
const osworldSetupStepSchema = z.looseObject({ type: z.string() });

/** A task in the consolidated dataset, with the fields and key order of the original `extract_data.py`. */
export const osworldTaskSchema = z.object({
  task_id: z.string().min(1),
  domain: z.string().min(1),
  instruction: z.string(),
  snapshot: z.string(),
  related_apps: z.array(z.string()),
  source: z.union([z.string(), z.array(z.string())]),
  config: z.array(osworldSetupStepSchema),
  evaluator: z.record(z.string(), z.unknown()),
  trajectory: z.string(),
  proxy: z.boolean(),
  fixed_ip: z.boolean(),
  possibility_of_env_change: z.string(),
});
export type OsworldTask = z.infer<typeof osworldTaskSchema>;

export const osworldDatasetSchema = z.object({
  metadata: z.object({
    total_tasks: z.number().int().nonnegative(),
    domains: z.record(z.string(), z.number().int().nonnegative()),
    extracted_at: z.string(),
  }),
  tasks: z.array(osworldTaskSchema),
});
export type OsworldDataset = z.infer<typeof osworldDatasetSchema>;

/** `test_all.json` and the other `test_*.json` lists: domain → task ids. */
export const osworldTaskListSchema = z.record(z.string(), z.array(z.string().min(1)));
export type OsworldTaskList = z.infer<typeof osworldTaskListSchema>;
