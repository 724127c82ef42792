#!/usr/bin/env node
// The place in the deploy manifests of every worker app that says `benchfleet.deploy` in its
// package.json (the workspace's list: ../workspace-apps.mjs): a compose service in compose.yaml,
// between the two marker lines, and a Deployment in k8s/benchmark-workers.yaml. WebShop and OSWorld
// have hand-written manifests (KEDA, Bytebot stacks) and say nothing there.
//
//   node deploy/worker-manifests.mjs           rewrite both where they differ (`npm run build` does)
//   node deploy/worker-manifests.mjs --check   exit 1, naming them, when they are not current
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { workspaceApps } from '../workspace-apps.mjs';

const DEPLOY_DIR = dirname(fileURLToPath(import.meta.url));
const REPO_DIR = join(DEPLOY_DIR, '..');
const COMPOSE_FILE = join(DEPLOY_DIR, 'compose.yaml');
const K8S_WORKERS_FILE = join(DEPLOY_DIR, 'k8s', 'benchmark-workers.yaml');
export const COMPOSE_BEGIN =
  "  # --- benchmark workers: written by `npm run build` from each worker app's package.json (benchfleet.deploy); edit those ---";
export const COMPOSE_END = '  # --- end of benchmark workers ---';

/** The worker apps whose place is rendered. */
export function renderedWorkers(root = REPO_DIR) {
  return workspaceApps(root).filter((app) => app.kind === 'worker' && app.deploy);
}

const quoted = (value) => JSON.stringify(String(value));

/** The compose services of those workers, the lines between the markers. */
export function composeWorkers(apps = renderedWorkers()) {
  return apps.flatMap((app) => [
    `  # ${app.name}: from ${relative(REPO_DIR, join(app.dir, 'package.json'))}`,
    `  ${app.name}:`,
    '    <<: *benchfleet',
    `    command: [${app.name}]`,
    '    environment:',
    '      <<: *benchfleet-env',
    ...Object.entries(app.deploy.environment ?? {}).map(
      ([name, value]) => `      ${name}: ${quoted(value)}`,
    ),
    '      BENCHFLEET_METRICS_PORT: "9464"',
    '      BENCHFLEET_METRICS_HOST: "0.0.0.0"',
    '    stop_grace_period: 90s',
    '    deploy:',
    `      replicas: ${Number(app.deploy.replicas)}`,
  ]);
}

/** compose.yaml with its rendered part replaced by `lines`. */
function withComposeWorkers(text, lines = composeWorkers()) {
  const begin = text.indexOf(`${COMPOSE_BEGIN}\n`);
  const end = text.indexOf(`${COMPOSE_END}\n`);
  if (begin === -1 || end < begin)
    throw new Error(`${COMPOSE_FILE}: the benchmark workers' marker lines are missing`);
  return `${text.slice(0, begin)}${[COMPOSE_BEGIN, ...lines, COMPOSE_END].join('\n')}\n${text.slice(end + COMPOSE_END.length + 1)}`;
}

/** k8s/benchmark-workers.yaml: a Deployment per worker, probed on /healthz like the others. */
export function k8sWorkers(apps = renderedWorkers()) {
  const header = [
    '# Benchmark workers without hand-written manifests: written by `npm run build` from each worker',
    "# app's package.json (benchfleet.deploy: replicas, environment); edit those, not this file.",
  ];
  const documents = apps.map((app) =>
    [
      `# ${app.name}: from ${relative(REPO_DIR, join(app.dir, 'package.json'))}`,
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata:',
      `  name: ${app.name}`,
      '  labels:',
      '    app.kubernetes.io/name: benchfleet',
      `    app.kubernetes.io/component: ${app.name}`,
      'spec:',
      `  replicas: ${Number(app.deploy.replicas)}`,
      '  selector:',
      '    matchLabels:',
      '      app.kubernetes.io/name: benchfleet',
      `      app.kubernetes.io/component: ${app.name}`,
      '  template:',
      '    metadata:',
      '      labels:',
      '        app.kubernetes.io/name: benchfleet',
      `        app.kubernetes.io/component: ${app.name}`,
      '      annotations:',
      '        prometheus.io/scrape: "true"',
      '        prometheus.io/port: "9464"',
      '        prometheus.io/path: /metrics',
      '    spec:',
      '      terminationGracePeriodSeconds: 90',
      '      securityContext:',
      '        runAsNonRoot: true',
      '        runAsUser: 1000',
      '        runAsGroup: 1000',
      '        seccompProfile:',
      '          type: RuntimeDefault',
      '      containers:',
      `        - name: ${app.name}`,
      '          image: benchfleet',
      `          args: [${app.name}]`,
      '          envFrom:',
      '            - configMapRef:',
      '                name: benchfleet-config',
      '          env:',
      ...Object.entries(app.deploy.environment ?? {}).flatMap(([name, value]) => [
        `            - name: ${name}`,
        `              value: ${quoted(value)}`,
      ]),
      ...['DATABASE_URL', 'REDIS_URL'].flatMap((name) => [
        `            - name: ${name}`,
        '              valueFrom:',
        '                secretKeyRef:',
        '                  name: benchfleet-secrets',
        `                  key: ${name}`,
      ]),
      '          ports:',
      '            - name: metrics',
      '              containerPort: 9464',
      ...['startupProbe', 'readinessProbe', 'livenessProbe'].flatMap((probe) => [
        `          ${probe}:`,
        '            httpGet:',
        '              path: /healthz',
        '              port: metrics',
        '            periodSeconds: 10',
      ]),
      '          securityContext:',
      '            allowPrivilegeEscalation: false',
      '            readOnlyRootFilesystem: true',
      '            capabilities:',
      '              drop: [ALL]',
      '          volumeMounts:',
      '            - name: tmp',
      '              mountPath: /tmp',
      '      volumes:',
      '        - name: tmp',
      '          emptyDir: {}',
    ].join('\n'),
  );
  return `${header.join('\n')}\n${documents.join('\n---\n')}\n`;
}

/** The files whose rendered part is not what the workspace says now. */
export function staleWorkerManifests() {
  const stale = [];
  if (readFileSync(COMPOSE_FILE, 'utf8') !== withComposeWorkers(readFileSync(COMPOSE_FILE, 'utf8')))
    stale.push(COMPOSE_FILE);
  let current = '';
  try {
    current = readFileSync(K8S_WORKERS_FILE, 'utf8');
  } catch {
    // not written yet
  }
  if (current !== k8sWorkers()) stale.push(K8S_WORKERS_FILE);
  return stale;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const stale = staleWorkerManifests();
  if (process.argv.includes('--check')) {
    if (stale.length > 0) {
      process.stderr.write(
        `not current: ${stale.map((file) => relative(REPO_DIR, file)).join(', ')}; run \`npm run build\`\n`,
      );
      process.exit(1);
    }
  } else {
    if (stale.includes(COMPOSE_FILE))
      writeFileSync(COMPOSE_FILE, withComposeWorkers(readFileSync(COMPOSE_FILE, 'utf8')));
    if (stale.includes(K8S_WORKERS_FILE)) writeFileSync(K8S_WORKERS_FILE, k8sWorkers());
    for (const file of stale) process.stderr.write(`wrote ${relative(REPO_DIR, file)}\n`);
  }
}
