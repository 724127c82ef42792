import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebshopCatalogRepository, type WebshopTables } from '@benchfleet/webshop-benchmark';
import { occupyPort, runCli, startCli, useTestServices, waitForOutput } from '@benchfleet/testing';
import { downloadWebshopSmall, WEBSHOP_SMALL_FILES } from '@benchfleet/webshop-benchmark';
import { fileCatalogRequest, importWebshopCatalog } from '@benchfleet/webshop-benchmark';

const services = useTestServices();
const shared = fileURLToPath(new URL('../../../../shared/webshop/', import.meta.url));
const synthetic = join(shared, 'fixtures/synthetic_input');
const fixtureFiles = readdirSync(join(shared, 'fixtures'))
  .filter((file) => file.endsWith('.json'))
  .map((file) => join(shared, 'fixtures', file));

function scheduler(args: string[]) {
  return runCli('scheduler', args, services.env, 120_000);
}

async function catalogCount(): Promise<number> {
  return (await new WebshopCatalogRepository(services.db).list()).length;
}

describe('scheduler webshop verify', () => {
  it.each(fixtureFiles)('passes every case of %s', async (file) => {
    const result = await scheduler(['webshop', 'verify', '--fixtures', file]);
    const last = result.stdout.trim().split('\n').pop() ?? '';
    expect(last).toMatch(/^\d+ passed, 0 failed$/);
    expect(Number(last.split(' ')[0])).toBeGreaterThan(0);
    expect(result.code).toBe(0);
  });

  it('prints one line per failing case and exits non-zero', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verify-'));
    const units = JSON.parse(readFileSync(join(shared, 'fixtures/reward_units.json'), 'utf8')) as {
      normalize_color: Array<{ output: unknown }>;
    };
    units.normalize_color[0]!.output = 'surely-not-a-colour';
    units.normalize_color[1]!.output = 'nor-this';
    const broken = join(dir, 'reward_units_broken.json');
    writeFileSync(broken, JSON.stringify(units));
    const result = await scheduler(['webshop', 'verify', '--fixtures', broken]);
    expect(result.code).toBe(1);
    const lines = result.stdout.trim().split('\n');
    expect(lines.filter((line) => line.startsWith('FAIL '))).toHaveLength(2);
    expect(lines.pop()).toMatch(/^\d+ passed, 2 failed$/);
  });
});

describe('scheduler webshop import', () => {
  it('imports the official formats with goals in the original order and split, in one go', async () => {
    const result = await scheduler([
      'webshop',
      'import',
      '--items',
      join(synthetic, 'items_shuffle_synthetic.json'),
      '--attributes',
      join(synthetic, 'items_ins_v2_synthetic.json'),
      '--human',
      join(synthetic, 'items_human_ins_synthetic.json'),
      '--seed',
      '1234',
      '--catalog-id',
      'synthetic-human',
    ]);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(
      /imported catalog synthetic-human: \d+ products, \d+ human goals/,
    );
    const goals = await new WebshopCatalogRepository(services.db).goals('synthetic-human');
    expect(goals.length).toBeGreaterThan(0);
    expect(goals.map((g) => g.goal_index)).toEqual(goals.map((_, i) => i));
    expect(goals.every((g) => g.split === 'test')).toBe(true);
    const catalog = await new WebshopCatalogRepository(services.db).get('synthetic-human');
    expect(catalog?.goal_seed).toBe(1234);
  });

  it.each([
    ['broken JSON', '[{"asin": "B01"', /items\.json.*(JSON|Unexpected|Expected)/],
    [
      'a product without asin',
      JSON.stringify([{ name: 'x', product_information: {}, pricing: '$1.00' }]),
      /items\.json: record #0.*asin/,
    ],
  ])(
    'refuses %s, naming the file and record, and imports nothing',
    async (_name, items, message) => {
      const dir = mkdtempSync(join(tmpdir(), 'import-'));
      writeFileSync(join(dir, 'items.json'), items);
      const before = await catalogCount();
      const result = await scheduler([
        'webshop',
        'import',
        '--items',
        join(dir, 'items.json'),
        '--attributes',
        join(synthetic, 'items_ins_v2_synthetic.json'),
        '--catalog-id',
        'bad',
      ]);
      expect(result.code).not.toBe(0);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(message);
      expect(await catalogCount()).toBe(before);
    },
  );
});

