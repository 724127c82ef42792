// A fresh desktop for a graded OSWorld task: worker-osworld's --reset-command in the image.
//
//   node /usr/local/lib/benchfleet-desktop-reset.mjs docker CONTAINER   (compose: DOCKER_HOST, default the socket)
//   node /usr/local/lib/benchfleet-desktop-reset.mjs k8s POD            (Kubernetes: the pod's service account)
//
// docker: the container is recreated from its own configuration (inspect, remove it, killed, with
// its anonymous volumes, create under the same name with the same config, host config and
// networks, start): a new writable layer, so nothing a task changed survives. A restart would keep
// it; a graceful stop first would only add seconds, since nothing of the old one is kept.
// k8s: the pod is deleted (with its UID as precondition) and the StatefulSet that owns it creates
// it anew under the same name; the command waits until that new pod is Ready. Exit 0 when done,
// 1 with one line on stderr when not, 2 on bad arguments. The worker's reset deadline bounds it.
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { request as httpsRequest } from 'node:https';

const REQUEST_TIMEOUT_MS = 60_000;
const POLL_MS = 1_000;

class ResetError extends Error {}

/** One HTTP exchange: JSON in, `{status, body}` out (body parsed when it is JSON). */
function exchange(options, body) {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const send = options.protocol === 'https:' ? httpsRequest : request;
    const req = send(
      {
        ...options,
        headers: {
          ...options.headers,
          // A DELETE's body is not chunked by default: its length must be given.
          ...(payload === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': payload.length }),
        },
        timeout: REQUEST_TIMEOUT_MS,
      },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed = text;
          try {
            parsed = text ? JSON.parse(text) : null;
          } catch {
            // a plain-text answer
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS / 1000} s`)),
    );
    req.on('error', reject);
    req.end(payload);
  });
}

function expectStatus(what, answer, allowed) {
  if (allowed.includes(answer.status)) return answer;
  const message =
    answer.body && typeof answer.body === 'object' ? answer.body.message : String(answer.body);
  throw new ResetError(`${what} answered HTTP ${answer.status}: ${message}`);
}

// --- Docker Engine API -------------------------------------------------------------------------

function dockerSocket() {
  const host = process.env.DOCKER_HOST || 'unix:///var/run/docker.sock';
  if (!host.startsWith('unix://'))
    throw new ResetError(`DOCKER_HOST ${host}: only a unix:// socket is supported`);
  return host.slice('unix://'.length);
}

async function docker(method, path, body) {
  const answer = await exchange({ socketPath: dockerSocket(), method, path }, body).catch(
    (error) => {
      throw new ResetError(`docker ${method} ${path}: ${error.message}`);
    },
  );
  return { what: `docker ${method} ${path}`, ...answer };
}

async function recreateContainer(name) {
  const inspected = await docker('GET', `/containers/${encodeURIComponent(name)}/json`);
  if (inspected.status === 404) throw new ResetError(`no container named ${name}`);
  const container = expectStatus(inspected.what, inspected, [200]).body;
  const shortId = container.Id.slice(0, 12);
  const networks = Object.entries(container.NetworkSettings?.Networks ?? {}).map(
    ([network, endpoint]) => [
      network,
      {
        // The old container's short id is no alias of the new one.
        Aliases: (endpoint.Aliases ?? []).filter((alias) => alias !== shortId),
        ...(endpoint.IPAMConfig ? { IPAMConfig: endpoint.IPAMConfig } : {}),
        ...(endpoint.Links ? { Links: endpoint.Links } : {}),
        ...(endpoint.DriverOpts ? { DriverOpts: endpoint.DriverOpts } : {}),
      },
    ],
  );
  const removed = await docker('DELETE', `/containers/${container.Id}?v=true&force=true`);
  expectStatus(removed.what, removed, [204, 404]);
  const [first, ...others] = networks;
  const created = await docker('POST', `/containers/create?name=${encodeURIComponent(name)}`, {
    ...container.Config,
    HostConfig: container.HostConfig,
    NetworkingConfig: { EndpointsConfig: first ? { [first[0]]: first[1] } : {} },
  });
  const id = expectStatus(created.what, created, [201]).body.Id;
  for (const [network, endpoint] of others) {
    const connected = await docker('POST', `/networks/${encodeURIComponent(network)}/connect`, {
      Container: id,
      EndpointConfig: endpoint,
    });
    expectStatus(connected.what, connected, [200]);
  }
  const started = await docker('POST', `/containers/${id}/start`);
  expectStatus(started.what, started, [204]);
  return `recreated container ${name} (${shortId} → ${id.slice(0, 12)})`;
}

// --- Kubernetes API ----------------------------------------------------------------------------

function kubernetes() {
  const accountDir =
    process.env.BENCHFLEET_K8S_SERVICEACCOUNT_DIR ||
    '/var/run/secrets/kubernetes.io/serviceaccount';
  const read = (file) => readFileSync(`${accountDir}/${file}`, 'utf8').trim();
  // BENCHFLEET_K8S_API (plain http) is for tests; in a pod the API is the in-cluster service.
  const base = new URL(
    process.env.BENCHFLEET_K8S_API ||
      `https://${process.env.KUBERNETES_SERVICE_HOST}:${process.env.KUBERNETES_SERVICE_PORT}`,
  );
  return {
    namespace: read('namespace'),
    async call(method, path, body) {
      const answer = await exchange(
        {
          protocol: base.protocol,
          hostname: base.hostname,
          port: base.port,
          method,
          path,
          headers: { authorization: `Bearer ${read('token')}` },
          ...(base.protocol === 'https:' ? { ca: read('ca.crt') } : {}),
        },
        body,
      ).catch((error) => {
        throw new ResetError(`kubernetes ${method} ${path}: ${error.message}`);
      });
      return { what: `kubernetes ${method} ${path}`, ...answer };
    },
  };
}

const isReady = (pod) =>
  pod.status?.phase === 'Running' &&
  (pod.status.conditions ?? []).some(
    (condition) => condition.type === 'Ready' && condition.status === 'True',
  );

async function recreatePod(name) {
  const api = kubernetes();
  const path = `/api/v1/namespaces/${encodeURIComponent(api.namespace)}/pods/${encodeURIComponent(name)}`;
  const current = await api.call('GET', path);
  const oldUid =
    current.status === 404 ? null : expectStatus(current.what, current, [200]).body.metadata.uid;
  if (oldUid !== null) {
    const deleted = await api.call('DELETE', path, {
      gracePeriodSeconds: 5,
      preconditions: { uid: oldUid },
    });
    // 404: already gone; 409: the precondition failed, it was already replaced.
    expectStatus(deleted.what, deleted, [200, 202, 404, 409]);
  }
  for (;;) {
    const answer = await api.call('GET', path);
    if (answer.status !== 404) {
      const pod = expectStatus(answer.what, answer, [200]).body;
      if (pod.metadata.uid !== oldUid && !pod.metadata.deletionTimestamp && isReady(pod))
        return `recreated pod ${name} (${oldUid ?? 'none'} → ${pod.metadata.uid})`;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

// --- main --------------------------------------------------------------------------------------

const [kind, name, ...rest] = process.argv.slice(2);
if (!['docker', 'k8s'].includes(kind ?? '') || !name || rest.length > 0) {
  process.stderr.write(
    'usage: benchfleet-desktop-reset.mjs docker CONTAINER | k8s POD (got: ' +
      `${process.argv.slice(2).join(' ') || 'no arguments'})\n`,
  );
  process.exit(2);
}
try {
  const done = kind === 'docker' ? await recreateContainer(name) : await recreatePod(name);
  process.stdout.write(`${done}\n`);
} catch (error) {
  process.stderr.write(
    `desktop-reset: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
}
