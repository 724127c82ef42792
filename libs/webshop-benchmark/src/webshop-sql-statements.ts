import { runNamedQuery, type ListedStatement, type SqlStatementList } from '@benchfleet/db';
import { WebshopCatalogRepository } from './webshop-catalog-repository.js';
import { webshopGoalQuery } from './webshop-task-detail.js';

// Every statement WebShop's repository and task panel build, with example arguments, for the SQL
// snapshot test (see SqlStatementList, @benchfleet/db).

const header = { id: 'demo', version: 'v-1', source: { demo: true }, goalSeed: 0 };
const product = { asin: 'B000000001', price: 12.5, product: { Title: 'A lamp', category: 'home' } };
const snapshot = {
  version: 'v-1',
  format: 1,
  bytes: 3,
  sha256: 'c'.repeat(64),
  async *chunks() {
    yield Buffer.from('abc');
  },
};
const repository = (db: Parameters<ListedStatement['run']>[0]) => new WebshopCatalogRepository(db);

const statements: ListedStatement[] = [
  {
    // One page of products, one page of goals, the snapshot in one chunk: every statement once.
    name: 'catalog.import',
    source: 'WebshopCatalogRepository.import',
    run: (db) =>
      repository(db).import(header, async (writeProducts) => {
        await writeProducts([product]);
        return {
          goals: [
            {
              goalIndex: 0,
              split: 'test',
              asin: product.asin,
              instruction: 'a lamp under $20',
              goal: { asin: product.asin, price_upper: 20 },
            },
          ],
          searchSnapshot: snapshot,
        };
      }),
  },
  {
    // The recording database holds no catalog: the lock's read, then the refusal.
    name: 'catalog.replace-search-snapshot',
    source: 'WebshopCatalogRepository.replaceSearchSnapshot',
    run: (db) =>
      repository(db)
        .replaceSearchSnapshot('demo', snapshot)
        .catch(() => undefined),
  },
  {
    name: 'catalog.search-snapshot',
    source: 'WebshopCatalogRepository.searchSnapshot',
    run: (db) => repository(db).searchSnapshot('demo'),
  },
  {
    name: 'catalog.products-by-asin',
    source: 'WebshopCatalogRepository.productsByAsin',
    run: (db) => repository(db).productsByAsin('demo', [product.asin, 'B000000002']),
  },
  {
    name: 'catalog.asins-matching-attribute',
    source: 'WebshopCatalogRepository.asinsMatching',
    run: (db) => repository(db).asinsMatching('demo', { attribute: 'easy to clean' }),
  },
  {
    name: 'catalog.asins-matching-category',
    source: 'WebshopCatalogRepository.asinsMatching',
    run: (db) => repository(db).asinsMatching('demo', { category: 'home' }),
  },
  {
    name: 'catalog.asins-matching-query',
    source: 'WebshopCatalogRepository.asinsMatching',
    run: (db) => repository(db).asinsMatching('demo', { query: 'lamp' }),
  },
  {
    name: 'catalog.search-fields-page',
    source: 'WebshopCatalogRepository.searchFieldsPage',
    run: (db) => repository(db).searchFieldsPage('demo', 0, 1000),
  },
  {
    name: 'catalog.latest-id',
    source: 'WebshopCatalogRepository.latestId',
    run: (db) => repository(db).latestId(),
  },
  {
    name: 'catalog.get',
    source: 'WebshopCatalogRepository.get',
    run: (db) => repository(db).get('demo'),
  },
  {
    name: 'catalog.list',
    source: 'WebshopCatalogRepository.list',
    run: (db) => repository(db).list(),
  },
  {
    name: 'catalog.products',
    source: 'WebshopCatalogRepository.products',
    run: (db) => repository(db).products('demo'),
  },
  {
    name: 'catalog.categories',
    source: 'WebshopCatalogRepository.categories',
    run: (db) => repository(db).categories('demo'),
  },
  {
    name: 'catalog.goals-by-index',
    source: 'WebshopCatalogRepository.goalsByIndex',
    run: (db) => repository(db).goalsByIndex('demo', [0, 7]),
  },
  {
    name: 'catalog.goals',
    source: 'WebshopCatalogRepository.goals',
    run: (db) => repository(db).goals('demo'),
  },
  {
    name: 'query.webshop-goal',
    source: webshopGoalQuery.name,
    run: (db) => runNamedQuery(db, webshopGoalQuery, { run: 'run-1', task: 'goal-0' }),
  },
];

/** WebShop's statements (`sqlStatements` of its descriptor). */
export const webshopSqlStatements: SqlStatementList = {
  sourceDir: new URL('./', import.meta.url),
  snapshotDir: new URL('./__snapshots__/', import.meta.url),
  statements,
  notKysely: {
    'WebshopCatalogRepository.readSearchSnapshot':
      'a binary COPY stream on a client of the pool (pg-copy-streams), which Kysely cannot send',
  },
};
