// The visible text nodes of a page straight from its view, without rendering HTML and parsing it
// back: the 'text' and 'text_rich' observations are built from these. Each function follows its
// template in page-templates.ts line by line and lists the text runs the parser in html-to-text.ts
// would find there, with the parent element it would see (the templates close some elements with
// the wrong tag, which leaves the opened one as the parent, e.g. `<h4>…</h5>`). Whitespace-only runs
// between template lines always hold a newline, and both observation modes drop those, so they
// are not listed. A test renders and parses random pages to check both ways agree.
import { pythonFloatRepr } from '../catalog/index.js';
import type { VisibleTextNode } from './html-to-text.js';
import type {
  DonePageView,
  ItemPageView,
  PageView,
  ResultsPageView,
  SearchPageView,
  SubPageView,
} from './page-templates.js';
import { flaskToJsonDict, jinjaText } from './python-text-formats.js';

const ASCII_WHITESPACE_ONLY = /^[ \n\t\f\r]*$/;

const BUTTON_SUCCESS = ['btn', 'btn-success'] as const;
const BUTTON_PRIMARY = ['btn', 'btn-primary'] as const;
const BUTTON_PURCHASE = ['btn', 'btn-lg', 'purchase'] as const;
const PRODUCT_LINK = ['product-link'] as const;
const PRODUCT_TITLE = ['mt-0', 'font-weight-bold', 'mb-2', 'product-title'] as const;
const PRODUCT_PRICE = ['font-weight-bold', 'my-2', 'product-price'] as const;
const PRODUCT_INFO = ['product-info'] as const;
const ATTRIBUTE = ['attribute'] as const;
const PRODUCT_CATEGORY = ['product-category'] as const;
const PRODUCT_QUERY = ['product-query'] as const;
const PRODUCT_PRODUCT_CATEGORY = ['product-product_category'] as const;

/** Collects nodes as the parser's flush does: empty runs vanish, whitespace-only runs collapse outside <pre>. */
class TextNodes {
  readonly nodes: VisibleTextNode[] = [];

  add(text: string, parentTag: string, parentClass: readonly string[] | null = null): void {
    if (text === '') return;
    const shown = ASCII_WHITESPACE_ONLY.test(text) ? (text.includes('\n') ? '\n' : ' ') : text;
    this.nodes.push({ text: shown, parentTag, parentClass });
  }

  /** Inside <pre> whitespace is kept as it is. */
  addPreformatted(text: string): void {
    if (text !== '') this.nodes.push({ text, parentTag: 'pre', parentClass: null });
  }
}

function searchPage(view: SearchPageView, out: TextNodes): void {
  out.add('WebShop', 'h2');
  out.add('Instruction: ', 'h4');
  out.add(view.instructionText, 'h4');
  out.add('Search', 'button', BUTTON_SUCCESS);
}

function browseTop(view: { readonly instructionText: string }, out: TextNodes): void {
  out.add('Instruction:', 'h4');
  out.add(view.instructionText, 'h4');
  out.add('Back to Search', 'button', BUTTON_SUCCESS);
}

function resultsPage(view: ResultsPageView, out: TextNodes): void {
  browseTop(view, out);
  out.add(`Page ${view.page} (Total results: ${view.total})`, 'h3');
  if (view.page > 1) out.add('< Prev', 'button', BUTTON_PRIMARY);
  out.add('Next >', 'button', BUTTON_PRIMARY);
  for (const product of view.products) {
    out.add(product.asin, 'a', PRODUCT_LINK);
    out.add(product.title, 'h4', PRODUCT_TITLE);
    out.add(product.priceText, 'h5', PRODUCT_PRICE);
  }
}

function itemPage(view: ItemPageView, out: TextNodes): void {
  const { product } = view;
  browseTop(view, out);
  out.add('< Prev', 'button', BUTTON_PRIMARY);
  for (const option of product.options) {
    out.add(option.name, 'h4');
    for (const value of option.values) out.add(value, 'label');
  }
  out.add(product.title, 'h2');
  out.add(`Price: ${product.priceText}`, 'h4');
  out.add('Rating: N.A.', 'h4');
  out.add('Description', 'button', BUTTON_PRIMARY);
  out.add('Features', 'button', BUTTON_PRIMARY);
  out.add('Reviews', 'button', BUTTON_PRIMARY);
  if (view.showAttributes) out.add('Attributes', 'button', BUTTON_PRIMARY);
  out.add('Buy Now', 'button', BUTTON_PURCHASE);
}

function subPage(view: SubPageView, out: TextNodes): void {
  const { product } = view;
  browseTop(view, out);
  out.add('< Prev', 'button', BUTTON_PRIMARY);
  switch (view.subPage) {
    case 'Description':
      out.add(jinjaText(product.description), 'p', PRODUCT_INFO);
      return;
    case 'Features':
      for (const bullet of product.bulletPoints) out.add(` ${bullet}`, 'p', PRODUCT_INFO);
      return;
    case 'Reviews':
      return;
    case 'Attributes':
      for (const attribute of product.attributes) out.add(attribute, 'p', ATTRIBUTE);
      out.add(product.category, 'h5', PRODUCT_CATEGORY);
      out.add(product.query, 'h5', PRODUCT_QUERY);
      out.add(product.productCategory, 'h5', PRODUCT_PRODUCT_CATEGORY);
      return;
  }
}

function donePage(view: DonePageView, out: TextNodes): void {
  const d = view.details;
  const shown = (value: string | undefined): string => value ?? 'None';
  const blank = (value: string | undefined): string => value ?? '';
  out.add('Thank you for shopping with us!', 'h1');
  out.add('Your code: ', 'h3');
  out.addPreformatted(shown(d?.mturkCode));
  out.add(' (Paste it in your MTurk interface.)', 'p');
  out.add('Purchased', 'h2');
  const labelled = (label: string, value: string): void => {
    out.add(label, 'h4');
    out.addPreformatted(value);
  };
  labelled('asin', view.asin);
  labelled('options', flaskToJsonDict(view.options));
  labelled('attrs', shown(d?.purchasedAttributes));
  labelled('category', shown(d?.purchasedCategory));
  labelled('query', shown(d?.purchasedQuery));
  labelled('product category', shown(d?.purchasedProductCategory));
  out.add('Target', 'h2');
  labelled('asin', blank(d?.goalAsin));
  labelled('options', blank(d?.goalOptions));
  labelled('attrs', blank(d?.goalAttributes));
  labelled('price upper', blank(d?.goalPriceUpper));
  labelled('instuction text', blank(d?.goalInstructionText));
  labelled('category', blank(d?.goalCategory));
  labelled('product category', blank(d?.goalProductCategory));
  labelled('query', blank(d?.goalQuery));
  labelled('Goal ', shown(d?.goal));
  out.add('Reward', 'h2');
  out.add('Your score (min 0.0, max 1.0)', 'h3');
  out.addPreformatted(pythonFloatRepr(view.reward));
  labelled('Reward Details ', shown(d?.rewardInfo));
}

/** The page's visible text nodes, less the newline-only runs (which no observation mode shows). */
export function pageTextNodes(view: PageView): VisibleTextNode[] {
  const out = new TextNodes();
  switch (view.kind) {
    case 'search':
      searchPage(view, out);
      break;
    case 'results':
      resultsPage(view, out);
      break;
    case 'item':
      itemPage(view, out);
      break;
    case 'sub':
      subPage(view, out);
      break;
    case 'done':
      donePage(view, out);
      break;
  }
  return out.nodes;
}
