import { describe, expect, it } from 'vitest';
import { DemoRandom } from '../demo-catalog/demo-random.js';
import {
  richTextFromNodes,
  simpleTextFromNodes,
  visibleTextNodes,
  type VisibleTextNode,
} from './html-to-text.js';
import { textEnvironmentLinks } from './page-links.js';
import { pageTextNodes } from './page-text.js';
import { renderPageHtml, type DonePageDetails, type PageView } from './page-templates.js';
import type { StoreProduct } from './store-product.js';

// Strings that stress the parser: empty, whitespace with and without newlines, entities, markup,
// quotes, comment ends, non-ASCII whitespace and characters.
const NASTY = [
  '',
  ' ',
  '  ',
  '\n',
  ' \n ',
  '\t',
  '\r',
  '\xa0',
  '&amp;',
  '&lt;b&gt;',
  '<b>bold</b>',
  '"quoted"',
  "it's",
  '-->',
  '<!--',
  'a & b',
  '#1 ☕ café',
  '\u2028',
  ' padded ',
  'x',
];

function pick(rng: DemoRandom): string {
  return rng.int(0, 3) === 0 ? `${rng.pick(NASTY)}${rng.pick(NASTY)}` : rng.pick(NASTY);
}

function product(rng: DemoRandom, asin: string): StoreProduct {
  const list = (max: number) => Array.from({ length: rng.int(0, max) }, () => pick(rng));
  return {
    asin,
    title: pick(rng),
    description: rng.int(0, 4) === 0 ? null : pick(rng),
    bulletPoints: list(4),
    priceText: pick(rng),
    options: Array.from({ length: rng.int(0, 3) }, () => ({ name: pick(rng), values: list(4) })),
    optionImages: new Map([[pick(rng), rng.int(0, 1) === 0 ? null : pick(rng)]]),
    attributes: list(4),
    mainImage: rng.int(0, 1) === 0 ? null : pick(rng),
    category: pick(rng),
    query: pick(rng),
    productCategory: pick(rng),
  };
}

function details(rng: DemoRandom): DonePageDetails {
  const keys: Array<keyof DonePageDetails> = [
    'mturkCode',
    'purchasedAttributes',
    'purchasedCategory',
    'purchasedQuery',
    'purchasedProductCategory',
    'goalAsin',
    'goalOptions',
    'goalAttributes',
    'goalPriceUpper',
    'goalInstructionText',
    'goalCategory',
    'goalProductCategory',
    'goalQuery',
    'goal',
    'rewardInfo',
  ];
  return Object.fromEntries(keys.map((key) => [key, pick(rng)])) as unknown as DonePageDetails;
}

function randomView(rng: DemoRandom, n: number): PageView {
  const base = { sessionId: pick(rng) || 'fixed_1', instructionText: pick(rng) };
  const keywords = Array.from({ length: rng.int(1, 3) }, () => pick(rng));
  const page = rng.int(1, 3);
  const options = new Map(
    Array.from({ length: rng.int(0, 2) }, () => [pick(rng), pick(rng)] as [string, string]),
  );
  const item = product(rng, `B0${n}`);
  switch (n % 8) {
    case 0:
      return { kind: 'search', ...base };
    case 1:
      return {
        kind: 'results',
        ...base,
        keywords,
        page,
        total: rng.int(0, 50),
        products: Array.from({ length: rng.int(0, 10) }, (_, i) =>
          product(rng, rng.int(0, 5) === 0 ? pick(rng) : `B${n}X${i}`),
        ),
      };
    case 2:
      return {
        kind: 'item',
        ...base,
        keywords,
        page,
        product: item,
        options,
        showAttributes: rng.int(0, 1) === 1,
      };
    case 3:
      return {
        kind: 'sub',
        ...base,
        keywords,
        page,
        product: item,
        options,
        subPage: 'Description',
      };
    case 4:
      return { kind: 'sub', ...base, keywords, page, product: item, options, subPage: 'Features' };
    case 5:
      return {
        kind: 'sub',
        ...base,
        keywords,
        page,
        product: item,
        options,
        subPage: rng.int(0, 1) === 0 ? 'Reviews' : 'Attributes',
      };
    default:
      return {
        kind: 'done',
        sessionId: base.sessionId,
        asin: pick(rng),
        options,
        reward: rng.pick([0, 1, 0.5, 1 / 3, 0.1]),
        details: n % 8 === 6 ? null : details(rng),
      };
  }
}

const shownNodes = (nodes: readonly VisibleTextNode[]) =>
  nodes.filter((node) => node.text !== '\n');

describe('pageTextNodes', () => {
  it('lists exactly the text nodes that parsing the rendered page finds, for 4,000 random pages', () => {
    const rng = new DemoRandom(17, 0);
    for (let n = 0; n < 4_000; n++) {
      const view = randomView(rng, n);
      const parsed = visibleTextNodes(renderPageHtml(view, textEnvironmentLinks));
      const sut = pageTextNodes(view);
      const where = `${view.kind} #${n}`;
      expect(shownNodes(sut), where).toEqual(shownNodes(parsed));
      expect(simpleTextFromNodes(sut), where).toBe(simpleTextFromNodes(parsed));
      const context = { url: `http://x/${pick(rng)}`, visitedAsins: new Set([`B${n}X1`]) };
      expect(richTextFromNodes(sut, context), where).toBe(richTextFromNodes(parsed, context));
    }
  });
});
