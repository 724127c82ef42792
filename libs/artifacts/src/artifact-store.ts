import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AwsClient } from 'aws4fetch';
import { sanitizeId, UsageError } from '@benchfleet/core';

/** Large blobs (screenshots) live here; rows keep only their URI. */
export interface ArtifactStore {
  readonly baseUri: string;
  /** Stores bytes under a key built from sanitised id segments; returns the artifact's URI. */
  put(segments: string[], bytes: Buffer): Promise<string>;
  get(uri: string): Promise<Buffer>;
}

/** An S3-compatible service (AWS S3, MinIO, R2, …), addressed path-style. */
export interface S3Settings {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export interface ArtifactSettings {
  s3?: S3Settings;
}

export class FileArtifactStore implements ArtifactStore {
  readonly baseUri: string;

  constructor(private readonly root: string) {
    this.baseUri = pathToFileURL(root).toString();
  }

  async put(segments: string[], bytes: Buffer): Promise<string> {
    const path = join(this.root, ...segments.map(sanitizeId));
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, bytes);
    return pathToFileURL(path).toString();
  }

  async get(uri: string): Promise<Buffer> {
    const path = fileURLToPath(uri);
    if (!resolve(path).startsWith(resolve(this.root)))
      throw new Error(`artifact ${uri} is outside the store ${this.baseUri}`);
    return readFile(path);
  }
}

function parseS3Uri(uri: string): { bucket: string; key: string } {
  const match = /^s3:\/\/([^/]+)\/?(.*)$/.exec(uri);
  if (!match?.[1]) throw new UsageError(`${uri} is not an s3://bucket/prefix URI`);
  return { bucket: match[1], key: match[2] ?? '' };
}

export class S3ArtifactStore implements ArtifactStore {
  private readonly client: AwsClient;
  private readonly bucket: string;
  private readonly prefix: string;

  constructor(
    readonly baseUri: string,
    private readonly settings: S3Settings,
  ) {
    const { bucket, key } = parseS3Uri(baseUri);
    this.bucket = bucket;
    this.prefix = key.replace(/\/+$/, '');
    this.client = new AwsClient({
      accessKeyId: settings.accessKeyId,
      secretAccessKey: settings.secretAccessKey,
      region: settings.region,
      service: 's3',
    });
  }

  private objectUrl(bucket: string, key: string): string {
    const path = key.split('/').map(encodeURIComponent).join('/');
    return `${this.settings.endpoint.replace(/\/+$/, '')}/${encodeURIComponent(bucket)}/${path}`;
  }

  async put(segments: string[], bytes: Buffer): Promise<string> {
    const key = [this.prefix, ...segments.map(sanitizeId)].filter(Boolean).join('/');
    const response = await this.client.fetch(this.objectUrl(this.bucket, key), {
      method: 'PUT',
      body: bytes,
      headers: { 'content-type': key.endsWith('.png') ? 'image/png' : 'application/octet-stream' },
    });
    if (!response.ok)
      throw new Error(`S3 PUT s3://${this.bucket}/${key} failed: HTTP ${response.status}`);
    return `s3://${this.bucket}/${key}`;
  }

  async get(uri: string): Promise<Buffer> {
    const { bucket, key } = parseS3Uri(uri);
    const response = await this.client.fetch(this.objectUrl(bucket, key));
    if (!response.ok) throw new Error(`S3 GET ${uri} failed: HTTP ${response.status}`);
    return Buffer.from(await response.arrayBuffer());
  }
}

/**
 * `file:///abs/dir`, `file://./relative/dir`, a plain path, or `s3://bucket/prefix` (with S3
 * settings, see `s3SettingsFromEnv`).
 */
export function createArtifactStore(
  uri: string,
  settings: ArtifactSettings = {},
  cwd: string = process.cwd(),
): ArtifactStore {
  if (uri.startsWith('file://')) {
    const rest = uri.slice('file://'.length);
    const path = rest.startsWith('/') ? fileURLToPath(uri) : resolve(cwd, rest);
    return new FileArtifactStore(path);
  }
  if (uri.startsWith('s3://')) {
    if (!settings.s3) {
      throw new UsageError(
        `BENCHFLEET_ARTIFACTS=${uri} needs S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and BENCHFLEET_S3_ENDPOINT for a non-AWS service)`,
      );
    }
    return new S3ArtifactStore(uri, settings.s3);
  }
  if (!uri.includes('://')) return new FileArtifactStore(isAbsolute(uri) ? uri : resolve(cwd, uri));
  throw new UsageError(
    `BENCHFLEET_ARTIFACTS=${uri}: expected a directory, a file:// URI or an s3://bucket/prefix URI`,
  );
}

/** Reads an artifact by URI wherever it lives. */
export async function readArtifact(uri: string, settings: ArtifactSettings = {}): Promise<Buffer> {
  if (uri.startsWith('file://')) return readFile(fileURLToPath(uri));
  if (uri.startsWith('s3://')) {
    if (!settings.s3)
      throw new UsageError(
        `cannot read ${uri}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and BENCHFLEET_S3_ENDPOINT)`,
      );
    return new S3ArtifactStore(uri, settings.s3).get(uri);
  }
  throw new Error(`cannot read artifact ${uri}: unsupported scheme`);
}

/** S3 settings from the standard AWS variables plus BENCHFLEET_S3_ENDPOINT; none without keys. */
export function s3SettingsFromEnv(env: NodeJS.ProcessEnv): S3Settings | undefined {
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) return undefined;
  const region = env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1';
  return {
    accessKeyId,
    secretAccessKey,
    region,
    endpoint: env.BENCHFLEET_S3_ENDPOINT || `https://s3.${region}.amazonaws.com`,
  };
}
