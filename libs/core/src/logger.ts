import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger } from 'pino';

const REDACTED_PATHS = [
  'apiKey',
  'api_key',
  'password',
  'secretAccessKey',
  '*.secretAccessKey',
  'token',
  'authorization',
  'Authorization',
  '*.apiKey',
  '*.api_key',
  '*.password',
  '*.token',
  '*.authorization',
  '*.Authorization',
  'headers.authorization',
  'headers.Authorization',
  '*.headers.authorization',
  '*.headers.Authorization',
  'config.headers',
  '*.config.headers',
];

const URL_PASSWORD = /([a-z][a-z0-9+.-]*:\/\/[^:/@\s]*:)[^@/\s]+@/gi;
const BEARER = /(bearer\s+)[A-Za-z0-9._~+/=-]+/gi;
const SK_KEY = /\bsk-[A-Za-z0-9_-]{8,}/g;

/** Removes credentials from free text: passwords in URLs, bearer tokens, `sk-` keys. */
export function redactSecrets(text: string): string {
  return text.replace(URL_PASSWORD, '$1***@').replace(BEARER, '$1***').replace(SK_KEY, 'sk-***');
}

function redactDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactSecrets(value);
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) {
    return {
      type: value.name,
      message: redactSecrets(value.message),
      stack: value.stack && redactSecrets(value.stack),
    };
  }
  if (Array.isArray(value)) return value.map((item) => redactDeep(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = redactDeep(item, depth + 1);
  return out;
}

export interface LoggerSettings {
  level?: string;
  name?: string;
  /** Where log lines go; stderr by default so stdout stays for command output. */
  destination?: pino.DestinationStream;
}

/** The one pino root of a process. Children carry context (`run`, `task`, `attempt`, `worker`). */
export function createLogger(settings: LoggerSettings = {}): Logger {
  const options: LoggerOptions = {
    level: settings.level ?? 'info',
    base: settings.name ? { app: settings.name } : {},
    redact: { paths: REDACTED_PATHS, censor: '***' },
    serializers: { err: (err: unknown) => redactDeep(err) },
    hooks: {
      logMethod(args, method) {
        const redacted = args.map((arg) => redactDeep(arg)) as Parameters<typeof method>;
        method.apply(this, redacted);
      },
    },
  };
  return pino(options, settings.destination ?? pino.destination(2));
}
