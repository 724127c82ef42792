// A search index as one binary file, built once per catalog version and opened by every worker
// without rebuilding it. Small tables (norms, asins, terms) are read into memory at open; posting
// lists stay in the file and are read by positional reads when a query needs them, so the OS page
// cache (shared by every worker on a machine) holds them rather than each process's heap.
//
// Layout (little-endian): "BFWSIDX1", u32 header length, u32 CRC-32 of the header, the header as
// JSON (format, catalog identity, file length, statistics, and each section's offset, length and
// CRC-32), then the sections, each 8-byte aligned. Every posting list carries its own CRC-32,
// checked whenever it is read: a damaged or truncated file is refused, never ranked from.

import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import type { TermPostings } from './max-score-search.js';
import {
  searchIndexOver,
  type SearchIndex,
  type SearchIndexData,
  type SearchIndexParts,
  type SearchIndexStats,
} from './search-index.js';

const MAGIC = Buffer.from('BFWSIDX1', 'latin1');
const FORMAT = 1;
const PREAMBLE_BYTES = MAGIC.length + 8;
const WRITE_CHUNK_BYTES = 8 << 20;
/** Posting lists kept in memory for reuse by default; the file itself stays in the OS page cache. */
const DEFAULT_POSTINGS_CACHE_BYTES = 256 << 20;

const SECTION_NAMES = [
  'norms',
  'asinRank',
  'docsByAsin',
  'asinOffsets',
  'asinBytes',
  'termOffsets',
  'termBytes',
  'termOrder',
  'idf',
  'maxDenominator',
  'postingStart',
  'postingChecksums',
  'postings',
] as const;
type SectionName = (typeof SECTION_NAMES)[number];

interface SectionEntry {
  offset: number;
  bytes: number;
  crc: number;
}

/** Which catalog version a snapshot was built from: a worker opens only the one it expects. */
export interface SearchSnapshotIdentity {
  readonly catalogId: string;
  readonly version: string;
}

interface SnapshotHeader extends SearchSnapshotIdentity {
  format: number;
  fileBytes: number;
  stats: SearchIndexStats;
  sections: Record<SectionName, SectionEntry>;
}

/** A snapshot that cannot be trusted: missing, truncated, damaged, or of another catalog version. */
export class SearchSnapshotError extends Error {
  override readonly name = 'SearchSnapshotError';
}

function bytesOf(view: ArrayBufferView): Buffer {
  return Buffer.from(view.buffer, view.byteOffset, view.byteLength);
}

const align8 = (offset: number): number => Math.ceil(offset / 8) * 8;

/** Postings of one term as stored: its documents, then its denominators. */
function termRecordCrc(parts: SearchIndexParts, termId: number): number {
  const start = parts.postingStart[termId] as number;
  const end = parts.postingStart[termId + 1] as number;
  return crc32(
    bytesOf(parts.postingDenominators.subarray(start, end)),
    crc32(bytesOf(parts.postingDocs.subarray(start, end))),
  );
}

