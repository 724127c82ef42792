import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEPLOY_DIR } from './k8s-manifests.js';

// The image's reset tool against a fake Docker Engine API (on a unix socket, as the real one) and a
// fake Kubernetes API server (plain HTTP through the tests' override): the requests it makes, in
// order, with the bodies that decide what the new desktop is.

const scratch = mkdtempSync(join(tmpdir(), 'desktop-reset-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Recorded {
  method: string;
  path: string;
  body: unknown;
  authorization?: string | undefined;
}

type Handler = (request: Recorded) => { status: number; body?: unknown };

async function fakeApi(
  handler: Handler,
  listen: { socket: string } | { port: 0 },
): Promise<{ requests: Recorded[]; port: number; close(): Promise<void> }> {
  const requests: Recorded[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const recorded: Recorded = {
        method: req.method ?? '',
        path: req.url ?? '',
        body: text ? (JSON.parse(text) as unknown) : null,
        authorization: req.headers.authorization,
      };
      requests.push(recorded);
      const answer = handler(recorded);
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) =>
    'socket' in listen
      ? server.listen(listen.socket, resolve)
      : server.listen(0, '127.0.0.1', resolve),
  );
  const address = server.address();
  return {
    requests,
    port: typeof address === 'object' && address ? (address as AddressInfo).port : 0,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Runs the script as the image does; asynchronous, since the fake answers from this process. */
function reset(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(DEPLOY_DIR, 'desktop-reset.mjs'), ...args], {
      env: { PATH: process.env.PATH, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('deploy/desktop-reset.mjs docker CONTAINER (compose)', () => {
  const oldId = 'a1b2c3d4e5f6' + '0'.repeat(52);
  const inspected = {
    Id: oldId,
    Name: '/benchfleet-desktop-1',
    Config: {
      Image: 'benchfleet-desktop:local',
      Hostname: 'computer',
      Env: ['DISPLAY=:0'],
      Labels: { 'com.docker.compose.service': 'bytebot-desktop-1' },
    },
    HostConfig: { Privileged: true, ShmSize: 2147483648 },
    NetworkSettings: {
      Networks: {
        benchfleet_stack_1: { Aliases: ['bytebot-desktop-1', 'a1b2c3d4e5f6'], IPAMConfig: null },
        benchfleet_extra: { Aliases: ['desktop'] },
      },
    },
  };

  it('recreates the container from its own config: remove it (killed) with its volumes, create under the same name on the same networks, start', async () => {
    const socket = join(scratch, 'docker.sock');
    const api = await fakeApi(
      ({ method, path }) => {
        if (method === 'GET') return { status: 200, body: inspected };
        if (path.startsWith('/containers/create'))
          return { status: 201, body: { Id: 'f'.repeat(64) } };
        if (path.endsWith('/connect')) return { status: 200 };
        return { status: 204 };
      },
      { socket },
    );
    try {
      const result = await reset(['docker', 'benchfleet-desktop-1'], {
        DOCKER_HOST: `unix://${socket}`,
      });
      expect(result).toEqual({
        code: 0,
        stdout: 'recreated container benchfleet-desktop-1 (a1b2c3d4e5f6 → ffffffffffff)\n',
        stderr: '',
      });
      expect(api.requests.map(({ method, path }) => `${method} ${path}`)).toEqual([
        'GET /containers/benchfleet-desktop-1/json',
        `DELETE /containers/${oldId}?v=true&force=true`,
        'POST /containers/create?name=benchfleet-desktop-1',
        'POST /networks/benchfleet_extra/connect',
        `POST /containers/${'f'.repeat(64)}/start`,
      ]);
      expect(api.requests[2]?.body).toEqual({
        ...inspected.Config,
        HostConfig: inspected.HostConfig,
        NetworkingConfig: {
          EndpointsConfig: { benchfleet_stack_1: { Aliases: ['bytebot-desktop-1'] } },
        },
      });
      expect(api.requests[3]?.body).toEqual({
        Container: 'f'.repeat(64),
        EndpointConfig: { Aliases: ['desktop'] },
      });
    } finally {
      await api.close();
    }
  });

  it('a container that does not exist, or an engine error, fails with one line and exit 1', async () => {
    const socket = join(scratch, 'docker-missing.sock');
    const api = await fakeApi(
      ({ method }) =>
        method === 'GET'
          ? { status: 404, body: { message: 'No such container' } }
          : { status: 500, body: { message: 'boom' } },
      { socket },
    );
    try {
      const missing = await reset(['docker', 'nope'], { DOCKER_HOST: `unix://${socket}` });
      expect(missing).toMatchObject({
        code: 1,
        stderr: 'desktop-reset: no container named nope\n',
      });
      const noEngine = await reset(['docker', 'x'], {
        DOCKER_HOST: `unix://${join(scratch, 'absent.sock')}`,
      });
      expect(noEngine.code).toBe(1);
      expect(noEngine.stderr).toMatch(
        /^desktop-reset: docker GET \/containers\/x\/json: connect ENOENT/,
      );
    } finally {
      await api.close();
    }
  });
});

describe('deploy/desktop-reset.mjs k8s POD (Kubernetes)', () => {
  const account = join(scratch, 'serviceaccount');
  const writeAccount = () => {
    rmSync(account, { recursive: true, force: true });
    mkdirSync(account);
    writeFileSync(join(account, 'token'), 'the-token\n');
    writeFileSync(join(account, 'namespace'), 'benchfleet\n');
  };

  it('deletes the pod with its UID as precondition and waits until its replacement is Ready', async () => {
    writeAccount();
    const pod = (uid: string, ready: boolean) => ({
      metadata: { name: 'osworld-desktop-1', uid },
      status: {
        phase: ready ? 'Running' : 'Pending',
        conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
      },
    });
    // What the API shows on each GET after the first: gone, the new pod starting, then Ready.
    const later = [
      { status: 200, body: pod('old-uid', true) },
      { status: 404, body: { message: 'not found' } },
      { status: 200, body: pod('new-uid', false) },
      { status: 200, body: pod('new-uid', true) },
    ];
    let gets = 0;
    const api = await fakeApi(
      ({ method }) =>
        method === 'DELETE'
          ? { status: 200, body: pod('old-uid', true) }
          : gets++ === 0
            ? { status: 200, body: pod('old-uid', true) }
            : (later.shift() ?? { status: 200, body: pod('new-uid', true) }),
      { port: 0 },
    );
    try {
      const result = await reset(['k8s', 'osworld-desktop-1'], {
        BENCHFLEET_K8S_API: `http://127.0.0.1:${api.port}`,
        BENCHFLEET_K8S_SERVICEACCOUNT_DIR: account,
      });
      expect(result).toEqual({
        code: 0,
        stdout: 'recreated pod osworld-desktop-1 (old-uid → new-uid)\n',
        stderr: '',
      });
      const path = '/api/v1/namespaces/benchfleet/pods/osworld-desktop-1';
      expect(api.requests.map(({ method, path: p }) => `${method} ${p}`)).toEqual([
        `GET ${path}`,
        `DELETE ${path}`,
        `GET ${path}`,
        `GET ${path}`,
        `GET ${path}`,
        `GET ${path}`,
      ]);
      expect(api.requests[1]?.body).toEqual({
        gracePeriodSeconds: 5,
        preconditions: { uid: 'old-uid' },
      });
      expect(new Set(api.requests.map((request) => request.authorization))).toEqual(
        new Set(['Bearer the-token']),
      );
    } finally {
      await api.close();
    }
  });

  it('a refusal (RBAC) fails with one line and exit 1; bad arguments exit 2', async () => {
    writeAccount();
    const api = await fakeApi(
      () => ({ status: 403, body: { message: 'pods "osworld-desktop-1" is forbidden' } }),
      { port: 0 },
    );
    try {
      const refused = await reset(['k8s', 'osworld-desktop-1'], {
        BENCHFLEET_K8S_API: `http://127.0.0.1:${api.port}`,
        BENCHFLEET_K8S_SERVICEACCOUNT_DIR: account,
      });
      expect(refused).toMatchObject({
        code: 1,
        stderr:
          'desktop-reset: kubernetes GET /api/v1/namespaces/benchfleet/pods/osworld-desktop-1 answered HTTP 403: pods "osworld-desktop-1" is forbidden\n',
      });
    } finally {
      await api.close();
    }
    const usage = await reset(['podman', 'x'], {});
    expect(usage.code).toBe(2);
    expect(usage.stderr).toBe(
      'usage: benchfleet-desktop-reset.mjs docker CONTAINER | k8s POD (got: podman x)\n',
    );
  });
});
