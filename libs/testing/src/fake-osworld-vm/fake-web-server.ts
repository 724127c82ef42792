import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

// A tiny web host for downloads (`download` steps, `cloud_file` golds). Clients reach it through
// URL rewrites (mirrors): `https://host/path` is fetched as `<fake>/https/host/path`, so task files
// keep their real URLs and the fake serves them by those URLs.

export interface FakeWebServer {
  readonly url: string;
  /** The mirrors to give a download client: every http(s) URL goes to this server. */
  readonly urlRewrites: readonly { readonly from: string; readonly to: string }[];
  /** Original URLs requested, in order. */
  readonly requests: readonly string[];
  serve(url: string, body: string | Buffer): void;
  /** The next `count` requests of `url` fail: an HTTP status, the connection closed, or no answer. */
  failNext(url: string, count: number, failure: number | 'reset' | 'hang'): void;
  close(): Promise<void>;
}

const normalize = (url: string): string => new URL(url).href;

export async function startFakeWebServer(): Promise<FakeWebServer> {
  const bodies = new Map<string, Buffer>();
  const failures = new Map<string, { left: number; failure: number | 'reset' | 'hang' }>();
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const match = /^\/(https?)\/(.*)$/s.exec(req.url ?? '/');
    if (!match) return res.writeHead(404).end('not a mirrored URL');
    const original = normalize(`${match[1]}://${match[2]}`);
    requests.push(original);
    const failure = failures.get(original);
    if (failure && failure.left > 0) {
      failure.left--;
      if (failure.failure === 'reset') return req.socket.destroy();
      if (failure.failure === 'hang') return;
      return res
        .writeHead(failure.failure, { 'content-type': 'text/plain' })
        .end(`HTTP ${failure.failure}`);
    }
    const body = bodies.get(original);
    if (!body) return res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
    res
      .writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length })
      .end(body);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    urlRewrites: [
      { from: 'https://', to: `${url}/https/` },
      { from: 'http://', to: `${url}/http/` },
    ],
    requests,
    serve: (original, body) => bodies.set(normalize(original), Buffer.from(body)),
    failNext: (original, count, failure) =>
      failures.set(normalize(original), { left: count, failure }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}
