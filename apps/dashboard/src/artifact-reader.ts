import { realpath } from 'node:fs/promises';
import { isAbsolute, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ArtifactStore } from '@benchfleet/artifacts';

export interface Artifact {
  bytes: Buffer;
  contentType: string;
}

const IMAGE_SIGNATURES: { contentType: string; bytes: number[] }[] = [
  { contentType: 'image/png', bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
  { contentType: 'image/jpeg', bytes: [0xff, 0xd8, 0xff] },
  { contentType: 'image/webp', bytes: [0x52, 0x49, 0x46, 0x46] },
];

function imageType(bytes: Buffer): string | undefined {
  return IMAGE_SIGNATURES.find((signature) => signature.bytes.every((byte, i) => bytes[i] === byte))
    ?.contentType;
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

/** s3://bucket/prefix → [bucket, prefix without trailing slash]. */
function s3Parts(uri: string): [string, string] | undefined {
  const match = /^s3:\/\/([^/]+)\/?(.*)$/.exec(uri);
  return match?.[1] ? [match[1], (match[2] ?? '').replace(/\/+$/, '')] : undefined;
}

/** Text a browser can show as it is: UTF-8 without NUL bytes. */
function isPlainText(bytes: Buffer): boolean {
  if (bytes.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/**
 * Reads an artifact whose URI came from a row (a step's screenshot, a file a grade kept), and only
 * if it lies inside the fleet's artifact store: a row pointing elsewhere (`file:///etc/…`, `../`, a
 * symlink out, another bucket) is refused. A screenshot must be an image.
 */
export class ArtifactReader {
  constructor(private readonly store: ArtifactStore) {}

  async isInsideStore(uri: string): Promise<boolean> {
    const base = this.store.baseUri;
    if (base.startsWith('file://') && uri.startsWith('file://')) {
      const root = fileURLToPath(base);
      const path = fileURLToPath(uri);
      if (!inside(root, path)) return false;
      // The real paths too, so that a symlink inside the store cannot lead out of it.
      const [realRoot, realPath] = await Promise.all([
        realpath(root),
        realpath(path).catch(() => undefined),
      ]);
      return realPath !== undefined && inside(realRoot, realPath);
    }
    if (base.startsWith('s3://') && uri.startsWith('s3://')) {
      const store = s3Parts(base);
      const object = s3Parts(uri);
      if (!store || !object || store[0] !== object[0]) return false;
      const key = object[1];
      if (key.split('/').some((segment) => segment === '..' || segment === '.')) return false;
      return store[1] === '' ? key !== '' : key.startsWith(`${store[1]}/`);
    }
    return false;
  }

  private async bytesOf(uri: string): Promise<Buffer | undefined> {
    if (!(await this.isInsideStore(uri))) return undefined;
    return this.store.get(uri).catch(() => undefined);
  }

  /** The image, or undefined when the URI is outside the store, missing, or not an image. */
  async readImage(uri: string): Promise<Artifact | undefined> {
    const bytes = await this.bytesOf(uri);
    const contentType = bytes && imageType(bytes);
    return bytes && contentType ? { bytes, contentType } : undefined;
  }

  /** Any file: plain text as such, anything else as bytes to download; undefined outside the store or missing. */
  async readFile(uri: string): Promise<Artifact | undefined> {
    const bytes = await this.bytesOf(uri);
    if (!bytes) return undefined;
    return {
      bytes,
      contentType: isPlainText(bytes) ? 'text/plain; charset=utf-8' : 'application/octet-stream',
    };
  }
}
