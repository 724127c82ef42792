import { mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AwsClient } from 'aws4fetch';
import { errorMessage, sanitizeId, TransientError, UsageError } from '@benchfleet/core';

/** Large blobs (screenshots) live here; rows keep only their URI. */
export interface ArtifactStore {
  readonly baseUri: string;
  /** Stores bytes under a key built from sanitised id segments; returns the artifact's URI. */
  put(segments: string[], bytes: Buffer): Promise<string>;
  get(uri: string): Promise<Buffer>;
  /**
   * Whether the store takes a write now (under `.health/`: a new file of 64 KiB, the size of a
   * small screenshot, removed again; a small object on S3), within `timeoutMs`: null, or why not,
   * naming the store and the cause (ENOSPC on a full disk, S3 5xx, no answer).
   */
  healthProblem(name: string, timeoutMs?: number): Promise<string | null>;
}

/** Every request to an S3 service has this long, at most (a screenshot is a few hundred KiB). */
const ARTIFACT_REQUEST_TIMEOUT_MS = 30_000;

const PROBE_BYTES = Buffer.alloc(64 * 1024);

/** The store cannot take or give an artifact now: a fault of the world around the fleet, named. */
export class ArtifactStoreError extends TransientError {
  override readonly name = 'ArtifactStoreError';
  constructor(
    readonly store: string,
    problem: string,
    options?: { cause?: unknown },
  ) {
    super(`the artifact store ${store} ${problem}`, options);
  }
}

/** What a file system error says of the store. */
function fileProblem(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = errorMessage(error);
  if (code === 'ENOSPC' || code === 'EDQUOT') return `is full (${message})`;
  if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM')
    return `refuses writes (${message})`;
  return `cannot be written (${message})`;
}

/** Runs `work` within `ms`, or fails with what did not answer. */
async function within<T>(ms: number, work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  work.catch(() => undefined);
  try {
    return await Promise.race([
      work,
      new Promise<never>(
        (_, reject) =>
          (timer = setTimeout(
            () => reject(new Error(`${what} did not finish within ${ms / 1000} s`)),
            ms,
          )),
      ),
    ]);
  } finally {
    clearTimeout(timer);
  }
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
    try {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, bytes);
    } catch (error) {
      throw new ArtifactStoreError(this.baseUri, fileProblem(error), { cause: error });
    }
    return pathToFileURL(path).toString();
  }

  async healthProblem(name: string, timeoutMs = 5_000): Promise<string | null> {
    // A new file each time: rewriting one would reuse its own blocks and pass on a full disk.
    const path = join(this.root, '.health', `${sanitizeId(name)}-${process.pid}-${Date.now()}`);
    try {
      await within(
        timeoutMs,
        (async () => {
          await mkdir(dirname(path), { recursive: true });
          await writeFile(path, PROBE_BYTES);
        })(),
        'a write',
      );
      return null;
    } catch (error) {
      return `the artifact store ${this.baseUri} ${fileProblem(error)}`;
    } finally {
      await unlink(path).catch(() => undefined);
    }
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

class S3ArtifactStore implements ArtifactStore {
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
      // Two quick retries of a 5xx, not aws4fetch's ten with backoff (half a minute): a service
      // that keeps failing pauses the worker (its health check) instead of holding the episode.
      retries: 2,
    });
  }

  private objectUrl(bucket: string, key: string): string {
    const path = key.split('/').map(encodeURIComponent).join('/');
    return `${this.settings.endpoint.replace(/\/+$/, '')}/${encodeURIComponent(bucket)}/${path}`;
  }

  async put(segments: string[], bytes: Buffer): Promise<string> {
    const key = [this.prefix, ...segments.map(sanitizeId)].filter(Boolean).join('/');
    await this.putObject(key, bytes, ARTIFACT_REQUEST_TIMEOUT_MS);
    return `s3://${this.bucket}/${key}`;
  }

  private async putObject(key: string, bytes: Buffer, timeoutMs: number): Promise<void> {
    const uri = `s3://${this.bucket}/${key}`;
    let response: Response;
    try {
      response = await this.client.fetch(this.objectUrl(this.bucket, key), {
        method: 'PUT',
        body: bytes,
        headers: {
          'content-type': key.endsWith('.png') ? 'image/png' : 'application/octet-stream',
        },
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new ArtifactStoreError(
        this.baseUri,
        `does not answer (S3 PUT ${uri}: ${errorMessage(error)})`,
        {
          cause: error,
        },
      );
    }
    if (response.ok) return;
    await response.body?.cancel().catch(() => undefined);
    const problem = `S3 PUT ${uri} failed: HTTP ${response.status}`;
    // 5xx (and 429 SlowDown) say the service cannot now; 4xx is what was asked (a key, a bucket).
    if (response.status >= 500 || response.status === 429)
      throw new ArtifactStoreError(this.baseUri, `fails (${problem})`);
    throw new Error(problem);
  }

  async get(uri: string): Promise<Buffer> {
    const { bucket, key } = parseS3Uri(uri);
    const response = await this.client.fetch(this.objectUrl(bucket, key), {
      signal: AbortSignal.timeout(ARTIFACT_REQUEST_TIMEOUT_MS),
    });
    if (!response.ok) throw new Error(`S3 GET ${uri} failed: HTTP ${response.status}`);
    return Buffer.from(await response.arrayBuffer());
  }

  async healthProblem(name: string, timeoutMs = 5_000): Promise<string | null> {
    const key = [this.prefix, '.health', sanitizeId(name)].filter(Boolean).join('/');
    try {
      // A service has no disk to fill: a small object proves it takes writes.
      await this.putObject(key, Buffer.from('ok'), timeoutMs);
      return null;
    } catch (error) {
      return error instanceof ArtifactStoreError
        ? error.message
        : `the artifact store ${this.baseUri} refuses writes (${errorMessage(error)})`;
    }
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
