import {
  pythonDictRepr,
  pythonListRepr,
  quotePathSegment,
  werkzeugQuotePlus,
} from './python-text-formats.js';

export type SubPageName = 'Description' | 'Features' | 'Reviews' | 'Attributes';

export type SelectedOptions = ReadonlyMap<string, string>;

/** The targets of every link and form on the pages, as `url_for` would build them. */
export interface PageLinks {
  index(sessionId: string): string;
  searchResults(sessionId: string, keywords: readonly string[], page: number): string;
  itemPage(
    sessionId: string,
    asin: string,
    keywords: readonly string[],
    page: number,
    options: SelectedOptions,
  ): string;
  itemSubPage(
    sessionId: string,
    asin: string,
    keywords: readonly string[],
    page: number,
    subPage: SubPageName,
    options: SelectedOptions,
  ): string;
  done(sessionId: string, asin: string, options: SelectedOptions): string;
}

type QueryArgument = readonly [string, string | readonly string[]];

function queryUrl(args: readonly QueryArgument[]): string {
  const pairs: string[] = [];
  for (const [name, value] of args) {
    const values = typeof value === 'string' ? [value] : value;
    for (const item of values) pairs.push(`${werkzeugQuotePlus(name)}=${werkzeugQuotePlus(item)}`);
  }
  return `/?${pairs.join('&')}`;
}

/**
 * Links as the text environment renders them: its Flask app routes every endpoint to `/`, so
 * `url_for` turns all arguments into a query string.
 */
export const textEnvironmentLinks: PageLinks = {
  index: (sessionId) => queryUrl([['session_id', sessionId]]),
  searchResults: (sessionId, keywords, page) =>
    queryUrl([
      ['session_id', sessionId],
      ['keywords', keywords],
      ['page', String(page)],
    ]),
  itemPage: (sessionId, asin, keywords, page, options) =>
    queryUrl([
      ['session_id', sessionId],
      ['asin', asin],
      ['keywords', keywords],
      ['page', String(page)],
      ['options', pythonDictRepr(options)],
    ]),
  itemSubPage: (sessionId, asin, keywords, page, subPage, options) =>
    queryUrl([
      ['session_id', sessionId],
      ['asin', asin],
      ['keywords', keywords],
      ['page', String(page)],
      ['sub_page', subPage],
      ['options', pythonDictRepr(options)],
    ]),
  done: (sessionId, asin, options) =>
    queryUrl([
      ['session_id', sessionId],
      ['asin', asin],
      ['options', pythonDictRepr(options)],
    ]),
};

function pathUrl(segments: readonly string[]): string {
  return `/${segments.map(quotePathSegment).join('/')}`;
}

/** Links of the real site: one path segment per route argument, lists and dicts in Python `str()` form. */
export const siteLinks: PageLinks = {
  index: (sessionId) => pathUrl([sessionId]),
  searchResults: (sessionId, keywords, page) =>
    pathUrl(['search_results', sessionId, pythonListRepr(keywords), String(page)]),
  itemPage: (sessionId, asin, keywords, page, options) =>
    pathUrl([
      'item_page',
      sessionId,
      asin,
      pythonListRepr(keywords),
      String(page),
      pythonDictRepr(options),
    ]),
  itemSubPage: (sessionId, asin, keywords, page, subPage, options) =>
    pathUrl([
      'item_sub_page',
      sessionId,
      asin,
      pythonListRepr(keywords),
      String(page),
      subPage,
      pythonDictRepr(options),
    ]),
  done: (sessionId, asin, options) => pathUrl(['done', sessionId, asin, pythonDictRepr(options)]),
};
