// The original Flask site (web_agent_site/app.py) over node:http: the same routes, session
// addressing (`fixed_{i}` picks goal i) and pages, so agents written against it (ReAct,
// Reflexion, LATS, AgentBench's HTTP variants) can browse this store unchanged.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { NO_PRICE_LIMIT } from '../catalog/index.js';
import { siteLinks, type SubPageName } from './page-links.js';
import { renderPageHtml, type DonePageDetails, type PageView } from './page-templates.js';
import { parsePythonLiteral, PythonLiteralError } from './python-literal.js';
import { pythonListRepr, pythonSlice, pythonValueRepr } from './python-text-formats.js';
import type { Store } from './store.js';
import type { StoreProduct } from './store-product.js';

export interface StoreHttpServerOptions {
  /** Offer the Attributes sub-page (the site's `--attrs`). Default false. */
  readonly showAttributes?: boolean;
  /** Sessions remembered at once; the oldest is forgotten beyond this. Default 100 000. */
  readonly maxSessions?: number;
}

interface SiteSession {
  readonly goalIndex: number;
  done: boolean;
  reward: number | null;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const SUB_PAGES: ReadonlySet<string> = new Set<SubPageName>([
  'Description',
  'Features',
  'Reviews',
  'Attributes',
]);
const PRODUCTS_PER_PAGE = 10;
const MAX_FORM_BYTES = 64 * 1024;

function pythonInt(text: string, what: string): number {
  if (!/^\s*[+-]?\d+(?:_\d+)*\s*$/.test(text))
    throw new HttpError(404, `${what} is not an integer: ${text}`);
  return Number(text.replaceAll('_', ''));
}

/** The site's `convert_web_app_string_to_var('keywords', …)`: a Python list literal, or one keyword. */
function keywordsFromSegment(segment: string): string[] {
  if (!segment.startsWith('[')) return [segment];
  const value = literal(segment, 'keywords');
  if (!Array.isArray(value) || !value.every((item): item is string => typeof item === 'string')) {
    throw new HttpError(400, `keywords must be a list of strings: ${segment}`);
  }
  return value;
}

function optionsFromSegment(segment: string): Map<string, string> {
  const value = literal(segment, 'options');
  if (!(value instanceof Map)) throw new HttpError(400, `options must be a dict: ${segment}`);
  const options = new Map<string, string>();
  for (const [name, choice] of value) {
    if (typeof name !== 'string' || typeof choice !== 'string') {
      throw new HttpError(400, `options must map strings to strings: ${segment}`);
    }
    options.set(name, choice);
  }
  return options;
}

function literal(segment: string, what: string): ReturnType<typeof parsePythonLiteral> {
  try {
    return parsePythonLiteral(segment);
  } catch (error) {
    if (error instanceof PythonLiteralError) throw new HttpError(400, `${what}: ${error.message}`);
    throw error;
  }
}

async function readForm(request: IncomingMessage): Promise<URLSearchParams> {
  const type = request.headers['content-type'] ?? '';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > MAX_FORM_BYTES) throw new HttpError(413, 'form too large');
    chunks.push(buffer);
  }
  if (!type.startsWith('application/x-www-form-urlencoded')) return new URLSearchParams();
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function mturkCode(sessionId: string): string {
  return createHash('sha1').update(sessionId, 'utf8').digest('hex').slice(0, 10).toUpperCase();
}

function goalField(record: Readonly<Record<string, unknown>> | undefined, key: string): string {
  const value = record?.[key];
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  if (key === 'price_upper' && value === NO_PRICE_LIMIT) return String(NO_PRICE_LIMIT);
  return pythonValueRepr(value);
}

/**
 * An HTTP server (not yet listening) that serves the store as the original site does:
 * `/{session}`, `/search_results/{session}/{keywords}/{page}`,
 * `/item_page/{session}/{asin}/{keywords}/{page}/{options}`,
 * `/item_sub_page/{session}/{asin}/{keywords}/{page}/{sub_page}/{options}` and
 * `/done/{session}/{asin}/{options}`, GET or POST.
 */
