// PyMuPDF 1.21's `page.get_text()` ("text" mode), rebuilt on pdf.js: pdf.js parses the file and its
// fonts; the characters are laid out into lines as MuPDF's structured-text device does.
//
// Why not pdf.js's own getTextContent: it drops real space glyphs and re-inserts at most one space
// per gap, so "Item  Qty" becomes "Item Qty" and every ratio drifts. Here each glyph of the page's
// operator list is placed with the PDF text state, and MuPDF's rules decide (stext-device.c):
// a glyph within 0.8 × font size of the previous baseline continues the line; along the line a gap
// under 0.15 × size is ignored, over 0.8 × size starts a new line, in between inserts one space
// (unless the previous character is a space); glyphs entirely outside the MediaBox are dropped.
// Each line is then written followed by "\n" (PyMuPDF's JM_print_stext_page_as_text), with no
// blank line between blocks. Not reproduced: vertical writing, right-to-left heuristics, and the
// exact glyph bounding boxes of the MediaBox clip (a glyph counts as outside when its origin box
// is).
import type { PDFPageProxy } from 'pdfjs-dist/types/src/display/api.js';

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');

let pdfJs: Promise<PdfJs> | undefined;

/**
 * pdf.js's legacy build (the one Node 20 runs) installs core-js polyfills over built-ins it finds
 * lacking, JSON.stringify, JSON.parse, Array.prototype.push and Function.prototype.toString among
 * them: JavaScript wrappers many times slower than V8's own, in the whole process (a WebShop
 * catalog import ran 1.9× slower with this module merely loaded). So it is loaded when a PDF is
 * first read, and those built-ins are put back: what the polyfills add to them pdf.js does not use.
 */
function loadPdfJs(): Promise<PdfJs> {
  pdfJs ??= (async () => {
    const builtIns = [
      [JSON, 'stringify'],
      [JSON, 'parse'],
      [Array.prototype, 'push'],
      [Function.prototype, 'toString'],
    ].map(([owner, key]) => ({
      owner: owner as object,
      key: key as string,
      descriptor: Object.getOwnPropertyDescriptor(owner, key as string)!,
    }));
    try {
      // pdf.js would import its worker (polyfills again) at the first document: it is given now.
      const [library, worker] = await Promise.all([
        import('pdfjs-dist/legacy/build/pdf.mjs'),
        // @ts-expect-error pdf.js ships no types for its worker module
        import('pdfjs-dist/legacy/build/pdf.worker.mjs') as Promise<unknown>,
      ]);
      (globalThis as { pdfjsWorker?: unknown }).pdfjsWorker = worker;
      return library;
    } finally {
      for (const { owner, key, descriptor } of builtIns)
        Object.defineProperty(owner, key, descriptor);
    }
  })();
  return pdfJs;
}

type Matrix = [number, number, number, number, number, number];
type Point = { x: number; y: number };

const IDENTITY: Matrix = [1, 0, 0, 1, 0, 0];
const SPACE_DIST = 0.15;
const SPACE_MAX_DIST = 0.8;
const BASELINE_MAX_DIST = 0.8;

/** `m1` then `m2` (PDF row-vector convention: p' = p × m1 × m2). */
function concat(m1: Matrix, m2: Matrix): Matrix {
  return [
    m1[0] * m2[0] + m1[1] * m2[2],
    m1[0] * m2[1] + m1[1] * m2[3],
    m1[2] * m2[0] + m1[3] * m2[2],
    m1[2] * m2[1] + m1[3] * m2[3],
    m1[4] * m2[0] + m1[5] * m2[2] + m2[4],
    m1[4] * m2[1] + m1[5] * m2[3] + m2[5],
  ];
}

const apply = (m: Matrix, x: number, y: number): Point => ({
  x: x * m[0] + y * m[2] + m[4],
  y: x * m[1] + y * m[3] + m[5],
});

type Glyph = { unicode?: string; width?: number; isSpace?: boolean };
type FontInfo = { fontMatrix?: number[] };

type TextState = {
  ctm: Matrix;
  textMatrix: Matrix;
  lineMatrix: Matrix;
  fontSize: number;
  fontMatrix0: number;
  charSpacing: number;
  wordSpacing: number;
  hScale: number;
  leading: number;
  rise: number;
};

/** MuPDF's line builder: characters in, lines of text out. */
class StextLines {
  readonly lines: string[][] = [];
  private pen: Point | undefined;
  private direction: Point | undefined;
  private lastChar = '';

