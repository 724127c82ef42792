import { Option, type Command } from 'commander';
import type { ToolContext } from '@benchfleet/benchmark-kit';
import {
  listenOn,
  nonNegativeInteger,
  portNumber,
  positiveInteger,
  UsageError,
  parsedOption,
  createProgressReporter,
} from '@benchfleet/core';
import {
  createStoreHttpServer,
  runFixtureFile,
  searchBm25FixtureRunner,
  storeFixtureRunners,
  webshopRewardFixtureRunners,
  type FixtureRunner,
} from '@benchfleet/webshop';
import {
  CatalogDownloadError,
  DEFAULT_DOWNLOAD_BASE,
  downloadWebshopSmall,
} from './catalog-download.js';
import {
  demoCatalogRequest,
  fileCatalogRequest,
  importWebshopCatalog,
  type CatalogImportRequest,
  type GoalMode,
} from './catalog-import.js';
import { resolveCatalog } from './catalog-resolution.js';
import { rebuildCatalogSearchSnapshot } from './catalog-search-snapshot.js';
import { loadStoreFromDatabase } from './catalog-store-loader.js';

// `scheduler webshop …`: catalog import, download, index, the original site, parity fixtures.

interface ImportFlags {
  demo?: boolean;
  products?: number;
  items?: string;
  attributes?: string;
  human?: string;
  goalMode?: GoalMode;
  seed: number;
  catalogId?: string;
  numProducts?: number;
}

const fixtureRunners: readonly FixtureRunner[] = [
  ...webshopRewardFixtureRunners,
  ...storeFixtureRunners,
  searchBm25FixtureRunner,
];

async function runImport(tools: ToolContext, request: CatalogImportRequest): Promise<void> {
  await tools.withDatabase(async (db) => {
    const progress = createProgressReporter(`import ${request.catalogId}`, 1, {
      format: `import ${request.catalogId} [{bar}] {value}/{total} {unit} | {products} products | eta {eta_formatted}`,
    });
    const report = await importWebshopCatalog(db, request, ({ done, total, unit, products }) => {
      progress.setTotal(total);
      progress.update(done, { unit, products });
    });
    progress.stop();
    const splits = Object.entries(report.splits)
      .map(([split, n]) => `${split} ${n}`)
      .join(', ');
    process.stderr.write(
      `imported catalog ${report.catalogId}: ${report.products} products, ${report.goals} ${request.goalMode} goals (${splits}), goal seed ${request.seed}, search snapshot ${(report.searchSnapshotBytes / 2 ** 20).toFixed(1)} MiB\n`,
    );
  });
}

