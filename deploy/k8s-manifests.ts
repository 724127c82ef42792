// The Kubernetes manifests of deploy/k8s as the tests read them: every document of every file the
// kustomization lists, each with the published schema of its kind.
//
// Schemas: kubernetes-models ships the Kubernetes OpenAPI definitions (kubernetes/kubernetes
// api/openapi-spec) compiled to ajv validators, and @kubernetes-models/keda the KEDA CRDs' schemas,
// generated from KEDA's Go API types (the source of the CRDs' openAPIV3Schema).
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import type { TypeMeta } from '@kubernetes-models/base';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { TriggerAuthentication } from '@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication';

export const DEPLOY_DIR = fileURLToPath(new URL('.', import.meta.url));
const K8S_DIR = join(DEPLOY_DIR, 'k8s');
export const REPO_DIR = join(DEPLOY_DIR, '..');

/** The kinds deploy/k8s may contain, each with the model that validates it. */
const K8S_MODELS = {
  'v1/ConfigMap': ConfigMap,
  'v1/Namespace': Namespace,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'rbac.authorization.k8s.io/v1/Role': Role,
  'rbac.authorization.k8s.io/v1/RoleBinding': RoleBinding,
  'keda.sh/v1alpha1/ScaledObject': ScaledObject,
  'keda.sh/v1alpha1/TriggerAuthentication': TriggerAuthentication,
} as const;

export interface Kustomization {
  apiVersion: string;
  kind: string;
  namespace?: string;
  resources?: string[];
  images?: Array<{ name: string; newName?: string; newTag?: string }>;
}

export interface ManifestDocument {
  /** File name inside deploy/k8s. */
  file: string;
  object: TypeMeta & { metadata?: { name?: string; namespace?: string } };
}

/** Every YAML document of a file, failing on any YAML error (not just the first document's). */
function readYamlDocuments(path: string): unknown[] {
  return parseAllDocuments(readFileSync(path, 'utf8')).map((document, index) => {
    if (document.errors.length)
      throw new Error(
        `${path} document ${index + 1}: ${document.errors.map((e) => e.message).join('; ')}`,
      );
    return document.toJS() as unknown;
  });
}

export function k8sFiles(): string[] {
  return readdirSync(K8S_DIR)
    .filter((name) => /\.ya?ml$/.test(name))
    .sort();
}

export function readKustomization(): Kustomization {
  const [kustomization] = readYamlDocuments(join(K8S_DIR, 'kustomization.yaml'));
  return kustomization as Kustomization;
}

/** The documents of the files the kustomization lists, in its order. */
export function readK8sManifests(): ManifestDocument[] {
  return (readKustomization().resources ?? []).flatMap((file) =>
    readYamlDocuments(join(K8S_DIR, file)).map((object) => ({
      file,
      object: object as ManifestDocument['object'],
    })),
  );
}

/** Schema errors of one object against its kind's published schema (empty when valid). */
export function k8sSchemaErrors(object: ManifestDocument['object']): string[] {
  const key = `${object.apiVersion}/${object.kind}`;
  if (!(key in K8S_MODELS)) return [`no schema for ${key}: add its model to K8S_MODELS`];
  const Model = K8S_MODELS[key as keyof typeof K8S_MODELS] as unknown as new (data: unknown) => {
    validate(): void;
  };
  try {
    new Model(object).validate();
    return [];
  } catch (error) {
    return [error instanceof Error ? error.message : String(error)];
  }
}

/** The one object of a kind with this name; throws when there is none. */
export function k8sObject<T extends TypeMeta>(
  documents: ManifestDocument[],
  model: { is: (value: unknown) => value is T; kind: string },
  name: string,
): T {
  const found = documents
    .map((document) => document.object)
    .find((object) => object.metadata?.name === name && model.is(object));
  if (!found || !model.is(found)) throw new Error(`no ${model.kind} named ${name} in deploy/k8s`);
  return found;
}

export function k8sObjects<T extends TypeMeta>(
  documents: ManifestDocument[],
  model: { is: (value: unknown) => value is T },
): T[] {
  return documents
    .map((document) => document.object)
    .filter((object): object is ManifestDocument['object'] & T => model.is(object));
}

type RenderedObject = ManifestDocument['object'] & {
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
};

