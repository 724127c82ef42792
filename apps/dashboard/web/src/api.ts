import { QueryCache, QueryClient } from '@tanstack/react-query';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export type { ShownQuery } from '../../src/shown-query';
import type { ShownQuery } from '../../src/shown-query';

export interface RunRow {
  run_id: string;
  name: string;
  benchmark: string;
  run_status: string;
  model: Record<string, unknown> | null;
  agent: Record<string, unknown> | null;
  config?: Record<string, unknown>;
  total: number;
  queued: number;
  running: number;
  succeeded: number;
  failed: number;
  cancelled: number;
  errors: number;
  never_started: number;
  success_rate: number | null;
  avg_reward: number | null;
  avg_steps?: number | null;
  avg_duration_seconds?: number | null;
  tokens_in?: number;
  tokens_out?: number;
  cost_usd: number | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  summarised: boolean;
}

export interface TaskRow {
  task_id: string;
  seq: number;
  domain: string;
  status: string;
  final_api_status: string | null;
  attempts: number;
  total_steps: number;
  reward: number | null;
  success: boolean | null;
  duration_ms: number | null;
  cost_usd: number | null;
  error: string | null;
}

export interface StepRow {
  attempt: number;
  step: number;
  at: string;
  action: Record<string, unknown> | null;
  text: string | null;
  observation: string | null;
  reward: number | null;
  has_screenshot: boolean;
  tokens_in: number;
  tokens_out: number;
  latency_ms: number | null;
}

export interface AttemptRow {
  attempt: number;
  job_attempt: number;
  worker_id: string;
  external_id: string | null;
  status: string;
  error_class: string | null;
  error: string | null;
  started_at: string;
  finished_at: string | null;
}

export interface TaskDetail {
  task: TaskRow & {
    run_id: string;
    instruction: string;
    spec: Record<string, unknown>;
    answer: string | null;
    result: Record<string, unknown> | null;
    worker_id: string | null;
    started_at: string | null;
    finished_at: string | null;
    tokens_in: number;
    tokens_out: number;
    benchmark: string;
    run_name: string;
  };
  attempts: AttemptRow[];
  steps: StepRow[];
  /** What a WebShop goal asked for; null for other benchmarks. */
  goal: {
    attributes: string[] | null;
    options: string[] | Record<string, string> | null;
    price_upper: number | null;
    query: string | null;
    category: string | null;
    target_asin: string;
  } | null;
  queries: ShownQuery[];
}

/** Whether the last request found the database down; the banner follows it. */
type Listener = (down: boolean) => void;
const listeners = new Set<Listener>();
let databaseDown = false;

export function setDatabaseDown(down: boolean): void {
  if (down === databaseDown) return;
  databaseDown = down;
  for (const listener of listeners) listener(down);
}

export function onDatabaseStatus(listener: Listener): () => void {
  listeners.add(listener);
  listener(databaseDown);
  return () => listeners.delete(listener);
}

export async function apiGet<T>(path: string): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      headers: { accept: 'application/json' },
      credentials: 'same-origin',
    });
  } catch {
    throw new ApiError(0, 'the dashboard server does not answer');
  }
  const body = (await response.json().catch(() => ({}))) as { error?: string };
  if (response.status === 503) setDatabaseDown(true);
  if (!response.ok) throw new ApiError(response.status, body.error ?? `HTTP ${response.status}`);
  setDatabaseDown(false);
  return body as T;
}

export const queryClient = new QueryClient({
  queryCache: new QueryCache(),
  defaultOptions: {
    queries: {
      staleTime: 2_000,
      refetchOnWindowFocus: false,
      // A missing run stays missing; a database outage is retried until it ends.
      retry: (failures, error) =>
        error instanceof ApiError &&
        error.status !== 404 &&
        error.status !== 400 &&
        failures < 1_000,
      retryDelay: 2_000,
    },
  },
});

/**
 * Data the server put into the page it sent (a `<script type="application/json" id=…>`), read once
 * and removed, so that the first render needs no round trip and a later visit does not reuse it.
 */
export function pageData<T>(id: string): () => T | undefined {
  const element = document.getElementById(id);
  let data = element?.textContent ? (JSON.parse(element.textContent) as T) : undefined;
  element?.remove();
  return () => {
    const taken = data;
    data = undefined;
    return taken;
  };
}
