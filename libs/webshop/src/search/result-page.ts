/** Products per results page (WebShop's PRODUCT_WINDOW). */
export const SEARCH_PAGE_SIZE = 10;

/** The hits shown on a 1-based results page: hits[(page - 1) * 10 .. page * 10). */
export function searchResultPage<T>(hits: readonly T[], page: number): T[] {
  if (!Number.isInteger(page) || page < 1) {
    throw new RangeError(`results page must be an integer >= 1, got ${page}`);
  }
  return hits.slice((page - 1) * SEARCH_PAGE_SIZE, page * SEARCH_PAGE_SIZE);
}
