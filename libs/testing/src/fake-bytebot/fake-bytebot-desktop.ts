import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fakeScreenshotPng } from './fake-screenshot-png.js';

// A fake desktop daemon (bytebotd) speaking bytebot-api.md §5: `POST /computer-use` with an
// `action`, 201 on success (Nest's POST default), `{image}` for a screenshot, `{x,y}` for the
// cursor position, JSON for the file actions and an empty body for the rest, 400 for an unknown
// action. A test kills it (a crashed bytebotd: connections refused), revives it on the same port
// (its supervisor restarting it), freezes it, or slows it down.

const ACTIONS = new Set([
  'move_mouse',
  'trace_mouse',
  'click_mouse',
  'press_mouse',
  'drag_mouse',
  'scroll',
  'type_keys',
  'press_keys',
  'type_text',
  'paste_text',
  'wait',
  'screenshot',
  'cursor_position',
  'application',
  'write_file',
  'read_file',
]);

interface FakeBytebotDesktopStats {
  /** Requests answered, per action (`screenshot`, `cursor_position`, …). */
  actions: Record<string, number>;
  /** Requests that reached the server while it was frozen (never answered). */
  unanswered: number;
}

export interface FakeBytebotDesktopOptions {
  host?: string;
  port?: number;
  /** Delay before every answer. */
  latencyMs?: number;
}

export interface FakeBytebotDesktop {
  /** Base URL, what `--desktop-url` takes. */
  readonly url: string;
  readonly port: number;
  readonly stats: FakeBytebotDesktopStats;
  /** Listening and answering. */
  readonly alive: boolean;
  /** Closes the listener and every connection, as a crashed bytebotd: connections are refused from now on. */
  kill(): Promise<void>;
  /** Listens again on the same port and answers, as bytebotd restarted by its supervisor. */
  revive(): Promise<void>;
  /** From now on accepts connections but never answers (a frozen desktop), until `revive()`. */
  freeze(): void;
  /** Every answer waits this long (a slow desktop). */
  setLatency(latencyMs: number): void;
  /** The next `count` requests have their connection cut without an answer (a blip). */
  dropRequests(count: number): void;
  close(): Promise<void>;
}

export async function startFakeBytebotDesktop(
  options: FakeBytebotDesktopOptions = {},
): Promise<FakeBytebotDesktop> {
  const host = options.host ?? '127.0.0.1';
  const stats: FakeBytebotDesktopStats = { actions: {}, unanswered: 0 };
  let latencyMs = options.latencyMs ?? 0;
  let frozen = false;
  let dropsLeft = 0;
  let screenshots = 0;
  let server: Server | null = null;
  const sockets = new Set<Socket>();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (frozen) {
      stats.unanswered++;
      return;
    }
    const body = await readBody(req);
    if (dropsLeft > 0) {
      dropsLeft--;
      req.socket.destroy();
      return;
    }
    if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs));
    if (frozen) return;
    if (
      req.method !== 'POST' ||
      new URL(req.url ?? '/', 'http://fake').pathname !== '/computer-use'
    )
      return send(res, 404, {
        statusCode: 404,
        message: `Cannot ${req.method} ${req.url}`,
        error: 'Not Found',
      });
    const action = isRecord(body) && typeof body['action'] === 'string' ? body['action'] : '';
    if (!ACTIONS.has(action))
      return send(res, 400, {
        statusCode: 400,
        message: `Invalid action: ${action}`,
        error: 'Bad Request',
      });
    stats.actions[action] = (stats.actions[action] ?? 0) + 1;
    switch (action) {
      case 'screenshot':
        return send(res, 201, { image: fakeScreenshotPng(++screenshots).toString('base64') });
      case 'cursor_position':
        return send(res, 201, { x: 640, y: 480 });
      case 'read_file':
        return send(res, 201, { success: false, message: 'File not found' });
      case 'write_file':
        return send(res, 201, { success: true, message: 'File written' });
      default:
        res.writeHead(201).end();
    }
  }

  async function listen(port: number): Promise<number> {
    const created = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
    created.on('connection', (socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      created.once('error', reject);
      created.listen(port, host, () => resolve());
    });
    server = created;
    return (created.address() as AddressInfo).port;
  }

  async function stopListening(): Promise<void> {
    const closing = server;
    server = null;
    if (!closing) return;
    const closed = new Promise<void>((resolve) => closing.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    await closed;
  }

  const port = await listen(options.port ?? 0);
  return {
    url: `http://${host}:${port}`,
    port,
    stats,
    get alive() {
      return server !== null && !frozen;
    },
    kill: stopListening,
    async revive() {
      frozen = false;
      if (!server) await listen(port);
    },
    freeze() {
      frozen = true;
    },
    setLatency(ms) {
      latencyMs = ms;
    },
    dropRequests(count) {
      dropsLeft = count;
    },
    close: stopListening,
  };
}

function send(res: ServerResponse, status: number, json: unknown): void {
  res
    .writeHead(status, { 'content-type': 'application/json; charset=utf-8' })
    .end(JSON.stringify(json));
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return text.trim() === '' ? {} : (JSON.parse(text) as unknown);
  } catch {
    return {};
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
