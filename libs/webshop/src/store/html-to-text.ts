// The original turns pages into text with BeautifulSoup (html.parser): it collects the visible text
// nodes and joins them ('text') or decorates them by their parent tag ('text_rich'). This module
// reproduces the text nodes that tree builder yields: runs of character data between tags,
// entities decoded, whitespace-only runs collapsed to '\n' or ' ', unmatched end tags ignored.
import { pythonStrip } from '../catalog/index.js';

export interface VisibleTextNode {
  readonly text: string;
  /** Tag name of the node's parent element. */
  readonly parentTag: string;
  /** The parent's `class` attribute split on whitespace, or `null` when it has none. */
  readonly parentClass: readonly string[] | null;
}

const INVISIBLE_PARENTS = new Set(['style', 'script', 'head', 'title', 'meta', '[document]']);
const VOID_ELEMENTS = new Set([
  'area',
  'base',
  'br',
  'col',
  'embed',
  'hr',
  'img',
  'input',
  'keygen',
  'link',
  'menuitem',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
  'basefont',
  'bgsound',
  'command',
  'frame',
  'image',
  'isindex',
  'nextid',
  'spacer',
]);
const WHITESPACE_PRESERVING = new Set(['pre', 'textarea']);

const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  copy: '\u00a9',
  reg: '\u00ae',
  trade: '\u2122',
  hellip: '\u2026',
  mdash: '\u2014',
  ndash: '\u2013',
  lsquo: '\u2018',
  rsquo: '\u2019',
  ldquo: '\u201c',
  rdquo: '\u201d',
  bull: '\u2022',
  middot: '\u00b7',
  deg: '\u00b0',
  times: '\u00d7',
  rsaquo: '\u203a',
  lsaquo: '\u2039',
  laquo: '\u00ab',
  raquo: '\u00bb',
  euro: '\u20ac',
  pound: '\u00a3',
  cent: '\u00a2',
  yen: '\u00a5',
  sect: '\u00a7',
  para: '\u00b6',
  plusmn: '\u00b1',
  frac12: '\u00bd',
  frac14: '\u00bc',
  frac34: '\u00be',
  shy: '\u00ad',
  iexcl: '\u00a1',
  iquest: '\u00bf',
};

// Code points 0x80-0x9f that bs4 reads as windows-1252 when they arrive as numeric references.
const WINDOWS_1252: Readonly<Record<number, number>> = {
  0x80: 0x20ac,
  0x82: 0x201a,
  0x83: 0x0192,
  0x84: 0x201e,
  0x85: 0x2026,
  0x86: 0x2020,
  0x87: 0x2021,
  0x88: 0x02c6,
  0x89: 0x2030,
  0x8a: 0x0160,
  0x8b: 0x2039,
  0x8c: 0x0152,
  0x8e: 0x017d,
  0x91: 0x2018,
  0x92: 0x2019,
  0x93: 0x201c,
  0x94: 0x201d,
  0x95: 0x2022,
  0x96: 0x2013,
  0x97: 0x2014,
  0x98: 0x02dc,
  0x99: 0x2122,
  0x9a: 0x0161,
  0x9b: 0x203a,
  0x9c: 0x0153,
  0x9e: 0x017e,
  0x9f: 0x0178,
};

function numericReference(codePoint: number): string {
  const mapped = WINDOWS_1252[codePoint] ?? codePoint;
  if (mapped > 0x10ffff || mapped < 0) return '\ufffd';
  return String.fromCodePoint(mapped === 0 ? 0xfffd : mapped);
}

const REFERENCE = /&(?:#(\d+)|#[xX]([0-9a-fA-F]+)|([a-zA-Z][a-zA-Z0-9]*));?/g;

function decodeHtmlReferences(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(
    REFERENCE,
    (
      whole,
      decimal: string | undefined,
      hexDigits: string | undefined,
      name: string | undefined,
    ) => {
      if (decimal !== undefined) return numericReference(Number.parseInt(decimal, 10));
      if (hexDigits !== undefined) return numericReference(Number.parseInt(hexDigits, 16));
      return (name !== undefined ? NAMED_ENTITIES[name] : undefined) ?? whole;
    },
  );
}

interface OpenElement {
  readonly tag: string;
  readonly classList: readonly string[] | null;
}

const TAG_NAME = /[a-zA-Z][^\s/>]*/y;
const RAW_TEXT_END: Readonly<Record<string, RegExp>> = {
  script: /<\/script\s*>/gi,
  style: /<\/style\s*>/gi,
};

function tagNameAt(html: string, position: number): string | null {
  TAG_NAME.lastIndex = position;
  return TAG_NAME.exec(html)?.[0] ?? null;
}
const ATTRIBUTE = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]*)))?/g;
const ASCII_WHITESPACE_ONLY = /^[ \n\t\f\r]*$/;

function parseClassAttribute(attributeText: string): readonly string[] | null {
  for (const match of attributeText.matchAll(ATTRIBUTE)) {
    if (match[1]?.toLowerCase() !== 'class') continue;
    const raw = decodeHtmlReferences(match[2] ?? match[3] ?? match[4] ?? '');
    return raw.split(/[ \t\n\r\f]+/).filter((part) => part !== '');
  }
  return null;
}