export function createStoreHttpServer(store: Store, options: StoreHttpServerOptions = {}): Server {
  const showAttributes = options.showAttributes ?? false;
  const maxSessions = options.maxSessions ?? 100_000;
  const sessions = new Map<string, SiteSession>();

  const session = (sessionId: string): SiteSession => {
    const known = sessions.get(sessionId);
    if (known !== undefined) return known;
    let goalIndex: number;
    if (sessionId.includes('fixed')) {
      const requested = pythonInt(sessionId.slice(sessionId.lastIndexOf('_') + 1), 'goal index');
      goalIndex = requested < 0 ? requested + store.goals.count : requested;
      if (goalIndex < 0 || goalIndex >= store.goals.count) {
        throw new HttpError(404, `goal index ${requested} is outside 0..${store.goals.count - 1}`);
      }
    } else {
      goalIndex = store.sampleGoalIndex();
    }
    if (sessions.size >= maxSessions) {
      const oldest = sessions.keys().next();
      if (oldest.done !== true) sessions.delete(oldest.value);
    }
    const created: SiteSession = { goalIndex, done: false, reward: null };
    sessions.set(sessionId, created);
    return created;
  };

  const product = async (asin: string): Promise<StoreProduct> => {
    const found = (await store.product(asin)) ?? (await store.product(asin.toUpperCase()));
    if (found === undefined) throw new HttpError(404, `no product ${asin}`);
    return found;
  };

  const base = (sessionId: string): { sessionId: string; instructionText: string } => ({
    sessionId,
    instructionText: store.goal(session(sessionId).goalIndex).instructionText,
  });

  const donePage = async (
    sessionId: string,
    asin: string,
    selected: Map<string, string>,
  ): Promise<PageView> => {
    const state = session(sessionId);
    const bought = await product(asin);
    const score = await store.scorePurchase(state.goalIndex, bought.asin, selected);
    state.done = true;
    state.reward = score.reward;
    const goal = store.goal(state.goalIndex).record;
    const details: DonePageDetails = {
      mturkCode: mturkCode(sessionId),
      purchasedAttributes: pythonListRepr(bought.attributes),
      purchasedCategory: bought.category,
      purchasedQuery: bought.query,
      purchasedProductCategory: bought.productCategory,
      goalAsin: goalField(goal, 'asin'),
      goalOptions: goalField(goal, 'goal_options'),
      goalAttributes: goalField(goal, 'attributes'),
      goalPriceUpper: goalField(goal, 'price_upper'),
      goalInstructionText: goalField(goal, 'instruction_text'),
      goalCategory: goalField(goal, 'category'),
      goalProductCategory: goalField(goal, 'product_category'),
      goalQuery: goalField(goal, 'query'),
      goal: goal === undefined ? 'None' : pythonValueRepr(goal),
      rewardInfo: pythonValueRepr(score.info),
    };
    return {
      kind: 'done',
      sessionId,
      asin: bought.asin,
      options: selected,
      reward: score.reward,
      details,
    };
  };

  const route = async (
    request: IncomingMessage,
  ): Promise<{ status: number; location?: string; html?: string }> => {
    const rawPath = (request.url ?? '/').split('?')[0] ?? '/';
    let segments: string[];
    try {
      segments = rawPath
        .split('/')
        .slice(1)
        .map((segment) => decodeURIComponent(segment));
    } catch {
      throw new HttpError(400, 'malformed percent-encoding in the path');
    }
    const [head = '', ...args] = segments;
    if (head === '' && args.length === 0) return { status: 302, location: siteLinks.index('abc') };

    if (args.length === 0) {
      const sessionId = head;
      session(sessionId);
      if (request.method === 'POST') {
        const query = (await readForm(request)).get('search_query');
        if (query !== null) {
          return {
            status: 302,
            location: siteLinks.searchResults(sessionId, query.toLowerCase().split(' '), 1),
          };
        }
      }
      return {
        status: 200,
        html: renderPageHtml({ kind: 'search', ...base(sessionId) }, siteLinks),
      };
    }

    if (head === 'search_results' && args.length === 3) {
      const [sessionId = '', keywordText = '', pageText = ''] = args;
      const keywords = keywordsFromSegment(keywordText);
      const page = pythonInt(pageText, 'page');
      const hits = await store.searchAsins(keywords);
      const view: PageView = {
        kind: 'results',
        ...base(sessionId),
        keywords,
        page,
        total: hits.length,
        products: await store.productsOf(
          pythonSlice(hits, (page - 1) * PRODUCTS_PER_PAGE, page * PRODUCTS_PER_PAGE),
        ),
      };
      return { status: 200, html: renderPageHtml(view, siteLinks) };
    }

    if (head === 'item_page' && args.length === 5) {
      const [sessionId = '', asin = '', keywordText = '', pageText = '', optionText = ''] = args;
      const view: PageView = {
        kind: 'item',
        ...base(sessionId),
        keywords: keywordsFromSegment(keywordText),
        page: pythonInt(pageText, 'page'),
        product: await product(asin),
        options: optionsFromSegment(optionText),
        showAttributes,
      };
      return { status: 200, html: renderPageHtml(view, siteLinks) };
    }

    if (head === 'item_sub_page' && args.length === 6) {
      const [
        sessionId = '',
        asin = '',
        keywordText = '',
        pageText = '',
        subPage = '',
        optionText = '',
      ] = args;
      if (!SUB_PAGES.has(subPage)) throw new HttpError(404, `no sub-page ${subPage}`);
      const view: PageView = {
        kind: 'sub',
        ...base(sessionId),
        keywords: keywordsFromSegment(keywordText),
        page: pythonInt(pageText, 'page'),
        product: await product(asin),
        options: optionsFromSegment(optionText),
        subPage: subPage as SubPageName,
      };
      return { status: 200, html: renderPageHtml(view, siteLinks) };
    }

    if (head === 'done' && args.length === 3) {
      const [sessionId = '', asin = '', optionText = ''] = args;
      return {
        status: 200,
        html: renderPageHtml(
          await donePage(sessionId, asin, optionsFromSegment(optionText)),
          siteLinks,
        ),
      };
    }

    throw new HttpError(404, `no route for ${rawPath}`);
  };

  const respond = (
    response: ServerResponse,
    status: number,
    headers: Record<string, string>,
    body: string,
  ): void => {
    response.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(body)) });
    response.end(body);
  };

  return createServer((request, response) => {
    route(request).then(
      (outcome) => {
        if (outcome.location !== undefined) {
          respond(
            response,
            outcome.status,
            { location: outcome.location, 'content-type': 'text/plain; charset=utf-8' },
            `Redirecting to ${outcome.location}`,
          );
        } else {
          respond(
            response,
            outcome.status,
            { 'content-type': 'text/html; charset=utf-8' },
            outcome.html ?? '',
          );
        }
      },
      (error: unknown) => {
        const status = error instanceof HttpError ? error.status : 500;
        const message = error instanceof Error ? error.message : String(error);
        respond(response, status, { 'content-type': 'text/plain; charset=utf-8' }, message);
      },
    );
  });
}