describe('scheduler webshop import, streaming a large items file', () => {
  it('leaves the earlier catalog of that id untouched when record #2500 is bad, after pages were written', async () => {
    const attributes = join(synthetic, 'items_ins_v2_synthetic.json');
    const human = join(synthetic, 'items_human_ins_synthetic.json');
    const first = await scheduler([
      'webshop',
      'import',
      '--items',
      join(synthetic, 'items_shuffle_synthetic.json'),
      '--attributes',
      attributes,
      '--human',
      human,
      '--catalog-id',
      'kept',
    ]);
    expect(first.code).toBe(0);
    const before = await new WebshopCatalogRepository(services.db).get('kept');

    const items = JSON.parse(
      readFileSync(join(synthetic, 'items_shuffle_search3000.json'), 'utf8'),
    ) as Array<Record<string, unknown>>;
    items[2500] = { ...items[2500], asin: 'BBADPRICE1', pricing: '$ask' };
    const dir = mkdtempSync(join(tmpdir(), 'import-'));
    writeFileSync(join(dir, 'items_big.json'), JSON.stringify(items));
    const result = await scheduler([
      'webshop',
      'import',
      '--items',
      join(dir, 'items_big.json'),
      '--attributes',
      attributes,
      '--human',
      human,
      '--catalog-id',
      'kept',
    ]);
    // A bad record is bad input: the user's to fix, exit code 2.
    expect(result.code).toBe(2);
    const lines = result.stderr.trim().split('\n');
    expect(lines.at(-1)).toMatch(/items_big\.json: record #2500, asin BBADPRICE1: pricing "\$ask"/);
    // Progress went by on the way: pages of products had been written before the bad record.
    expect(
      lines
        .slice(0, -1)
        .map((line) => JSON.parse(line) as { products: number })
        .at(-1)?.products,
    ).toBeGreaterThanOrEqual(1000);

    expect(await new WebshopCatalogRepository(services.db).get('kept')).toEqual(before);
    const stored = await services.db
      .withTables<WebshopTables>()
      .selectFrom('webshop_products')
      .select(({ fn }) => fn.countAll<string>().as('n'))
      .where('catalog_id', '=', 'kept')
      .executeTakeFirstOrThrow();
    expect(Number(stored.n)).toBe(before?.products);
  });
});

describe('scheduler webshop serve', () => {
  beforeAll(async () => {
    await importWebshopCatalog(
      services.db,
      fileCatalogRequest({
        items: join(synthetic, 'items_shuffle_synthetic.json'),
        attributes: join(synthetic, 'items_ins_v2_synthetic.json'),
        human: join(synthetic, 'items_human_ins_synthetic.json'),
        seed: 1234,
        catalogId: 'served',
      }),
    );
  });

  it('serves an imported catalog as the original site, goal by goal', async () => {
    const [goal] = await new WebshopCatalogRepository(services.db).goals('served');
    const site = startCli(
      'scheduler',
      ['webshop', 'serve', '--catalog', 'served', '--port', '0'],
      services.env,
    );
    try {
      const [, url] = await waitForOutput(
        site,
        /serving catalog served .* at (http:\/\/\S+)\/fixed_0/,
        'the site to listen',
      );
      const response = await fetch(`${url}/fixed_0`);
      expect(response.status).toBe(200);
      const html = await response.text();
      expect(html).toContain('Instruction');
      expect(html.toLowerCase()).toContain(goal!.instruction.slice(0, 30).toLowerCase());
    } finally {
      site.child.kill('SIGTERM');
    }
    expect((await site.exited).code).toBe(0);
  });

  it('names a busy port and the flag that changes it', async () => {
    const busy = await occupyPort();
    try {
      const result = await scheduler([
        'webshop',
        'serve',
        '--catalog',
        'served',
        '--port',
        String(busy.port),
      ]);
      expect(result.code).toBe(2);
      expect(result.stderr.trim()).toBe(
        `scheduler: port ${busy.port} on 127.0.0.1 is already in use: pick another with --port (0 lets the system choose)`,
      );
    } finally {
      await busy.release();
    }
  });
});

describe('scheduler webshop download', () => {
  let server: Server;
  let baseUrl: string;
  const served = new Map<string, Buffer>();

  beforeAll(async () => {
    server = createServer((request, response) => {
      const body = served.get(decodeURIComponent(request.url ?? ''));
      response.writeHead(body ? 200 : 404);
      response.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('refuses files whose sha256 differs from the published one, importing nothing', async () => {
    for (const file of WEBSHOP_SMALL_FILES) served.set(`/${file.path}`, Buffer.from('[]'));
    const before = await catalogCount();
    const dir = mkdtempSync(join(tmpdir(), 'download-'));
    const result = await scheduler(['webshop', 'download', '--dir', dir, '--base-url', baseUrl]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /items_shuffle_1000\.json from http:\/\/127\.0\.0\.1:\d+\/.* has sha256 [0-9a-f]{64}, expected 30a4765c/,
    );
    expect(readdirSync(dir)).toEqual([]);
    expect(await catalogCount()).toBe(before);
  });

  it('downloads, checks and imports files whose checksums match', async () => {
    const names = [
      'items_shuffle_synthetic.json',
      'items_ins_v2_synthetic.json',
      'items_human_ins_synthetic.json',
    ];
    const files = names.map((name) => {
      const bytes = readFileSync(join(synthetic, name));
      served.set(`/data/${name}`, bytes);
      return {
        name,
        path: `data/${name}`,
        sha256: createHash('sha256').update(bytes).digest('hex'),
      };
    });
    const dir = mkdtempSync(join(tmpdir(), 'download-'));
    const paths = await downloadWebshopSmall(dir, { baseUrl, files });
    expect(Object.keys(paths).sort()).toEqual([...names].sort());
    const report = await importWebshopCatalog(
      services.db,
      fileCatalogRequest({
        items: paths[names[0]!]!,
        attributes: paths[names[1]!]!,
        human: paths[names[2]!]!,
        seed: 1234,
        catalogId: 'downloaded',
      }),
    );
    expect(report.products).toBeGreaterThan(0);
    // A second download finds the verified copies and fetches nothing.
    served.clear();
    await expect(downloadWebshopSmall(dir, { baseUrl, files })).resolves.toEqual(paths);
  });
});