/** Index of the `>` closing a tag that starts at `from`, skipping quoted attribute values. */
function tagEnd(html: string, from: number): number {
  const firstClose = html.indexOf('>', from);
  if (firstClose === -1) return -1;
  const quoted = html.slice(from, firstClose);
  if (!quoted.includes('"') && !quoted.includes("'")) return firstClose;
  let quote: string | null = null;
  for (let i = from; i < html.length; i++) {
    const ch = html[i];
    if (quote !== null) {
      if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '>') return i;
  }
  return -1;
}

/** The visible text nodes of a page, in document order, as the original's `tag_visible` filter keeps them. */
export function visibleTextNodes(html: string): VisibleTextNode[] {
  const nodes: VisibleTextNode[] = [];
  const stack: OpenElement[] = [];
  let pending = '';

  const flush = (): void => {
    if (pending === '') return;
    let text = pending;
    pending = '';
    if (
      ASCII_WHITESPACE_ONLY.test(text) &&
      !stack.some((element) => WHITESPACE_PRESERVING.has(element.tag))
    ) {
      text = text.includes('\n') ? '\n' : ' ';
    }
    const parent = stack[stack.length - 1];
    const parentTag = parent?.tag ?? '[document]';
    if (INVISIBLE_PARENTS.has(parentTag)) return;
    nodes.push({ text, parentTag, parentClass: parent?.classList ?? null });
  };

  const popTo = (tag: string): void => {
    for (let i = stack.length - 1; i >= 0; i--) {
      if (stack[i]?.tag === tag) {
        stack.length = i;
        return;
      }
    }
  };

  let i = 0;
  while (i < html.length) {
    const lt = html.indexOf('<', i);
    if (lt === -1) {
      pending += decodeHtmlReferences(html.slice(i));
      break;
    }
    if (lt > i) pending += decodeHtmlReferences(html.slice(i, lt));
    i = lt;

    if (html.startsWith('<!--', i)) {
      flush();
      const close = html.indexOf('-->', i + 4);
      i = close === -1 ? html.length : close + 3;
      continue;
    }
    if (html.startsWith('<!', i) || html.startsWith('<?', i)) {
      flush();
      const close = html.indexOf('>', i);
      i = close === -1 ? html.length : close + 1;
      continue;
    }
    if (html.startsWith('</', i)) {
      const name = tagNameAt(html, i + 2);
      const close = html.indexOf('>', i);
      if (name === null || close === -1) {
        pending += '</';
        i += 2;
        continue;
      }
      flush();
      popTo(name.toLowerCase());
      i = close + 1;
      continue;
    }
    const name = tagNameAt(html, i + 1);
    const close = name === null ? -1 : tagEnd(html, i + 1 + name.length);
    if (name === null || close === -1) {
      pending += '<';
      i += 1;
      continue;
    }
    flush();
    const tag = name.toLowerCase();
    const attributeText = html.slice(i + 1 + name.length, close);
    const selfClosing = attributeText.trimEnd().endsWith('/');
    i = close + 1;
    const rawTextEnd = RAW_TEXT_END[tag];
    if (rawTextEnd !== undefined && !selfClosing) {
      // Script and style content is raw text; its node is invisible anyway.
      rawTextEnd.lastIndex = i;
      const endMatch = rawTextEnd.exec(html);
      i = endMatch === null ? html.length : endMatch.index + endMatch[0].length;
      continue;
    }
    if (selfClosing || VOID_ELEMENTS.has(tag)) continue;
    stack.push({
      tag,
      classList: /class/i.test(attributeText) ? parseClassAttribute(attributeText) : null,
    });
  }
  flush();
  return nodes;
}

/** Observation mode 'text': visible nodes stripped and joined with ' [SEP] '. */
export function simpleTextFromNodes(nodes: readonly VisibleTextNode[]): string {
  const parts: string[] = [];
  for (const node of nodes) {
    if (node.text !== '\n') parts.push(pythonStrip(node.text));
  }
  return parts.join(' [SEP] ');
}

export interface RichTextContext {
  /** The current page URL; an option label counts as clicked when `"<value>"` occurs in it. */
  readonly url: string;
  /** ASINs visited in this session, upper-case. */
  readonly visitedAsins: ReadonlySet<string>;
}

/** Observation mode 'text_rich': one line per node, clickables marked. */
export function richTextFromNodes(
  nodes: readonly VisibleTextNode[],
  context: RichTextContext,
): string {
  let observation = '';
  for (const node of nodes) {
    const t = node.text;
    if (t === '\n') continue;
    let line: string;
    if (node.parentTag === 'button') line = `[button] ${t} [button_]`;
    else if (node.parentTag === 'label') {
      if (context.url.includes(`"${t}"`)) {
        line = `  [clicked button] ${t} [clicked button_]`;
        observation = `You have clicked ${t}.\n${observation}`;
      } else line = `  [button] ${t} [button_]`;
    } else if (node.parentClass?.length === 1 && node.parentClass[0] === 'product-link') {
      line = context.visitedAsins.has(t)
        ? `\n[clicked button] ${t} [clicked button_]`
        : `\n[button] ${t} [button_]`;
    } else line = t;
    observation += `${line}\n`;
  }
  return observation;
}