/**
 * What `kubectl kustomize deploy/k8s` renders, for the features the kustomization uses: its
 * resources in order, the namespace on every namespaced object (and on a RoleBinding's
 * ServiceAccount subjects that name none), image names replaced, and label pairs added to each
 * object's own metadata (`includeSelectors: false` leaves selectors and pod
 * templates alone), then its replacements (a field copied from one object into others). The tests
 * read this on machines without kubectl, and check it against kubectl where there is one.
 */
export function renderKustomization(): RenderedObject[] {
  const kustomization = readKustomization() as Kustomization & {
    labels?: Array<{ pairs: Record<string, string>; includeSelectors?: boolean }>;
    replacements?: KustomizeReplacement[];
  };
  const images = new Map(
    (kustomization.images ?? []).map((image) => [
      image.name,
      `${image.newName ?? image.name}${image.newTag ? `:${image.newTag}` : ''}`,
    ]),
  );
  const renameImages = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(renameImages);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => {
        if (key !== 'image' || typeof inner !== 'string') return [key, renameImages(inner)];
        const [name, tag] = inner.split(':') as [string, string | undefined];
        const replaced = images.get(name);
        return [
          key,
          replaced === undefined ? inner : tag ? replaced.split(':')[0] + ':' + tag : replaced,
        ];
      }),
    );
  };
  const labels = Object.assign({}, ...(kustomization.labels ?? []).map((entry) => entry.pairs));
  const rendered = readK8sManifests().map(({ object }) => {
    const rendered = renameImages(structuredClone(object)) as RenderedObject;
    rendered.metadata = {
      ...rendered.metadata,
      labels: { ...rendered.metadata?.labels, ...labels },
      ...(rendered.kind !== 'Namespace' && kustomization.namespace
        ? { namespace: kustomization.namespace }
        : {}),
    };
    const subjects = (rendered as { subjects?: Array<{ kind?: string; namespace?: string }> })
      .subjects;
    if (rendered.kind === 'RoleBinding' && kustomization.namespace)
      for (const subject of subjects ?? [])
        if (subject.kind === 'ServiceAccount' && subject.namespace === undefined)
          subject.namespace = kustomization.namespace;
    return rendered;
  });
  for (const replacement of kustomization.replacements ?? []) {
    const source = rendered.find(
      (object) =>
        object.kind === replacement.source.kind &&
        object.metadata?.name === replacement.source.name,
    );
    const value = source && fieldAt(source, replacement.source.fieldPath);
    if (value === undefined)
      throw new Error(`replacement source ${JSON.stringify(replacement.source)} not found`);
    for (const target of replacement.targets)
      for (const object of rendered)
        if (object.kind === target.select.kind && object.metadata?.name === target.select.name)
          for (const fieldPath of target.fieldPaths) setFieldAt(object, fieldPath, value);
  }
  return rendered;
}

interface KustomizeReplacement {
  source: { kind: string; name: string; fieldPath: string };
  targets: Array<{ select: { kind: string; name: string }; fieldPaths: string[] }>;
}

/** A kustomize field path's parts: `a.b.[name=x].c` → a, b, the list item named x, c. */
function fieldPathParts(fieldPath: string): string[] {
  return fieldPath.match(/\[[^\]]*\]|[^.]+/g) ?? [];
}

/** The container holding the path's last part (`[name=x]` picks the list item named x). */
function walk(object: unknown, parts: readonly string[]): Record<string, unknown> | undefined {
  let at: unknown = object;
  for (const part of parts) {
    const selector = /^\[(\w+)=(.*)\]$/.exec(part);
    at = selector
      ? Array.isArray(at)
        ? at.find((item: Record<string, unknown>) => item[selector[1]!] === selector[2])
        : undefined
      : (at as Record<string, unknown> | undefined)?.[part];
    if (at === undefined || at === null) return undefined;
  }
  return at as Record<string, unknown>;
}

function fieldAt(object: unknown, fieldPath: string): unknown {
  const parts = fieldPathParts(fieldPath);
  return walk(object, parts.slice(0, -1))?.[parts.at(-1)!];
}

function setFieldAt(object: unknown, fieldPath: string, value: unknown): void {
  const parts = fieldPathParts(fieldPath);
  const holder = walk(object, parts.slice(0, -1));
  if (holder === undefined) throw new Error(`replacement target ${fieldPath} not found`);
  holder[parts.at(-1)!] = value;
}
