// A catalog's search index, built once (at import, or by `scheduler webshop index`), kept in
// Postgres as a snapshot file in chunks, and copied once per machine into a local cache directory
// from which workers open it (search-snapshot.ts in @benchfleet/webshop reads it).
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '@benchfleet/core';
import { type Database } from '@benchfleet/db';
import {
  WebshopCatalogRepository,
  type SearchSnapshotUpload,
  type StoredSearchSnapshot,
} from './webshop-catalog-repository.js';
import {
  buildSearchContents,
  openSearchSnapshot,
  SearchIndexBuilder,
  SearchSnapshotError,
  writeSearchSnapshot,
  type OpenedSearchSnapshot,
  type SearchContentsSource,
  type SearchSnapshotIdentity,
} from '@benchfleet/webshop';

/** Bumped when the file layout changes; a stored snapshot of another format is rebuilt. */
const SEARCH_SNAPSHOT_FORMAT = 1;
const CHUNK_BYTES = 8 << 20;
const REBUILD_PAGE = 5_000;
const STALE_COPY_AGE_MS = 60 * 60_000;

/** A built snapshot file waiting to be stored; `dispose` removes the file. */
export interface BuiltSearchSnapshot {
  readonly upload: SearchSnapshotUpload;
  readonly documents: number;
  dispose(): Promise<void>;
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: CHUNK_BYTES }))
    hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Collects the search documents of a catalog's products in catalog order and writes the snapshot. */
export class CatalogSearchSnapshotBuilder {
  private readonly builder = new SearchIndexBuilder();

  constructor(private readonly identity: SearchSnapshotIdentity) {}

  add(product: SearchContentsSource & { readonly asin: string }): void {
    this.builder.add({ asin: product.asin, contents: buildSearchContents(product) });
  }

