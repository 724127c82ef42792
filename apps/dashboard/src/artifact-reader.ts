import { realpath } from 'node:fs/promises';
import { isAbsolute, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ArtifactStore } from '@benchfleet/artifacts';

export interface Screenshot {
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

/**
 * Reads a screenshot whose URI came from a `steps` row, and only if it lies inside the fleet's
 * artifact store: a row pointing elsewhere (`file:///etc/…`, `../`, a symlink out, another
 * bucket) is refused, and so is anything that is not an image.
 */
export class ScreenshotReader {
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

  /** The image, or undefined when the URI is outside the store, missing, or not an image. */
  async read(uri: string): Promise<Screenshot | undefined> {
    if (!(await this.isInsideStore(uri))) return undefined;
    const bytes = await this.store.get(uri).catch(() => undefined);
    if (!bytes) return undefined;
    const contentType = imageType(bytes);
    return contentType ? { bytes, contentType } : undefined;
  }
}
