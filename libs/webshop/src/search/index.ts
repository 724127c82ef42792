export { analyzeText, ENGLISH_STOPWORDS } from './english-analyzer.js';
export { SEARCH_PAGE_SIZE, searchResultPage } from './result-page.js';
export {
  buildSearchContents,
  buildSearchContentsFromRaw,
  searchDocumentFromRaw,
  type RawOptionValue,
  type RawProductSearchFields,
  type SearchContentsSource,
} from './search-contents.js';
export {
  BM25_B,
  BM25_K1,
  buildSearchIndex,
  SEARCH_TOP_K,
  SearchIndexBuilder,
  type SearchIndexParts,
  type SearchDocument,
  type SearchHit,
  type SearchIndex,
  type SearchIndexStats,
  type SearchResult,
} from './search-index.js';
export { searchBm25FixtureRunner } from './search-fixture-runner.js';
export {
  DEFAULT_POSTINGS_CACHE_BYTES,
  openSearchSnapshot,
  SearchSnapshotError,
  writeSearchSnapshot,
  type OpenedSearchSnapshot,
  type OpenSearchSnapshotOptions,
  type SearchSnapshotIdentity,
} from './search-snapshot.js';