/** Writes `parts` as a snapshot file at `path` (created or replaced); returns its length in bytes. */
export function writeSearchSnapshot(
  parts: SearchIndexParts,
  path: string,
  identity: SearchSnapshotIdentity,
): number {
  const { stats } = parts;
  const documentCount = stats.documentCount;
  const termCount = stats.termCount;

  const docsByAsin = new Int32Array(documentCount);
  for (let doc = 0; doc < documentCount; doc++) docsByAsin[parts.asinRank[doc] as number] = doc;
  const encodeAll = (values: readonly string[]): { offsets: Uint32Array; bytes: Buffer } => {
    const encoded = values.map((value) => Buffer.from(value, 'utf8'));
    const offsets = new Uint32Array(values.length + 1);
    encoded.forEach((buffer, i) => (offsets[i + 1] = (offsets[i] as number) + buffer.length));
    return { offsets, bytes: Buffer.concat(encoded) };
  };
  const asins = encodeAll(parts.asins);
  const terms = encodeAll(parts.terms);
  const termOrder = Int32Array.from({ length: termCount }, (_, termId) => termId).sort((a, b) =>
    Buffer.compare(
      terms.bytes.subarray(terms.offsets[a] as number, terms.offsets[a + 1] as number),
      terms.bytes.subarray(terms.offsets[b] as number, terms.offsets[b + 1] as number),
    ),
  );
  const postingChecksums = Uint32Array.from({ length: termCount }, (_, termId) =>
    termRecordCrc(parts, termId),
  );

  const small: Record<Exclude<SectionName, 'postings'>, Buffer> = {
    norms: bytesOf(parts.norms),
    asinRank: bytesOf(parts.asinRank),
    docsByAsin: bytesOf(docsByAsin),
    asinOffsets: bytesOf(asins.offsets),
    asinBytes: asins.bytes,
    termOffsets: bytesOf(terms.offsets),
    termBytes: terms.bytes,
    termOrder: bytesOf(termOrder),
    idf: bytesOf(parts.idf),
    maxDenominator: bytesOf(parts.maxDenominator),
    postingStart: bytesOf(parts.postingStart),
    postingChecksums: bytesOf(postingChecksums),
  };
  const postingsBytes = stats.postingCount * 8;
  let postingsCrc = 0;
  for (let termId = 0; termId < termCount; termId++) {
    const start = parts.postingStart[termId] as number;
    const end = parts.postingStart[termId + 1] as number;
    postingsCrc = crc32(bytesOf(parts.postingDocs.subarray(start, end)), postingsCrc);
    postingsCrc = crc32(bytesOf(parts.postingDenominators.subarray(start, end)), postingsCrc);
  }

  // The header's length depends on the offsets it lists: lay out with a generous bound first.
  const layout = (headerBytes: number): SnapshotHeader => {
    let offset = align8(PREAMBLE_BYTES + headerBytes);
    const sections = {} as Record<SectionName, SectionEntry>;
    for (const name of SECTION_NAMES) {
      const bytes = name === 'postings' ? postingsBytes : small[name].length;
      const crc = name === 'postings' ? postingsCrc : crc32(small[name]);
      sections[name] = { offset, bytes, crc };
      offset = align8(offset + bytes);
    }
    return {
      format: FORMAT,
      catalogId: identity.catalogId,
      version: identity.version,
      fileBytes: offset,
      stats,
      sections,
    };
  };
  let headerBytes = 4096;
  let header = layout(headerBytes);
  let json = Buffer.from(JSON.stringify(header), 'utf8');
  while (json.length !== headerBytes) {
    headerBytes = json.length;
    header = layout(headerBytes);
    json = Buffer.from(JSON.stringify(header), 'utf8');
  }

  const fd = openSync(path, 'w');
  try {
    let position = 0;
    const put = (data: Buffer, at: number): void => {
      let written = 0;
      while (written < data.length)
        written += writeSync(fd, data, written, data.length - written, at + written);
      position = at + data.length;
    };
    const preamble = Buffer.alloc(PREAMBLE_BYTES);
    MAGIC.copy(preamble, 0);
    preamble.writeUInt32LE(json.length, MAGIC.length);
    preamble.writeUInt32LE(crc32(json), MAGIC.length + 4);
    put(preamble, 0);
    put(json, position);
    for (const name of SECTION_NAMES) {
      if (name === 'postings') continue;
      put(small[name], header.sections[name].offset);
    }
    // Postings term by term (documents, then denominators), gathered into large writes.
    const chunk = Buffer.allocUnsafe(WRITE_CHUNK_BYTES);
    let filled = 0;
    let chunkAt = header.sections.postings.offset;
    const append = (data: Buffer): void => {
      let from = 0;
      while (from < data.length) {
        const take = Math.min(data.length - from, chunk.length - filled);
        data.copy(chunk, filled, from, from + take);
        filled += take;
        from += take;
        if (filled === chunk.length) {
          put(chunk, chunkAt);
          chunkAt += filled;
          filled = 0;
        }
      }
    };
    for (let termId = 0; termId < termCount; termId++) {
      const start = parts.postingStart[termId] as number;
      const end = parts.postingStart[termId + 1] as number;
      append(bytesOf(parts.postingDocs.subarray(start, end)));
      append(bytesOf(parts.postingDenominators.subarray(start, end)));
    }
    if (filled > 0) put(chunk.subarray(0, filled), chunkAt);
    // Alignment padding after the last section, so the length is the header's.
    if (header.fileBytes > position) put(Buffer.alloc(header.fileBytes - position), position);
  } finally {
    closeSync(fd);
  }
  return header.fileBytes;
}

function readExactly(fd: number, target: Uint8Array, position: number, path: string): void {
  let read = 0;
  while (read < target.length) {
    const n = readSync(fd, target, read, target.length - read, position + read);
    if (n === 0)
      throw new SearchSnapshotError(
        `search index snapshot ${path} is truncated: it ends at byte ${position + read}`,
      );
    read += n;
  }
}

