// `lxml.html.tostring(lxml.html.fromstring(data), pretty_print=True, encoding="unicode")` as lxml
// 4.9.2 on libxml2 2.9.14 computes it, for `compare_epub`. What is reproduced:
// - input decoding: UTF-8 when the bytes start with a BOM or `<?xm`, else ISO-8859-1 (so UTF-8 text
//   reads as mojibake, as upstream), switching to the charset of a `<meta http-equiv=Content-Type>`
//   after that tag; characters XML forbids (C0 controls but tab/LF/CR) are dropped;
// - libxml2's HTML tree building: lower-cased names, namespace prefixes dropped from element names,
//   implied html/head/body and paragraph, its start-tag auto-close table, end tags closing up to the
//   matching open element within end-tag priorities, empty elements, `/>` closing any element,
//   misplaced html/head/body ignored, first of duplicate attributes kept, all whitespace kept;
// - lxml.html.fromstring's choice of the element returned (the whole document, the only child of
//   body, or body renamed div/span), and tostring's final newline and removal of
//   `<meta http-equiv="Content-Type" ...>`;
// - libxml2's HTML serialiser with formatting (htmlNodeDumpFormatOutput): the newline rules around
//   non-inline HTML 4 elements, end tags omitted for empty elements, `&<>` escaping, attribute
//   quoting, URI-escaped href/src/action/a@name, boolean attributes written bare.
// Not reproduced: libxml2's tokenizer corner cases (entities without ';', HTML 5 entity names it
// lacks, tags inside title/textarea, bogus comments), handled here by htmlparser2's tokenizer.
import { Tokenizer, QuoteType } from 'htmlparser2';
import { pyStrip } from '../python/builtins.js';
import { LIBXML2_HTML_ELEMENTS, LIBXML2_START_CLOSE } from './libxml2-html-tables.js';
import { PythonException } from '../python/exceptions.js';

type HtmlNode = HtmlElement | HtmlText | HtmlComment;
type HtmlText = { kind: 'text'; text: string };
type HtmlComment = { kind: 'comment'; text: string } | { kind: 'pi'; text: string };
type HtmlElement = {
  kind: 'element';
  name: string;
  attributes: Array<[string, string | null]>;
  children: HtmlNode[];
  parent: HtmlElement | undefined;
};

const elementInfo = (name: string) => {
  const row = LIBXML2_HTML_ELEMENTS[name];
  return row === undefined
    ? undefined
    : { endTag: row[0], saveEndTag: row[1], empty: row[2] !== 0, isInline: row[3] !== 0 };
};

const START_CLOSE = new Map(
  Object.entries(LIBXML2_START_CLOSE).map(([old, tags]) => [old, new Set(tags.split(' '))]),
);

const END_PRIORITY: Readonly<Record<string, number>> = {
  div: 150,
  td: 160,
  th: 160,
  tr: 170,
  thead: 180,
  tbody: 180,
  tfoot: 180,
  table: 190,
  head: 200,
  body: 200,
  html: 220,
};
const endPriority = (name: string): number => END_PRIORITY[name] ?? 100;

const HEAD_ELEMENTS = new Set(['script', 'style', 'meta', 'link', 'title', 'base']);
const BLANK = /^[ \t\n\r]*$/;
// Characters outside XML's Char production are dropped by libxml2.
const NOT_XML_CHAR = /[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]/g;

