export const percent = (value: number | null | undefined, digits = 1): string =>
  value === null || value === undefined || Number.isNaN(value)
    ? '–'
    : `${(value * 100).toFixed(digits)}%`;

export const decimal = (value: number | null | undefined, digits = 3): string =>
  value === null || value === undefined || Number.isNaN(value) ? '–' : value.toFixed(digits);

export const signed = (value: number, digits = 3): string =>
  Number.isNaN(value) ? '–' : `${value >= 0 ? '+' : ''}${value.toFixed(digits)}`;

export const signedPoints = (value: number): string =>
  Number.isNaN(value) ? '–' : `${value >= 0 ? '+' : ''}${(value * 100).toFixed(1)} pp`;

/** null is a cost nobody priced (tokens without a price table): "unknown", never $0. */
export const usd = (value: number | null | undefined): string =>
  value === null
    ? 'unknown'
    : value === undefined
      ? '–'
      : value === 0
        ? '$0'
        : value < 0.01
          ? `$${value.toFixed(4)}`
          : `$${value.toFixed(2)}`;

export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || Number.isNaN(seconds)) return '–';
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

export function spanSeconds(from: string | null, to: string | null): number | null {
  if (!from) return null;
  return ((to ? Date.parse(to) : Date.now()) - Date.parse(from)) / 1000;
}

export const timestamp = (iso: string | null | undefined): string =>
  iso
    ? new Date(iso).toLocaleString(undefined, {
        year: 'numeric',
        month: 'short',
        day: 'numeric',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
      })
    : '–';

/** What ran the tasks: the model, and the agent that drove it (bytebot, rule, llm). */
export function modelOrAgent(
  model: Record<string, unknown> | null,
  agent: Record<string, unknown> | null,
): string {
  const modelName = model
    ? String(model['title'] ?? model['name'] ?? '')
    : agent?.['model']
      ? String(agent['model'])
      : '';
  const kind = agent ? String(agent['kind'] ?? '') : '';
  return [modelName, kind].filter(Boolean).join(' · ') || '–';
}