function readHeader(fd: number, path: string, fileBytes: number): SnapshotHeader {
  if (fileBytes < PREAMBLE_BYTES)
    throw new SearchSnapshotError(
      `search index snapshot ${path} is truncated (${fileBytes} bytes)`,
    );
  const preamble = Buffer.alloc(PREAMBLE_BYTES);
  readExactly(fd, preamble, 0, path);
  if (!preamble.subarray(0, MAGIC.length).equals(MAGIC))
    throw new SearchSnapshotError(`${path} is not a search index snapshot (bad magic bytes)`);
  const length = preamble.readUInt32LE(MAGIC.length);
  if (PREAMBLE_BYTES + length > fileBytes)
    throw new SearchSnapshotError(`search index snapshot ${path} is truncated inside its header`);
  const json = Buffer.alloc(length);
  readExactly(fd, json, PREAMBLE_BYTES, path);
  if (crc32(json) !== preamble.readUInt32LE(MAGIC.length + 4))
    throw new SearchSnapshotError(
      `search index snapshot ${path} has a damaged header (checksum mismatch)`,
    );
  const header = JSON.parse(json.toString('utf8')) as SnapshotHeader;
  if (header.format !== FORMAT)
    throw new SearchSnapshotError(
      `search index snapshot ${path} has format ${header.format}; this version reads format ${FORMAT}`,
    );
  if (header.fileBytes !== fileBytes) {
    throw new SearchSnapshotError(
      `search index snapshot ${path} is ${fileBytes} bytes but its header says ${header.fileBytes}: truncated or damaged`,
    );
  }
  return header;
}

/** A search index whose posting lists are read from its snapshot file on demand. */
export interface OpenedSearchSnapshot extends SearchIndex, SearchSnapshotIdentity {
  readonly path: string;
  readonly fileBytes: number;
  /** Document position (catalog order) of an asin, or -1. */
  documentOf(asin: string): number;
  asinAt(doc: number): string;
  close(): void;
}

export interface OpenSearchSnapshotOptions {
  /** Refuse a snapshot of any other catalog version. */
  readonly expect?: SearchSnapshotIdentity;
  readonly postingsCacheBytes?: number;
}

/** Cached posting lists, least recently used first, bounded by their total bytes. */
class PostingsCache {
  private readonly entries = new Map<number, TermPostings>();
  private bytes = 0;

  constructor(private readonly limit: number) {}

  get(termId: number): TermPostings | undefined {
    const hit = this.entries.get(termId);
    if (hit !== undefined) {
      this.entries.delete(termId);
      this.entries.set(termId, hit);
    }
    return hit;
  }

  set(termId: number, postings: TermPostings): void {
    const size = postings.docs.byteLength * 2;
    if (size > this.limit) return;
    this.entries.set(termId, postings);
    this.bytes += size;
    for (const [oldest, evicted] of this.entries) {
      if (this.bytes <= this.limit) break;
      this.entries.delete(oldest);
      this.bytes -= evicted.docs.byteLength * 2;
    }
  }
}

/**
 * Opens a snapshot: checks its length, header and every small table against their checksums,
 * and (with `expect`) that it belongs to the expected catalog version. Posting lists are
 * checked each time they are read from the file.
 */
