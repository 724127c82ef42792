export {
  buildSearchContents,
  searchDocumentFromRaw,
  type SearchContentsSource,
} from './search-contents.js';
export {
  buildSearchIndex,
  SearchIndexBuilder,
  type SearchDocument,
  type SearchIndex,
} from './search-index.js';
export { searchBm25FixtureRunner } from './search-fixture-runner.js';
export {
  openSearchSnapshot,
  SearchSnapshotError,
  writeSearchSnapshot,
  type OpenedSearchSnapshot,
  type SearchSnapshotIdentity,
} from './search-snapshot.js';