/** The text libxml2's HTML parser reads from `bytes` (see the header for the rules). */
function libxml2HtmlDecode(bytes: Uint8Array): string {
  const latin1 = (part: Uint8Array): string => new TextDecoder('latin1').decode(part);
  const decoder = (label: string, part: Uint8Array): string => {
    try {
      return new TextDecoder(label.toLowerCase(), { ignoreBOM: false }).decode(part);
    } catch {
      return latin1(part);
    }
  };
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    return decoder('utf-8', bytes.subarray(3));
  }
  if (bytes[0] === 0x3c && bytes[1] === 0x3f && bytes[2] === 0x78 && bytes[3] === 0x6d) {
    return decoder('utf-8', bytes);
  }
  const text = latin1(bytes);
  for (const match of text.matchAll(/<meta\b[^>]*>/gi)) {
    const tag = match[0];
    if (!/http-equiv\s*=\s*["']?content-type/i.test(tag)) continue;
    const charset = /content\s*=\s*["'][^"']*charset\s*=\s*([A-Za-z0-9._-]+)/i.exec(tag)?.[1];
    if (charset === undefined) continue;
    const end = (match.index ?? 0) + tag.length;
    return text.slice(0, end) + decoder(charset, bytes.subarray(end));
  }
  return text;
}

/** libxml2's SAX tree building, driven by htmlparser2's tokenizer. */
class Libxml2TreeBuilder {
  root: HtmlElement | undefined;
  private readonly stack: HtmlElement[] = [];
  private sawHead = false;
  private sawBody = false;
  private hadDoctype = false;
  private misplacedDepth = 0;

  private get current(): HtmlElement | undefined {
    return this.stack[this.stack.length - 1];
  }

  private push(name: string, attributes: Array<[string, string | null]> = []): HtmlElement {
    const element: HtmlElement = {
      kind: 'element',
      name,
      attributes,
      children: [],
      parent: undefined,
    };
    const parent = this.current;
    if (parent !== undefined) {
      element.parent = parent;
      parent.children.push(element);
    } else if (this.root === undefined) {
      this.root = element;
    } else if (!this.hadDoctype) {
      // With no element open, libxml2 links a new element under the document's first child.
      element.parent = this.root;
      this.root.children.push(element);
    }
    if (name === 'head') this.sawHead = true;
    if (name === 'body') this.sawBody = true;
    this.stack.push(element);
    return element;
  }

  private pop(): void {
    this.stack.pop();
  }

  private autoClose(newTag: string): void {
    for (let open = this.current; open !== undefined; open = this.current) {
      if (START_CLOSE.get(open.name)?.has(newTag) !== true) return;
      this.pop();
    }
  }

  private checkImplied(newTag: string): void {
    if (newTag === 'html') return;
    if (this.stack.length === 0) this.push('html');
    if (newTag === 'body' || newTag === 'head') return;
    if (this.stack.length <= 1 && HEAD_ELEMENTS.has(newTag)) {
      if (!this.sawHead) this.push('head');
    } else if (newTag !== 'noframes' && newTag !== 'frame' && newTag !== 'frameset') {
      if (this.sawBody) return;
      if (this.stack.some((open) => open.name === 'body' || open.name === 'head')) return;
      this.push('body');
    }
  }

  doctype(): void {
    if (this.root === undefined) this.hadDoctype = true;
  }

  startTag(
    rawName: string,
    attributes: Array<[string, string | null]>,
    selfClosing: boolean,
  ): void {
    // Namespace prefixes of element names are dropped (libxml2 finds no namespace for them).
    const colon = rawName.indexOf(':');
    const name = colon > 0 && colon < rawName.length - 1 ? rawName.slice(colon + 1) : rawName;
    this.autoClose(name);
    this.checkImplied(name);
    let discard = false;
    if (this.stack.length > 0 && name === 'html') discard = true;
    if (this.stack.length !== 1 && name === 'head') discard = true;
    if (name === 'body' && this.stack.some((open) => open.name === 'body')) discard = true;
    if (discard) {
      this.misplacedDepth += 1;
      return;
    }
    const unique: Array<[string, string | null]> = [];
    for (const attribute of attributes) {
      if (!unique.some(([seen]) => seen === attribute[0])) unique.push(attribute);
    }
    this.push(name, unique);
    if (selfClosing || elementInfo(name)?.empty === true) this.pop();
  }

  endTag(name: string): void {
    if (this.misplacedDepth > 0 && (name === 'html' || name === 'body' || name === 'head')) {
      this.misplacedDepth -= 1;
      return;
    }
    let index = this.stack.length - 1;
    for (; index >= 0; index -= 1) {
      const open = this.stack[index];
      if (open === undefined || open.name === name) break;
    }
    if (index < 0) return;
    // A misplaced end tag cannot close an element of higher priority.
    const priority = endPriority(name);
    for (let open = this.stack.length - 1; open > index; open -= 1) {
      if (endPriority(this.stack[open]?.name ?? '') > priority) return;
    }
    while (this.stack.length > index) this.pop();
  }

  text(raw: string): void {
    const text = raw.replace(NOT_XML_CHAR, '');
    if (text === '') return;
    if (!BLANK.test(text)) {
      const name = this.current?.name;
      if (name === undefined || name === 'html' || name === 'head') {
        this.autoClose('p');
        this.checkImplied('p');
        this.push('p');
      }
    }
    const parent = this.current;
    if (parent === undefined) return;
    const last = parent.children[parent.children.length - 1];
    if (last?.kind === 'text') last.text += text;
    else parent.children.push({ kind: 'text', text });
  }

  comment(kind: 'comment' | 'pi', text: string): void {
    this.current?.children.push({ kind, text });
  }
}

/** Runs htmlparser2's tokenizer over `text`, feeding a libxml2-style tree builder. */
function buildTree(text: string): HtmlElement | undefined {
  const builder = new Libxml2TreeBuilder();
  let pendingText = '';
  let tagName = '';
  let attributes: Array<[string, string | null]> = [];
  let attributeName = '';
  let attributeValue = '';
  const flush = (): void => {
    if (pendingText !== '') builder.text(pendingText);
    pendingText = '';
  };
  const slice = (start: number, end: number): string => text.slice(start, end);
  const tokenizer = new Tokenizer(
    { xmlMode: false, decodeEntities: true },
    {
      ontext: (start, end) => {
        pendingText += slice(start, end);
      },
      ontextentity: (codepoint) => {
        pendingText += String.fromCodePoint(codepoint);
      },
      onopentagname: (start, end) => {
        flush();
        tagName = slice(start, end).toLowerCase();
        attributes = [];
      },
      onattribname: (start, end) => {
        attributeName = slice(start, end).toLowerCase();
        attributeValue = '';
      },
      onattribdata: (start, end) => {
        attributeValue += slice(start, end);
      },
      onattribentity: (codepoint) => {
        attributeValue += String.fromCodePoint(codepoint);
      },
      onattribend: (quote) => {
        attributes.push([
          attributeName,
          quote === QuoteType.NoValue ? null : attributeValue.replace(NOT_XML_CHAR, ''),
        ]);
      },
      onopentagend: () => builder.startTag(tagName, attributes, false),
      onselfclosingtag: () => builder.startTag(tagName, attributes, true),
      onclosetag: (start, end) => {
        flush();
        builder.endTag(slice(start, end).toLowerCase());
      },
      oncomment: (start, end, endOffset) => {
        flush();
        builder.comment('comment', slice(start, end - endOffset));
      },
      onprocessinginstruction: (start, end) => {
        flush();
        const body = slice(start, end);
        if (/^!doctype/i.test(body)) builder.doctype();
        else if (body.startsWith('?')) builder.comment('pi', body.slice(1));
      },
      ondeclaration: (start, end) => {
        flush();
        if (/^!?doctype/i.test(slice(start, end))) builder.doctype();
      },
      oncdata: () => flush(),
      onend: () => flush(),
    },
  );
  tokenizer.write(text);
  tokenizer.end();
  return builder.root;
}

// ---- lxml.html.fromstring's choice of element ----

const LXML_BLOCK_TAGS = new Set(
  (
    'address blockquote center del div h1 h2 h3 h4 h5 h6 hr ins isindex noscript p pre ' +
    'dir dl dt dd li menu ol ul table caption colgroup col thead tfoot tbody tr td th ' +
    'fieldset form legend optgroup option'
  ).split(' '),
);

type Chosen = { element: HtmlElement; tail: string };

function containsBlockTag(element: HtmlElement): boolean {
  return (
    LXML_BLOCK_TAGS.has(element.name) ||
    element.children.some((child) => child.kind === 'element' && containsBlockTag(child))
  );
}

function chooseElement(root: HtmlElement, fullHtml: boolean): Chosen {
  const whole = { element: root, tail: '' };
  if (fullHtml) return whole;
  const bodies = root.children.filter(
    (child): child is HtmlElement => child.kind === 'element' && child.name === 'body',
  );
  const [body, ...otherBodies] = bodies;
  if (body !== undefined) {
    for (const other of otherBodies) {
      body.children.push(...other.children);
      root.children.splice(root.children.indexOf(other), 1);
    }
  }
  const hasHead = root.children.some((child) => child.kind === 'element' && child.name === 'head');
  if (hasHead || body === undefined) return whole;
  // lxml counts comments and PIs as children; text before the first and after the last is text/tail.
  const nodes = body.children.filter((child) => child.kind !== 'text');
  const first = body.children[0];
  const bodyText = first?.kind === 'text' ? first.text : '';
  const last = body.children[body.children.length - 1];
  const lastTail = last?.kind === 'text' && nodes.length > 0 ? last.text : '';
  const only = nodes[0];
  if (
    nodes.length === 1 &&
    only?.kind === 'element' &&
    pyStrip(bodyText) === '' &&
    pyStrip(lastTail) === ''
  ) {
    return { element: only, tail: lastTail };
  }
  body.name = containsBlockTag(body) ? 'div' : 'span';
  return { element: body, tail: '' };
}

// ---- libxml2's HTML serialiser (htmlNodeDumpFormatOutput, format = 1) ----

const BOOLEAN_ATTRIBUTES = new Set(
  'checked compact declare defer disabled ismap multiple nohref noresize noshade nowrap readonly selected'.split(
    ' ',
  ),
);

const escapeText = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** xmlURIEscapeStr(value, "@/:=?;#%&,+<>") over the UTF-8 bytes. */
function uriEscape(value: string): string {
  let out = '';
  for (const byte of new TextEncoder().encode(value)) {
    const ch = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-_.!~*'()@/:=?;#%&,+<>]/.test(ch)) out += ch;
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function quoted(value: string): string {
  if (!value.includes('"')) return `"${value}"`;
  if (!value.includes("'")) return `'${value}'`;
  return `"${value.replace(/"/g, '&quot;')}"`;
}

function attributeText(element: HtmlElement, [name, value]: [string, string | null]): string {
  if (value === null || BOOLEAN_ATTRIBUTES.has(name)) return ` ${name}`;
  const escaped = escapeText(value);
  const isUri =
    name === 'href' ||
    name === 'action' ||
    name === 'src' ||
    (name === 'name' && element.name === 'a');
  return ` ${name}=${quoted(isUri ? uriEscape(escaped.replace(/^[ \t\n\r]+/, '')) : escaped)}`;
}

const isTextual = (node: HtmlNode | undefined): boolean => node?.kind === 'text';
const notP = (element: HtmlElement | undefined): boolean =>
  element !== undefined && !element.name.startsWith('p');

function serialize(
  node: HtmlNode,
  parent: HtmlElement | undefined,
  next: HtmlNode | undefined,
): string {
  if (node.kind === 'text') {
    const rawParent = parent?.name === 'script' || parent?.name === 'style';
    return rawParent ? node.text : escapeText(node.text);
  }
  if (node.kind === 'comment') return `<!--${node.text}-->`;
  if (node.kind === 'pi') return `<?${node.text}>`;
  const info = elementInfo(node.name);
  const block = info !== undefined && !info.isInline;
  let out = `<${node.name}${node.attributes.map((attribute) => attributeText(node, attribute)).join('')}`;
  const children = node.children;
  if (info?.empty === true) out += '>';
  else if (children.length === 0) {
    out +=
      info !== undefined && info.saveEndTag !== 0 && node.name !== 'html' && node.name !== 'body'
        ? '>'
        : `></${node.name}>`;
  } else {
    out += '>';
    const first = children[0];
    if (block && !isTextual(first) && children.length > 1 && !node.name.startsWith('p'))
      out += '\n';
    children.forEach((child, index) => {
      out += serialize(child, node, children[index + 1]);
    });
    const last = children[children.length - 1];
    if (block && !isTextual(last) && children.length > 1 && !node.name.startsWith('p')) out += '\n';
    out += `</${node.name}>`;
  }
  if (block && next !== undefined && !isTextual(next) && notP(parent)) out += '\n';
  return out;
}

const META_CONTENT_TYPE = /<meta http-equiv="Content-Type"[^>]*>/g;

/** `lxml.html.tostring(lxml.html.fromstring(bytes), pretty_print=True, encoding="unicode")`. */
export function lxmlPrettyHtml(bytes: Uint8Array): string {
  const root = buildTree(libxml2HtmlDecode(bytes));
  if (root === undefined) throw new PythonException('ParserError', 'Document is empty');
  const fullHtml = /^[ \t\n\r\f\v]*<(?:html|!doctype)/i.test(
    new TextDecoder('latin1').decode(bytes.subarray(0, 256)),
  );
  const { element, tail } = chooseElement(root, fullHtml);
  // The chosen element is written alone (its copy has no next sibling), then its tail text.
  const html = `${serialize(element, element.parent, undefined)}${escapeText(tail)}\n`;
  return html.replace(META_CONTENT_TYPE, '');
}