  async finish(): Promise<BuiltSearchSnapshot> {
    const dir = await mkdtemp(join(tmpdir(), 'benchfleet-snapshot-'));
    const path = join(dir, 'search.bfidx');
    const documents = this.builder.documentCount;
    try {
      const bytes = writeSearchSnapshot(this.builder.finish(), path, this.identity);
      const sha256 = await sha256Of(path);
      return {
        documents,
        upload: {
          version: this.identity.version,
          format: SEARCH_SNAPSHOT_FORMAT,
          bytes,
          sha256,
          chunks: async function* () {
            for await (const chunk of createReadStream(path, { highWaterMark: CHUNK_BYTES }))
              yield chunk as Buffer;
          },
        },
        dispose: () => rm(dir, { recursive: true, force: true }),
      };
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
  }
}

/**
 * Builds and stores the search snapshot of a catalog already in Postgres (imported before snapshots
 * existed, or whose snapshot was lost), reading its products page by page in catalog order.
 */
export async function rebuildCatalogSearchSnapshot(
  db: Database,
  catalogId: string,
): Promise<{ documents: number; bytes: number }> {
  const repository = new WebshopCatalogRepository(db);
  const catalog = await repository.get(catalogId);
  if (!catalog)
    throw new UsageError(
      `no WebShop catalog ${catalogId} in Postgres: import it with \`scheduler webshop import\``,
    );
  const builder = new CatalogSearchSnapshotBuilder({ catalogId, version: catalog.version });
  let afterSeq = -1;
  for (;;) {
    const page = await repository.searchFieldsPage(catalogId, afterSeq, REBUILD_PAGE);
    for (const row of page)
      builder.add({ asin: row.asin, ...(row.fields as unknown as SearchContentsSource) });
    if (page.length < REBUILD_PAGE) break;
    afterSeq = page[page.length - 1]?.seq ?? afterSeq;
  }
  const built = await builder.finish();
  try {
    await repository.replaceSearchSnapshot(catalogId, built.upload);
  } finally {
    await built.dispose();
  }
  return { documents: built.documents, bytes: built.upload.bytes };
}

/** The catalog's snapshot is missing or was built for an earlier import: one line, and the fix. */
export class SearchSnapshotMissingError extends UsageError {}

function cacheFileName(catalogId: string, version: string): string {
  return `${encodeURIComponent(catalogId)}--${version}.bfidx`;
}

/** Copies the stored snapshot into `cacheDir` (once per machine and version), checking its sha256. */
async function downloadSnapshot(
  db: Database,
  stored: StoredSearchSnapshot,
  path: string,
): Promise<void> {
  const repository = new WebshopCatalogRepository(db);
  const partial = `${path}.${process.pid}-${randomBytes(4).toString('hex')}.part`;
  const hash = createHash('sha256');
  const file = await open(partial, 'w');
  let written = 0;
  let chunks = 0;
  try {
    chunks = await repository.readSearchSnapshot(stored.catalogId, async (piece) => {
      hash.update(piece);
      await file.write(piece, 0, piece.length, written);
      written += piece.length;
    });
  } finally {
    await file.close();
  }
  if (
    chunks !== stored.chunks ||
    written !== stored.bytes ||
    hash.digest('hex') !== stored.sha256
  ) {
    await rm(partial, { force: true });
    throw new SearchSnapshotError(
      `the search snapshot of WebShop catalog ${stored.catalogId} stored in Postgres is damaged (${written} of ${stored.bytes} bytes, or a sha256 mismatch): rebuild it with \`scheduler webshop index --catalog ${stored.catalogId}\``,
    );
  }
  // Another worker on this machine may have put the same file in place meanwhile: same bytes.
  await rename(partial, path);
}

/**
 * Removes cached snapshots of other versions of this catalog (re-imported since). Only copies
 * untouched for an hour go: a cache directory shared by workers of another database holding a
 * catalog of the same id must not lose the copy one of them is about to open.
 */
async function removeStaleCopies(cacheDir: string, catalogId: string, keep: string): Promise<void> {
  const prefix = `${encodeURIComponent(catalogId)}--`;
  const cutoff = Date.now() - STALE_COPY_AGE_MS;
  for (const name of await readdir(cacheDir)) {
    if (!name.startsWith(prefix) || name === keep || !name.endsWith('.bfidx')) continue;
    const path = join(cacheDir, name);
    const modified = await stat(path).then(
      (found) => found.mtimeMs,
      () => Date.now(),
    );
    if (modified < cutoff) await rm(path, { force: true });
  }
}

export interface OpenedCatalogSnapshot {
  readonly snapshot: OpenedSearchSnapshot;
  /** Whether this open copied the snapshot from Postgres (false: the machine had it cached). */
  readonly downloaded: boolean;
}

/**
 * Opens the search snapshot of the catalog's current version from the local cache, copying it
 * from Postgres first when the cache lacks it. A missing or stale stored snapshot is refused in
 * one line naming the command that builds it; a damaged local copy is replaced once.
 */
export async function openCatalogSearchSnapshot(
  db: Database,
  catalogId: string,
  cacheDir: string,
  options: { readonly postingsCacheBytes?: number } = {},
): Promise<OpenedCatalogSnapshot> {
  const repository = new WebshopCatalogRepository(db);
  const [catalog, stored] = await Promise.all([
    repository.get(catalogId),
    repository.searchSnapshot(catalogId),
  ]);
  if (!catalog)
    throw new UsageError(
      `no WebShop catalog ${catalogId} in Postgres: import it with \`scheduler webshop import\``,
    );
  const fix = `build it once with \`scheduler webshop index --catalog ${catalogId}\``;
  if (!stored)
    throw new SearchSnapshotMissingError(
      `WebShop catalog ${catalogId} has no search index snapshot: ${fix}`,
    );
  if (stored.version !== catalog.version || stored.format !== SEARCH_SNAPSHOT_FORMAT) {
    throw new SearchSnapshotMissingError(
      `the search index snapshot of WebShop catalog ${catalogId} is stale (built for version ${stored.version}, format ${stored.format}; the catalog is version ${catalog.version}, format ${SEARCH_SNAPSHOT_FORMAT}): ${fix}`,
    );
  }
  await mkdir(cacheDir, { recursive: true });
  const name = cacheFileName(catalogId, stored.version);
  const path = join(cacheDir, name);
  const openOptions = { expect: { catalogId, version: stored.version }, ...options };
  const cached = await stat(path).then(
    (found) => found.size === stored.bytes,
    () => false,
  );
  if (cached) {
    try {
      return { snapshot: openSearchSnapshot(path, openOptions), downloaded: false };
    } catch (error) {
      if (!(error instanceof SearchSnapshotError)) throw error;
      await rm(path, { force: true });
    }
  }
  await downloadSnapshot(db, stored, path);
  await removeStaleCopies(cacheDir, catalogId, name);
  return { snapshot: openSearchSnapshot(path, openOptions), downloaded: true };
}
