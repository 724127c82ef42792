import { webshopCatalogRepository, type Database } from '@benchfleet/db';
import { createCatalogStore, type CatalogStoreProduct, type Store, type WebshopGoal } from '@benchfleet/webshop';

export interface LoadedStore {
  catalogId: string;
  store: Store;
  products: number;
  goals: number;
  loadMs: number;
}

/** Builds the store (and its search index) of a catalog from Postgres: the same for every worker. */
export async function loadStoreFromDatabase(db: Database, catalogId: string): Promise<LoadedStore> {
  const started = Date.now();
  const repository = webshopCatalogRepository(db);
  const [rows, goalRows] = await Promise.all([repository.products(catalogId), repository.goals(catalogId)]);
  if (rows.length === 0) throw new Error(`WebShop catalog ${catalogId} has no products in Postgres; import it with \`scheduler webshop import\``);
  const products = rows.map((row) => row.product as unknown as CatalogStoreProduct);
  const productPrices = new Map(rows.map((row) => [row.asin, row.price]));
  const goals = goalRows.map((row) => row.goal as unknown as WebshopGoal);
  goalRows.forEach((row, i) => {
    if (row.goal_index !== i) throw new Error(`WebShop catalog ${catalogId}: goal ${i} is missing (found ${row.goal_index})`);
  });
  const store = createCatalogStore({ products, productPrices, goals });
  return { catalogId, store, products: products.length, goals: goals.length, loadMs: Date.now() - started };
}

/** One store per catalog, loaded once and shared by every episode of this process. */
export class StoreCache {
  private readonly stores = new Map<string, Promise<LoadedStore>>();

  constructor(
    private readonly db: Database,
    private readonly onLoaded: (loaded: LoadedStore) => void = () => undefined,
  ) {}

  get(catalogId: string): Promise<LoadedStore> {
    let loading = this.stores.get(catalogId);
    if (!loading) {
      loading = loadStoreFromDatabase(this.db, catalogId).then((loaded) => {
        this.onLoaded(loaded);
        return loaded;
      });
      loading.catch(() => this.stores.delete(catalogId));
      this.stores.set(catalogId, loading);
    }
    return loading;
  }
}