/** Mounts the WebShop tools under `scheduler webshop`. */
export function configureWebshopTools(webshop: Command, tools: ToolContext): void {
  webshop
    .command('import')
    .description(
      'load a catalog (official file formats, or the generated demo) into Postgres with its goals, in one transaction',
    )
    .option('--demo', 'generate and import the ~1,000-product demo catalog (no download)')
    .addOption(
      parsedOption(
        '--products <n>',
        'with --demo: how many products (default 1000)',
        positiveInteger,
      ),
    )
    .option('--items <file>', 'items_shuffle*.json (raw products)')
    .option('--attributes <file>', 'items_ins_v2*.json (attributes and synthetic instructions)')
    .option('--human <file>', 'items_human_ins.json (human instructions)')
    .addOption(
      new Option(
        '--goal-mode <mode>',
        'human or synthetic goals (default: human when --human or --demo is given)',
      ).choices(['human', 'synthetic']),
    )
    .addOption(
      parsedOption(
        '--seed <n>',
        'seed of the hidden prices and price limits, stored with the goals (default 0)',
        nonNegativeInteger,
      ).default(0),
    )
    .option('--catalog-id <id>', 'id to store the catalog under (replaces one with the same id)')
    .addOption(
      parsedOption(
        '--num-products <n>',
        'only the first N products (as the original num_products)',
        positiveInteger,
      ),
    )
    .action(async (flags: ImportFlags) => {
      if (flags.demo) {
        if (flags.items || flags.attributes || flags.human)
          throw new UsageError('--demo generates its own files: drop --items/--attributes/--human');
        await runImport(
          tools,
          demoCatalogRequest({
            seed: flags.seed,
            ...(flags.products !== undefined ? { products: flags.products } : {}),
            ...(flags.goalMode ? { goalMode: flags.goalMode } : {}),
            ...(flags.catalogId ? { catalogId: flags.catalogId } : {}),
          }),
        );
        return;
      }
      if (!flags.items || !flags.attributes) {
        throw new UsageError(
          'give --items FILE and --attributes FILE (and --human FILE for human goals), or --demo',
        );
      }
      if (flags.goalMode === 'human' && !flags.human)
        throw new UsageError('--goal-mode human needs --human items_human_ins.json');
      // Files are read and checked before Postgres is touched: a bad file imports nothing.
      const request = fileCatalogRequest({
        items: flags.items,
        attributes: flags.attributes,
        seed: flags.seed,
        ...(flags.human ? { human: flags.human } : {}),
        ...(flags.goalMode ? { goalMode: flags.goalMode } : {}),
        ...(flags.catalogId ? { catalogId: flags.catalogId } : {}),
        ...(flags.numProducts !== undefined ? { numProducts: flags.numProducts } : {}),
      });
      await runImport(tools, request);
    });

  webshop
    .command('index')
    .description(
      'build and store the search index snapshot of a catalog imported before snapshots existed (imports build theirs)',
    )
    .option('--catalog <id>', 'catalog to index (default: the latest imported)')
    .action(async (flags: { catalog?: string }) => {
      await tools.withDatabase(async (db) => {
        const catalogId = (await resolveCatalog(db, flags.catalog)).id;
        const built = await rebuildCatalogSearchSnapshot(db, catalogId);
        process.stderr.write(
          `indexed catalog ${catalogId}: ${built.documents} products, search snapshot ${(built.bytes / 2 ** 20).toFixed(1)} MiB\n`,
        );
      });
    });

  webshop
    .command('download')
    .description(
      'fetch the real small data set (1,000 products, human instructions), check its sha256 values, and import it',
    )
    .option('--dir <dir>', 'where to keep the files', '.benchfleet/webshop-data')
    .option(
      '--base-url <url>',
      'where the repositories are served from (default: WEBSHOP_DOWNLOAD_BASE, else the public raw-file host)',
    )
    .addOption(
      new Option('--goal-mode <mode>', 'human or synthetic goals')
        .choices(['human', 'synthetic'])
        .default('human'),
    )
    .addOption(
      parsedOption(
        '--seed <n>',
        'seed of the hidden prices and price limits (default 0)',
        nonNegativeInteger,
      ).default(0),
    )
    .option('--catalog-id <id>', 'id to store the catalog under', 'webshop-small')
    .action(
      async (flags: {
        dir: string;
        baseUrl?: string;
        goalMode: GoalMode;
        seed: number;
        catalogId: string;
      }) => {
        await tools.checkDatabase();
        const baseUrl = flags.baseUrl ?? process.env.WEBSHOP_DOWNLOAD_BASE ?? DEFAULT_DOWNLOAD_BASE;
        const files = await downloadWebshopSmall(flags.dir, {
          baseUrl,
          log: (line) => process.stderr.write(`${line}\n`),
        }).catch((error: unknown) => {
          if (!(error instanceof CatalogDownloadError)) throw error;
          throw new UsageError(
            `--base-url ${baseUrl}: cannot fetch ${error.file} (${error.reason}); point --base-url (or WEBSHOP_DOWNLOAD_BASE) at a server that has the files, put them in --dir ${flags.dir} yourself (their sha256 is checked), or import files you have with \`scheduler webshop import --items FILE --attributes FILE --human FILE\``,
          );
        });
        await runImport(
          tools,
          fileCatalogRequest({
            items: files['items_shuffle_1000.json'] ?? '',
            attributes: files['items_ins_v2_1000.json'] ?? '',
            human: files['items_human_ins.json'] ?? '',
            goalMode: flags.goalMode,
            seed: flags.seed,
            catalogId: flags.catalogId,
          }),
        );
      },
    );

  webshop
    .command('serve')
    .description(
      'serve a catalog as the original WebShop site (/{session}, /search_results/…, /item_page/…, fixed_{i} goals) for agents written for it',
    )
    .option('--catalog <id>', 'catalog to serve (default: the latest imported)')
    .addOption(
      parsedOption(
        '--port <port>',
        'port to listen on (0: any free port, printed at start; default 3000)',
        portNumber,
      ).default(3000),
    )
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--show-attributes', 'offer the Attributes sub-page (the original show_attrs)')
    .action(
      async (flags: { catalog?: string; port: number; host: string; showAttributes?: boolean }) => {
        const loaded = await tools.withDatabase(async (db) =>
          loadStoreFromDatabase(db, (await resolveCatalog(db, flags.catalog)).id),
        );
        const server = createStoreHttpServer(loaded.store, {
          showAttributes: flags.showAttributes === true,
        });
        const port = await listenOn(server, {
          port: flags.port,
          host: flags.host,
          what: 'port',
          setting: '--port',
        });
        process.stderr.write(
          `serving catalog ${loaded.catalogId} (${loaded.products} products, ${loaded.goals} goals) at http://${flags.host}:${port}/fixed_0 — Ctrl-C to stop\n`,
        );
        await new Promise<void>((resolve) => {
          for (const signal of ['SIGINT', 'SIGTERM'] as const)
            process.once(signal, () => resolve());
        });
        await new Promise((resolve) => server.close(resolve));
      },
    );

  webshop
    .command('verify')
    .description(
      'run parity fixture files made by the original WebShop code; one line per failing case, then "N passed, M failed"',
    )
    .requiredOption(
      '--fixtures <files...>',
      'fixture files (reward_units.json, env_episodes.json, search_bm25.json, …)',
    )
    .action(async (flags: { fixtures: string[] }) => {
      let passed = 0;
      let failed = 0;
      for (const file of flags.fixtures) {
        const summary = await runFixtureFile(file, fixtureRunners);
        passed += summary.passed;
        failed += summary.failed.length;
        for (const failure of summary.failed)
          process.stdout.write(
            `FAIL ${file}: ${failure.case}: ${failure.message.split('\n')[0]}\n`,
          );
      }
      process.stdout.write(`${passed} passed, ${failed} failed\n`);
      if (failed > 0) process.exitCode = 1;
    });
}