  constructor(private readonly mediaBox: [number, number, number, number]) {}

  add(chars: readonly string[], p: Point, q: Point, size: number, direction: Point): void {
    const [x0, y0, x1, y1] = this.mediaBox;
    const outside =
      Math.max(p.x, q.x) < x0 ||
      Math.min(p.x, q.x) > x1 ||
      p.y + size < y0 ||
      p.y - size * 0.3 > y1;
    const [first, ...rest] = chars;
    if (outside || first === undefined) return;
    let newLine = true;
    let addSpace = false;
    const current = this.lines[this.lines.length - 1];
    if (
      current !== undefined &&
      this.pen !== undefined &&
      this.direction !== undefined &&
      this.direction.x * direction.x + this.direction.y * direction.y >= 0.999
    ) {
      // Fake bold: the same character printed again where the last one ended.
      if (
        Math.abs(q.x - this.pen.x) < 1.1920929e-7 &&
        Math.abs(q.y - this.pen.y) < 1.1920929e-7 &&
        first === this.lastChar
      ) {
        return;
      }
      const dx = p.x - this.pen.x;
      const dy = p.y - this.pen.y;
      const spacing = direction.x * dx + direction.y * dy;
      const baseOffset = -direction.y * dx + direction.x * dy;
      if (Math.abs(baseOffset) < size * BASELINE_MAX_DIST) {
        if (Math.abs(spacing) < size * SPACE_DIST) newLine = false;
        else if (Math.abs(spacing) > size * SPACE_MAX_DIST) newLine = true;
        else if (spacing < 0) newLine = false;
        else {
          addSpace = this.lastChar !== ' ';
          newLine = false;
        }
      }
    }
    let line = current;
    if (newLine || line === undefined) {
      line = [];
      this.lines.push(line);
    }
    if (addSpace) line.push(' ');
    // A glyph mapped to several characters adds them all at one pen position.
    line.push(first, ...rest);
    this.lastChar = rest.length > 0 ? (rest[rest.length - 1] ?? first) : first;
    this.pen = q;
    this.direction = direction;
  }

  /** PyMuPDF's text output: each non-empty line followed by "\n" unless it already ends with one. */
  text(): string {
    return this.lines
      .map((chars) => {
        const last = chars[chars.length - 1];
        return last === undefined || last === '\n' ? chars.join('') : `${chars.join('')}\n`;
      })
      .join('');
  }
}

/** A matrix operand: pdf.js passes either six numbers or one array-like of six. */
function matrixOperand(args: readonly unknown[]): Matrix | undefined {
  const first = args[0];
  const values =
    first !== null && typeof first === 'object'
      ? Array.from(first as ArrayLike<number>, Number)
      : args.slice(0, 6).map(Number);
  return values.length === 6 && values.every(Number.isFinite) ? (values as Matrix) : undefined;
}