export function openSearchSnapshot(
  path: string,
  options: OpenSearchSnapshotOptions = {},
): OpenedSearchSnapshot {
  const fd = openSync(path, 'r');
  try {
    const fileBytes = fstatSync(fd).size;
    const header = readHeader(fd, path, fileBytes);
    const expected = options.expect;
    if (
      expected !== undefined &&
      (header.catalogId !== expected.catalogId || header.version !== expected.version)
    ) {
      throw new SearchSnapshotError(
        `search index snapshot ${path} is of catalog ${header.catalogId} version ${header.version}, not ${expected.catalogId} version ${expected.version}: it is stale`,
      );
    }
    const section = (name: SectionName): Buffer => {
      const entry = header.sections[name];
      if (entry.offset + entry.bytes > fileBytes)
        throw new SearchSnapshotError(
          `search index snapshot ${path} is truncated inside section ${name}`,
        );
      const bytes = Buffer.from(new ArrayBuffer(entry.bytes));
      readExactly(fd, bytes, entry.offset, path);
      if (crc32(bytes) !== entry.crc)
        throw new SearchSnapshotError(
          `search index snapshot ${path} is damaged: section ${name} fails its checksum`,
        );
      return bytes;
    };
    const int32 = (name: SectionName) => {
      const bytes = section(name);
      return new Int32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
    };
    const uint32 = (name: SectionName) => {
      const bytes = section(name);
      return new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
    };
    const float32 = (name: SectionName) => {
      const bytes = section(name);
      return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
    };
    const { stats } = header;
    const norms = new Uint8Array(section('norms'));
    const asinRank = int32('asinRank');
    const docsByAsin = int32('docsByAsin');
    const asinOffsets = uint32('asinOffsets');
    const asinBytes = section('asinBytes');
    const termOffsets = uint32('termOffsets');
    const termBytes = section('termBytes');
    const termOrder = int32('termOrder');
    const idf = float32('idf');
    const maxDenominator = float32('maxDenominator');
    const postingStart = int32('postingStart');
    const postingChecksums = uint32('postingChecksums');
    const counts: Array<[string, number, number]> = [
      ['norms', norms.length, stats.documentCount],
      ['asinRank', asinRank.length, stats.documentCount],
      ['asinOffsets', asinOffsets.length, stats.documentCount + 1],
      ['termOffsets', termOffsets.length, stats.termCount + 1],
      ['postingStart', postingStart.length, stats.termCount + 1],
      ['postings', header.sections.postings.bytes, stats.postingCount * 8],
    ];
    for (const [name, actual, wanted] of counts) {
      if (actual !== wanted)
        throw new SearchSnapshotError(
          `search index snapshot ${path} is inconsistent: section ${name} has ${actual} entries, expected ${wanted}`,
        );
    }

    const asinAt = (doc: number): string => {
      if (!(doc >= 0 && doc < stats.documentCount))
        throw new RangeError(`no document ${doc} in the snapshot`);
      return asinBytes.toString('utf8', asinOffsets[doc] as number, asinOffsets[doc + 1] as number);
    };
    const compareAt = (bytes: Buffer, offsets: Uint32Array, index: number, key: Buffer): number =>
      bytes.compare(key, 0, key.length, offsets[index] as number, offsets[index + 1] as number);
    const termId = (term: string): number | undefined => {
      const key = Buffer.from(term, 'utf8');
      let low = 0;
      let high = termOrder.length - 1;
      while (low <= high) {
        const middle = (low + high) >>> 1;
        const id = termOrder[middle] as number;
        const order = compareAt(termBytes, termOffsets, id, key);
        if (order === 0) return id;
        if (order < 0) low = middle + 1;
        else high = middle - 1;
      }
      return undefined;
    };
    // Asins are nearly always ASCII: compared character by byte, without encoding the key.
    const ascii = /^[\x00-\x7f]*$/;
    const compareAsciiAt = (doc: number, key: string): number => {
      const start = asinOffsets[doc] as number;
      const length = (asinOffsets[doc + 1] as number) - start;
      const common = Math.min(length, key.length);
      for (let i = 0; i < common; i++) {
        const difference = (asinBytes[start + i] as number) - key.charCodeAt(i);
        if (difference !== 0) return difference;
      }
      return length - key.length;
    };
    const documentOf = (asin: string): number => {
      const key = ascii.test(asin) ? null : Buffer.from(asin, 'utf8');
      let low = 0;
      let high = docsByAsin.length - 1;
      while (low <= high) {
        const middle = (low + high) >>> 1;
        const doc = docsByAsin[middle] as number;
        const order =
          key === null ? compareAsciiAt(doc, asin) : compareAt(asinBytes, asinOffsets, doc, key);
        if (order === 0) return doc;
        if (order < 0) low = middle + 1;
        else high = middle - 1;
      }
      return -1;
    };
    const cache = new PostingsCache(options.postingsCacheBytes ?? DEFAULT_POSTINGS_CACHE_BYTES);
    const postingsBase = header.sections.postings.offset;
    let open = true;
    const postings = (id: number): TermPostings => {
      const cached = cache.get(id);
      if (cached !== undefined) return cached;
      if (!open) throw new SearchSnapshotError(`search index snapshot ${path} is closed`);
      const start = postingStart[id] as number;
      const count = (postingStart[id + 1] as number) - start;
      const record = new Uint8Array(new ArrayBuffer(count * 8));
      readExactly(fd, record, postingsBase + start * 8, path);
      if (crc32(record) !== postingChecksums[id]) {
        throw new SearchSnapshotError(
          `search index snapshot ${path} is damaged: the postings of term #${id} fail their checksum`,
        );
      }
      const read = {
        docs: new Int32Array(record.buffer, 0, count),
        denominators: new Float32Array(record.buffer, count * 4, count),
      };
      cache.set(id, read);
      return read;
    };
    const data: SearchIndexData = {
      stats,
      asinRank,
      norms,
      termId,
      idf: (id) => idf[id] as number,
      maxDenominator: (id) => maxDenominator[id] as number,
      postings,
      asin: asinAt,
    };
    const index = searchIndexOver(data);
    return {
      catalogId: header.catalogId,
      version: header.version,
      path,
      fileBytes,
      get stats() {
        return index.stats;
      },
      search: (query, topK) => index.search(query, topK),
      searchWithTotal: (query, topK) => index.searchWithTotal(query, topK),
      lengthNorm: (doc) => index.lengthNorm(doc),
      documentOf,
      asinAt,
      close() {
        if (!open) return;
        open = false;
        closeSync(fd);
      },
    };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}
