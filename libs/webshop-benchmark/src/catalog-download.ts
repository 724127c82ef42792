import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import axios from 'axios';

/** The real small WebShop data set, from public repositories, with the sha256 values it must have. */
export const WEBSHOP_SMALL_FILES = [
  {
    name: 'items_shuffle_1000.json',
    path: 'WooooDyy/AgentGym/3ef9235d23e68e7c2920c5422ad957dc8ced5c6c/agentenv-webshop/webshop/data/items_shuffle_1000.json',
    sha256: '30a4765c3a327af72d9a9a95a6b2486d516f0fa1d3ecd83681901ce82a21b269',
  },
  {
    name: 'items_ins_v2_1000.json',
    path: 'WooooDyy/AgentGym/3ef9235d23e68e7c2920c5422ad957dc8ced5c6c/agentenv-webshop/webshop/data/items_ins_v2_1000.json',
    sha256: 'f88a36314a397b53b3d9c3fa5878e5f7b26d35019a51ec83fbedeca61a948f6f',
  },
  {
    name: 'items_human_ins.json',
    path: 'princeton-nlp/WebShop/64fa2a5c15c7daa698b9ac93f5bb5437b634c9bd/baseline_models/data/items_human_ins.json',
    sha256: 'cf78667548a71786e1d9049c24b802e48e1084ad4bb021cae56ce1f6d96954a3',
  },
] as const;

export const DEFAULT_DOWNLOAD_BASE = 'https://raw.githubusercontent.com';

class ChecksumMismatchError extends Error {
  override readonly name = 'ChecksumMismatchError';
}

/** A file could not be fetched; `reason` says what the network or the server did. */
export class CatalogDownloadError extends Error {
  override readonly name = 'CatalogDownloadError';
  constructor(
    readonly file: string,
    readonly url: string,
    readonly reason: string,
  ) {
    super(`cannot fetch ${file} from ${url}: ${reason}`);
  }
}

/** What went wrong with a fetch, in words a user can act on. */
function fetchFailure(error: unknown, url: string): string {
  if (axios.isAxiosError(error)) {
    if (error.response) return `the server answered HTTP ${error.response.status}`;
    const host = new URL(url).host;
    switch (error.code) {
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
        return `the host ${host} cannot be resolved (${error.code}): this machine has no network or no DNS for it`;
      case 'ECONNREFUSED':
        return `${host} refused the connection (ECONNREFUSED)`;
      case 'ECONNABORTED':
      case 'ETIMEDOUT':
        return `${host} did not answer in time (${error.code})`;
      default:
        return `${error.code ?? 'network error'}: ${error.message}`;
    }
  }
  return error instanceof Error ? error.message : String(error);
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Fetches each file unless a copy with the right checksum is already in `dir`; a file whose
 * checksum differs is refused (and not kept), so nothing unverified is ever imported.
 */
export async function downloadWebshopSmall(
  dir: string,
  options: {
    baseUrl?: string;
    files?: readonly { name: string; path: string; sha256: string }[];
    log?: (line: string) => void;
  } = {},
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const file of options.files ?? WEBSHOP_SMALL_FILES) {
    const target = join(dir, file.name);
    const existing = await readFile(target).catch(() => undefined);
    if (existing && sha256(existing) === file.sha256) {
      options.log?.(`${file.name}: already here, checksum ok`);
      out[file.name] = target;
      continue;
    }
    const url = `${options.baseUrl ?? DEFAULT_DOWNLOAD_BASE}/${file.path}`;
    const response = await axios
      .get<ArrayBuffer>(url, { responseType: 'arraybuffer', timeout: 120_000, maxRedirects: 5 })
      .catch((error: unknown) => {
        throw new CatalogDownloadError(file.name, url, fetchFailure(error, url));
      });
    const bytes = Buffer.from(response.data);
    const actual = sha256(bytes);
    if (actual !== file.sha256) {
      throw new ChecksumMismatchError(
        `${file.name} from ${url} has sha256 ${actual}, expected ${file.sha256}; nothing was imported`,
      );
    }
    // Made only now: a download that fetched nothing leaves nothing behind.
    await mkdir(dir, { recursive: true });
    await writeFile(target, bytes);
    // Said once it is done, so a failed download is the one line of its error.
    options.log?.(`${file.name}: downloaded from ${url}, checksum ok`);
    out[file.name] = target;
  }
  return out;
}