async function pageText(page: PDFPageProxy, OPS: PdfJs['OPS']): Promise<string> {
  const operators = await page.getOperatorList();
  const view = page.view;
  const lines = new StextLines([
    Math.min(view[0] ?? 0, view[2] ?? 0),
    Math.min(view[1] ?? 0, view[3] ?? 0),
    Math.max(view[0] ?? 0, view[2] ?? 0),
    Math.max(view[1] ?? 0, view[3] ?? 0),
  ]);
  let state: TextState = {
    ctm: IDENTITY,
    textMatrix: IDENTITY,
    lineMatrix: IDENTITY,
    fontSize: 0,
    fontMatrix0: 0.001,
    charSpacing: 0,
    wordSpacing: 0,
    hScale: 1,
    leading: 0,
    rise: 0,
  };
  const stack: TextState[] = [];
  const moveLine = (tx: number, ty: number): void => {
    state.lineMatrix = concat([1, 0, 0, 1, tx, ty], state.lineMatrix);
    state.textMatrix = state.lineMatrix;
  };
  const show = (glyphs: ReadonlyArray<Glyph | number | null>): void => {
    const { fontSize, fontMatrix0, hScale } = state;
    for (const glyph of glyphs) {
      if (glyph === null) continue;
      if (typeof glyph === 'number') {
        state.textMatrix = concat(
          [1, 0, 0, 1, (-glyph / 1000) * fontSize * hScale, 0],
          state.textMatrix,
        );
        continue;
      }
      const width = (glyph.width ?? 0) * fontMatrix0 * fontSize;
      const trm = concat(
        concat([fontSize * hScale, 0, 0, fontSize, 0, state.rise], state.textMatrix),
        state.ctm,
      );
      const p = apply(trm, 0, 0);
      const advance = (glyph.width ?? 0) * fontMatrix0;
      const direction = { x: trm[0], y: trm[1] };
      const q = { x: p.x + advance * direction.x, y: p.y + advance * direction.y };
      const length = Math.hypot(direction.x, direction.y) || 1;
      const size = Math.sqrt(Math.abs(trm[0] * trm[3] - trm[1] * trm[2]));
      lines.add(Array.from(glyph.unicode ?? ''), p, q, size, {
        x: direction.x / length,
        y: direction.y / length,
      });
      const spacing = state.charSpacing + (glyph.isSpace === true ? state.wordSpacing : 0);
      state.textMatrix = concat([1, 0, 0, 1, (width + spacing) * hScale, 0], state.textMatrix);
    }
  };
  const { fnArray, argsArray } = operators;
  for (let index = 0; index < fnArray.length; index += 1) {
    const args = (argsArray[index] ?? []) as unknown[];
    const number = (position: number): number => Number(args[position] ?? 0);
    switch (fnArray[index]) {
      case OPS.save:
        stack.push({ ...state });
        break;
      case OPS.restore:
        state = stack.pop() ?? state;
        break;
      case OPS.transform: {
        const matrix = matrixOperand(args);
        if (matrix !== undefined) state.ctm = concat(matrix, state.ctm);
        break;
      }
      case OPS.paintFormXObjectBegin: {
        stack.push({ ...state });
        const matrix = matrixOperand(args);
        if (matrix !== undefined) state.ctm = concat(matrix, state.ctm);
        break;
      }
      case OPS.paintFormXObjectEnd:
        state = stack.pop() ?? state;
        break;
      case OPS.beginText:
        state.textMatrix = IDENTITY;
        state.lineMatrix = IDENTITY;
        break;
      case OPS.setFont: {
        const font = page.commonObjs.has(String(args[0]))
          ? (page.commonObjs.get(String(args[0])) as FontInfo)
          : undefined;
        state.fontMatrix0 = font?.fontMatrix?.[0] ?? 0.001;
        state.fontSize = number(1);
        break;
      }
      case OPS.setCharSpacing:
        state.charSpacing = number(0);
        break;
      case OPS.setWordSpacing:
        state.wordSpacing = number(0);
        break;
      case OPS.setHScale:
        state.hScale = number(0) / 100;
        break;
      case OPS.setLeading:
        state.leading = number(0);
        break;
      case OPS.setTextRise:
        state.rise = number(0);
        break;
      case OPS.moveText:
        moveLine(number(0), number(1));
        break;
      case OPS.setLeadingMoveText:
        state.leading = -number(1);
        moveLine(number(0), number(1));
        break;
      case OPS.setTextMatrix:
        state.lineMatrix = matrixOperand(args) ?? IDENTITY;
        state.textMatrix = state.lineMatrix;
        break;
      case OPS.nextLine:
        moveLine(0, -state.leading);
        break;
      case OPS.showText:
      case OPS.showSpacedText:
        show((args[0] ?? []) as Array<Glyph | number | null>);
        break;
      case OPS.nextLineShowText:
        moveLine(0, -state.leading);
        show((args[0] ?? []) as Array<Glyph | number | null>);
        break;
      case OPS.nextLineSetSpacingShowText:
        state.wordSpacing = number(0);
        state.charSpacing = number(1);
        moveLine(0, -state.leading);
        show((args[2] ?? []) as Array<Glyph | number | null>);
        break;
      default:
        break;
    }
  }
  return lines.text();
}

/**
 * The concatenated `page.get_text()` of every page, as `compare_pdfs` builds it (before its strip).
 * Rejects when pdf.js cannot open the file (upstream's fitz.open raises; compare_pdfs catches it).
 */
export async function extractPdfText(bytes: Uint8Array): Promise<string> {
  const { getDocument, OPS } = await loadPdfJs();
  const document = await getDocument({
    data: bytes,
    verbosity: 0,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
  }).promise;
  try {
    let text = '';
    for (let number = 1; number <= document.numPages; number += 1) {
      text += await pageText(await document.getPage(number), OPS);
    }
    return text;
  } finally {
    await document.destroy();
  }
}
