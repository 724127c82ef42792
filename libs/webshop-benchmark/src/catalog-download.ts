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

export class ChecksumMismatchError extends Error {
  override readonly name = 'ChecksumMismatchError';
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
  await mkdir(dir, { recursive: true });
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
    options.log?.(`${file.name}: downloading ${url}`);
    const response = await axios.get<ArrayBuffer>(url, {
      responseType: 'arraybuffer',
      timeout: 120_000,
      maxRedirects: 5,
    });
    const bytes = Buffer.from(response.data);
    const actual = sha256(bytes);
    if (actual !== file.sha256) {
      throw new ChecksumMismatchError(
        `${file.name} from ${url} has sha256 ${actual}, expected ${file.sha256}; nothing was imported`,
      );
    }
    await writeFile(target, bytes);
    out[file.name] = target;
  }
  return out;
}
