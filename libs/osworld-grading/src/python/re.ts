// Python's `re` (3.11, str patterns) translated to a JavaScript RegExp with the `u` flag, so that a
// task's regex matches in the port exactly where it matched upstream.
//
// Translated: \w \d \s \b \B with Python's Unicode definitions (or ASCII under re.A); `.`, `^`, `$`,
// \A, \Z per Python (only \n is a line break; `$` also before a final \n); re.I/S/M/X/A/U/DEBUG and
// inline global flags (?aimsux); scoped (?s:…) (?m:…) (?x:…) (?a:…); named groups and (?P=name);
// Python's escapes (\x \u \U octal, any escaped non-letter); `{` that is not a repeat is a literal;
// {,n}; lookbehind must be fixed-width (as Python checks); Python's compile errors raised as re.error.
//
// Not supported (UnsupportedPythonFeature, never a silent difference): a scoped (?i:…)/(?-i:…) that
// changes case sensitivity, re.A together with re.I, conditionals (?(1)…|…), atomic groups (?>…),
// possessive quantifiers (*+ ++ ?+ {m,n}+), \N{NAME}, re.TEMPLATE.
import { pythonWhitespaceClass } from './builtins.js';
import { UnsupportedPythonFeature, PythonException } from './exceptions.js';
import { PyDict, pyTypeName, type PyValue } from './values.js';

/** Python's re flag values, by every name `getattr(re, name)` accepts. */
export const pyReFlags: Readonly<Record<string, number>> = {
  NOFLAG: 0,
  T: 1,
  TEMPLATE: 1,
  I: 2,
  IGNORECASE: 2,
  L: 4,
  LOCALE: 4,
  M: 8,
  MULTILINE: 8,
  S: 16,
  DOTALL: 16,
  U: 32,
  UNICODE: 32,
  X: 64,
  VERBOSE: 64,
  DEBUG: 128,
  A: 256,
  ASCII: 256,
};

const F = { T: 1, I: 2, L: 4, M: 8, S: 16, U: 32, X: 64, A: 256 } as const;
const inlineFlag: Readonly<Record<string, number>> = {
  a: F.A,
  i: F.I,
  L: F.L,
  m: F.M,
  s: F.S,
  u: F.U,
  x: F.X,
};

const MAXREPEAT = 4294967295;
const verboseWhitespace = new Set([' ', '\t', '\n', '\r', '\v', '\f']);
const asciiLetters = /^[A-Za-z]$/;
const digits = /^[0-9]$/;
const octDigits = /^[0-7]$/;
const hexDigits = /^[0-9a-fA-F]$/;

const anyChar = '[\\s\\S]';
const atStart = '(?<![\\s\\S])';
const atEnd = '(?![\\s\\S])';

/** Class bodies (the text between [ and ]) of Python's categories. */
function categoryBody(name: 'd' | 's' | 'w', ascii: boolean): string {
  if (name === 'd') return ascii ? '0-9' : '\\p{Nd}';
  if (name === 'w') return ascii ? 'A-Za-z0-9_' : '\\p{L}\\p{N}_';
  return ascii ? '\\t\\n\\v\\f\\r ' : pythonWhitespaceClass;
}

const literal = (code: number): string => `\\u{${code.toString(16)}}`;

interface Width {
  readonly min: number;
  readonly max: number;
}
const add = (a: Width, b: Width): Width => ({
  min: Math.min(a.min + b.min, MAXREPEAT),
  max: Math.min(a.max + b.max, MAXREPEAT),
});

/** One translated item: its JS source, its width (for lookbehind) and whether a repeat may follow. */
interface Item {
  readonly js: string;
  readonly width: Width;
  readonly kind: 'atom' | 'anchor' | 'repeat' | 'assert' | 'group';
}

class ReError extends PythonException {
  constructor(message: string, pattern: string, position: number) {
    const before = [...pattern].slice(0, position).join('');
    const where = pattern.includes('\n')
      ? ` (line ${before.split('\n').length}, column ${position - (before.lastIndexOf('\n') + 1) + 1})`
      : '';
    super('error', `${message} at position ${position}${where}`);
  }
}

/** Thrown when (?x) turns verbose mode on inside the pattern: Python parses it again from the start. */
class RestartVerbose {}

class Translator {
  private readonly chars: string[];
  private pos = 0;
  /** Python's state.groups: the number of groups opened so far, plus one. */
  private groups = 1;
  private readonly groupNames = new Map<string, number>();
  private readonly groupWidths: Array<Width | undefined> = [undefined];
  private readonly openGroups = new Set<number>();
  private lookbehindGroups: number | undefined;
  globalFlags: number;

  constructor(
    private readonly pattern: string,
    flags: number,
  ) {
    this.chars = [...pattern];
    this.globalFlags = flags;
  }

  private error(message: string, position: number): never {
    throw new ReError(message, this.pattern, position);
  }

  private peek(offset = 0): string | undefined {
    return this.chars[this.pos + offset];
  }

  /** Python's tokenizer: a backslash and the character after it are one token. */
  private nextToken(): string | undefined {
    const char = this.chars[this.pos];
    if (char === undefined) return undefined;
    if (char !== '\\') {
      this.pos++;
      return char;
    }
    const escaped = this.chars[this.pos + 1];
    if (escaped === undefined) this.error('bad escape (end of pattern)', this.chars.length - 1);
    this.pos += 2;
    return `\\${escaped}`;
  }

  private peekToken(): string | undefined {
    const saved = this.pos;
    try {
      return this.nextToken();
    } finally {
      this.pos = saved;
    }
  }

  private match(token: string): boolean {
    if (this.peekToken() !== token) return false;
    this.nextToken();
    return true;
  }

  private takeWhile(max: number, allowed: RegExp): string {
    let out = '';
    while (out.length < max && this.peek() !== undefined && allowed.test(this.peek() as string)) {
      out += this.chars[this.pos++];
    }
    return out;
  }

  translate(): string {
    const body = this.parseAlternation(this.globalFlags, 0);
    if (this.peek() !== undefined) this.error('unbalanced parenthesis', this.pos);
    const flags = this.globalFlags;
    if (flags & F.L)
      throw new PythonException('ValueError', 'cannot use LOCALE flag with a str pattern');
    if (flags & F.A && flags & F.U) {
      throw new PythonException('ValueError', 'ASCII and UNICODE flags are incompatible');
    }
    if (flags & F.T) throw new UnsupportedPythonFeature('re.TEMPLATE');
    if (flags & F.A && flags & F.I)
      throw new UnsupportedPythonFeature('re.ASCII with re.IGNORECASE');
    return body.js;
  }

  private parseAlternation(flags: number, nested: number): Item {
    const branches: Item[] = [];
    for (;;) {
      branches.push(this.parseSequence(flags, nested, nested === 0 && branches.length === 0));
      if (!this.match('|')) break;
    }
    if (branches.length === 1) return branches[0] as Item;
    return {
      js: branches.map((branch) => branch.js).join('|'),
      width: {
        min: Math.min(...branches.map((branch) => branch.width.min)),
        max: Math.max(...branches.map((branch) => branch.width.max)),
      },
      kind: 'atom',
    };
  }

  private parseSequence(flags: number, nested: number, first: boolean): Item {
    const items: Item[] = [];
    for (;;) {
      const start = this.pos;
      const token = this.peekToken();
      if (token === undefined || token === '|' || token === ')') break;
      this.nextToken();
      if (flags & F.X) {
        if (verboseWhitespace.has(token)) continue;
        if (token === '#') {
          while (this.peek() !== undefined && this.peek() !== '\n') this.pos++;
          continue;
        }
      }
      if (token.startsWith('\\')) {
        items.push(this.escape(token, flags, start));
      } else if (token === '[') {
        items.push(this.characterClass(flags, start));
      } else if (token === '*' || token === '+' || token === '?' || token === '{') {
        const repeated = this.repeat(token, items, start);
        if (repeated !== undefined) items[items.length - 1] = repeated;
        else items.push({ js: literal(0x7b), width: { min: 1, max: 1 }, kind: 'atom' });
      } else if (token === '.') {
        items.push({
          js: flags & F.S ? anyChar : '[^\\n]',
          width: { min: 1, max: 1 },
          kind: 'atom',
        });
      } else if (token === '^') {
        items.push({
          js: flags & F.M ? `(?:${atStart}|(?<=\\n))` : atStart,
          width: { min: 0, max: 0 },
          kind: 'anchor',
        });
      } else if (token === '$') {
        items.push({
          js: flags & F.M ? `(?=\\n|${atEnd})` : `(?=\\n?${atEnd})`,
          width: { min: 0, max: 0 },
          kind: 'anchor',
        });
      } else if (token === '(') {
        const group = this.group(flags, nested, first && items.length === 0, start);
        // Global flags (only legal before anything else) apply to the rest of the pattern.
        if (group === 'flags') flags |= this.globalFlags;
        else if (group !== 'comment') items.push(group);
      } else {
        items.push({
          js: literal(token.codePointAt(0) as number),
          width: { min: 1, max: 1 },
          kind: 'atom',
        });
      }
    }
    return {
      js: items.map((item) => item.js).join(''),
      width: items.reduce((sum, item) => add(sum, item.width), { min: 0, max: 0 }),
      kind: 'atom',
    };
  }

  /** A quantifier after the last item; undefined when `{` turns out to be a literal. */
  private repeat(token: string, items: Item[], start: number): Item | undefined {
    let min: number;
    let max: number;
    let text: string;
    if (token === '{') {
      if (this.peek() === '}') return undefined;
      const lo = this.takeWhile(Infinity, digits);
      let hi = lo;
      if (this.peek() === ',') {
        this.pos++;
        hi = this.takeWhile(Infinity, digits);
      }
      if (this.peek() !== '}') {
        this.pos = start + 1;
        return undefined;
      }
      this.pos++;
      min = lo === '' ? 0 : Number(lo);
      max = hi === '' ? MAXREPEAT : Number(hi);
      if (min >= MAXREPEAT || (hi !== '' && max >= MAXREPEAT)) {
        throw new PythonException('OverflowError', 'the repetition number is too large');
      }
      if (max < min) this.error('min repeat greater than max repeat', start + 1);
      text = max === MAXREPEAT ? `{${min},}` : `{${min},${max}}`;
    } else {
      [min, max] = token === '*' ? [0, MAXREPEAT] : token === '+' ? [1, MAXREPEAT] : [0, 1];
      text = token;
    }
    const item = items[items.length - 1];
    if (item === undefined || item.kind === 'anchor') this.error('nothing to repeat', start);
    if (item.kind === 'repeat') this.error('multiple repeat', start);
    if (this.peek() === '?') {
      this.pos++;
      text += '?';
    } else if (this.peek() === '+') {
      throw new UnsupportedPythonFeature('possessive quantifier');
    }
    // JS refuses a quantifier on a lookaround; a non-capturing group around it is the same pattern.
    return {
      js: `(?:${item.js})${text}`,
      width: {
        min: Math.min(item.width.min * min, MAXREPEAT),
        max: Math.min(item.width.max * max, MAXREPEAT),
      },
      kind: 'repeat',
    };
  }

  private escape(token: string, flags: number, start: number): Item {
    const ascii = (flags & F.A) !== 0;
    const code = token[1] as string;
    const one = { min: 1, max: 1 };
    const zero = { min: 0, max: 0 };
    switch (code) {
      case 'A':
        return { js: atStart, width: zero, kind: 'anchor' };
      case 'Z':
        return { js: atEnd, width: zero, kind: 'anchor' };
      case 'b':
      case 'B': {
        const word = `[${categoryBody('w', ascii)}]`;
        const boundary = `(?:(?<=${word})(?!${word})|(?<!${word})(?=${word}))`;
        // Python's \B never matches in an empty string.
        const inside = `(?:(?<=${word})(?=${word})|(?<!${word})(?!${word}))`;
        return {
          js: code === 'b' ? boundary : `(?:(?<=${anyChar})|(?=${anyChar}))${inside}`,
          width: zero,
          kind: 'anchor',
        };
      }
      case 'd':
      case 's':
      case 'w':
        return { js: `[${categoryBody(code, ascii)}]`, width: one, kind: 'atom' };
      case 'D':
      case 'S':
      case 'W':
        return {
          js: `[^${categoryBody(code.toLowerCase() as 'd' | 's' | 'w', ascii)}]`,
          width: one,
          kind: 'atom',
        };
    }
    const simple = this.simpleEscape(token, start, false);
    if (simple !== undefined) return { js: literal(simple), width: one, kind: 'atom' };
    // A decimal escape that is not octal: a group reference.
    let number = code;
    if (this.peek() !== undefined && digits.test(this.peek() as string)) {
      number += this.chars[this.pos++];
    }
    const group = Number(number);
    if (group < this.groups) {
      if (this.openGroups.has(group)) this.error('cannot refer to an open group', start);
      this.checkLookbehindGroup(group, start);
      return { js: `\\${group}`, width: this.groupWidths[group] ?? one, kind: 'atom' };
    }
    return this.error(`invalid group reference ${group}`, start + 1);
  }

  /**
   * The code point of an escape that stands for one character, in or out of a class; undefined for
   * a decimal escape outside a class (a group reference, handled by the caller).
   */
  private simpleEscape(token: string, start: number, inClass: boolean): number | undefined {
    const code = token[1] as string;
    const simple: Readonly<Record<string, number>> = {
      a: 7,
      f: 12,
      n: 10,
      r: 13,
      t: 9,
      v: 11,
      '\\': 92,
    };
    if (inClass && code === 'b') return 8;
    if (simple[code] !== undefined) return simple[code];
    if (code === 'x' || code === 'u' || code === 'U') {
      const length = code === 'x' ? 2 : code === 'u' ? 4 : 8;
      const hex = this.takeWhile(length, hexDigits);
      if (hex.length !== length) this.error(`incomplete escape ${token}${hex}`, start);
      const value = parseInt(hex, 16);
      if (value > 0x10ffff) this.error(`bad escape ${token}${hex}`, start);
      return value;
    }
    if (code === 'N') throw new UnsupportedPythonFeature('\\N{NAME} escape');
    if (inClass && octDigits.test(code)) {
      const value = parseInt(code + this.takeWhile(2, octDigits), 8);
      if (value > 0o377) this.error(`octal escape value outside of range 0-0o377`, start);
      return value;
    }
    if (code === '0') return parseInt(code + this.takeWhile(2, octDigits), 8);
    if (digits.test(code)) {
      if (inClass) this.error(`bad escape ${token}`, start);
      const second = this.peek();
      const third = this.peek(1);
      if (
        second !== undefined &&
        third !== undefined &&
        octDigits.test(code) &&
        octDigits.test(second) &&
        octDigits.test(third)
      ) {
        this.pos += 2;
        const value = parseInt(code + second + third, 8);
        if (value > 0o377)
          this.error(
            `octal escape value \\${code}${second}${third} outside of range 0-0o377`,
            start,
          );
        return value;
      }
      return undefined;
    }
    if (asciiLetters.test(code)) this.error(`bad escape ${token}`, start);
    return code.codePointAt(0) as number;
  }

  private characterClass(flags: number, start: number): Item {
    const ascii = (flags & F.A) !== 0;
    const negate = this.peek() === '^';
    if (negate) this.pos++;
    const parts: string[] = [];
    const negatedCategories: string[] = [];
    let count = 0;
    type Member = { code: number } | { category: string; negated: boolean };
    const member = (token: string): Member => {
      if (!token.startsWith('\\')) return { code: token.codePointAt(0) as number };
      const code = token[1] as string;
      if ('dswDSW'.includes(code)) {
        return {
          category: categoryBody(code.toLowerCase() as 'd' | 's' | 'w', ascii),
          negated: code !== code.toLowerCase(),
        };
      }
      return { code: this.simpleEscape(token, this.pos - 2, true) as number };
    };
    const addMember = (item: Member): void => {
      count++;
      if ('code' in item) parts.push(literal(item.code));
      else if (item.negated) negatedCategories.push(item.category);
      else parts.push(item.category);
    };
    for (;;) {
      const token = this.nextToken();
      if (token === undefined) this.error('unterminated character set', start);
      if (token === ']' && count > 0) break;
      const first = member(token);
      if (this.peek() === '-') {
        this.pos++;
        const second = this.nextToken();
        if (second === undefined) this.error('unterminated character set', start);
        if (second === ']') {
          addMember(first);
          addMember({ code: 0x2d });
          break;
        }
        const last = member(second);
        if (!('code' in first) || !('code' in last) || last.code < first.code) {
          this.error(`bad character range ${token}-${second}`, start);
        }
        count++;
        parts.push(`${literal(first.code)}-${literal(last.code)}`);
        continue;
      }
      addMember(first);
    }
    const alternatives = [
      ...(parts.length > 0 ? [`[${parts.join('')}]`] : []),
      ...negatedCategories.map((body) => `[^${body}]`),
    ];
    let js: string;
    if (negatedCategories.length === 0) js = `[${negate ? '^' : ''}${parts.join('')}]`;
    else if (negate) js = `(?:(?!${alternatives.join('|')})${anyChar})`;
    else js = `(?:${alternatives.join('|')})`;
    return { js, width: { min: 1, max: 1 }, kind: 'atom' };
  }

  /** Reads `aimsux-imsx` flag letters; Python's rules on which may be combined or turned off. */
  private parseFlags(start: number): { add: number; remove: number; scoped: boolean } {
    let add = 0;
    let remove = 0;
    let char = this.peek();
    while (char !== undefined && inlineFlag[char] !== undefined) {
      const flag = inlineFlag[char] as number;
      if (flag === F.L)
        this.error("bad inline flags: cannot use 'L' flag with a str pattern", this.pos);
      add |= flag;
      this.pos++;
      char = this.peek();
    }
    if ((add & F.A) !== 0 && (add & F.U) !== 0) {
      this.error("bad inline flags: flags 'a', 'u' and 'L' are incompatible", this.pos);
    }
    if (char === '-') {
      this.pos++;
      char = this.peek();
      if (char === undefined) this.error('missing flag', this.pos);
      if (inlineFlag[char] === undefined) {
        this.error(asciiLetters.test(char) ? 'unknown flag' : 'missing flag', this.pos);
      }
      while (char !== undefined && inlineFlag[char] !== undefined) {
        const flag = inlineFlag[char] as number;
        if (flag === F.A || flag === F.U || flag === F.L) {
          this.error("bad inline flags: cannot turn off flags 'a', 'u' and 'L'", this.pos);
        }
        remove |= flag;
        this.pos++;
        char = this.peek();
      }
    }
    if (char === ')' && remove === 0) {
      this.pos++;
      return { add, remove, scoped: false };
    }
    if (char === ':') {
      this.pos++;
      if (add & remove) {
        this.error('bad inline flags: flag turned on and off', this.pos);
      }
      return { add, remove, scoped: true };
    }
    if (char === undefined) this.error('missing -, : or )', this.pos);
    return this.error(
      asciiLetters.test(char) ? 'unknown flag' : char === ')' ? 'missing :' : 'missing -, : or )',
      start,
    );
  }

  private checkLookbehindGroup(group: number, start: number): void {
    if (this.lookbehindGroups === undefined) return;
    if (this.openGroups.has(group)) this.error('cannot refer to an open group', start);
    if (group >= this.lookbehindGroups) {
      this.error('cannot refer to group defined in the same lookbehind subpattern', start);
    }
  }

  private groupName(terminator: string, start: number): string {
    let name = '';
    for (;;) {
      const char = this.chars[this.pos++];
      if (char === undefined) this.error('missing group name', start);
      if (char === terminator) break;
      name += char;
    }
    if (name === '') this.error('missing group name', start);
    if (!/^[\p{ID_Start}_][\p{ID_Continue}]*$/u.test(name)) {
      this.error(`bad character in group name ${JSON.stringify(name).replace(/"/g, "'")}`, start);
    }
    return name;
  }

  private group(
    flags: number,
    nested: number,
    first: boolean,
    start: number,
  ): Item | 'flags' | 'comment' {
    let capture: number | undefined;
    let innerFlags = flags;
    let wrap: (inner: string) => string = (inner) => `(?:${inner})`;
    let lookbehind = false;
    let kind: Item['kind'] = 'group';
    if (this.peek() === '?') {
      this.pos++;
      const char = this.chars[this.pos++];
      if (char === undefined) this.error('unexpected end of pattern', this.pos);
      if (char === 'P') {
        const next = this.chars[this.pos++];
        if (next === '<') {
          const name = this.groupName('>', start);
          if (this.groupNames.has(name)) this.error(`redefinition of group name '${name}'`, start);
          capture = this.groups;
          this.groupNames.set(name, capture);
        } else if (next === '=') {
          const name = this.groupName(')', start);
          const group = this.groupNames.get(name);
          if (group === undefined) this.error(`unknown group name '${name}'`, start);
          if (this.openGroups.has(group)) this.error('cannot refer to an open group', start);
          this.checkLookbehindGroup(group, start);
          return {
            js: `\\${group}`,
            width: this.groupWidths[group] ?? { min: 0, max: 0 },
            kind: 'atom',
          };
        } else {
          this.error(
            next === undefined ? 'unexpected end of pattern' : `unknown extension ?P${next}`,
            start,
          );
        }
      } else if (char === ':') {
        // non-capturing
      } else if (char === '#') {
        for (;;) {
          const next = this.chars[this.pos++];
          if (next === undefined) this.error('missing ), unterminated comment', start);
          if (next === ')') return 'comment';
        }
      } else if (char === '=' || char === '!') {
        wrap = (inner) => `(?${char}${inner})`;
        kind = 'assert';
      } else if (char === '<') {
        const next = this.chars[this.pos++];
        if (next !== '=' && next !== '!') {
          if (next === undefined) this.error('unexpected end of pattern', this.pos);
          this.error(`unknown extension ?<${next}`, start);
        }
        wrap = (inner) => `(?<${next}${inner})`;
        lookbehind = true;
        kind = 'assert';
      } else if (char === '(') {
        throw new UnsupportedPythonFeature('conditional group (?(…)…|…)');
      } else if (char === '>') {
        throw new UnsupportedPythonFeature('atomic group (?>…)');
      } else if (inlineFlag[char] !== undefined || char === '-') {
        this.pos--;
        const parsed = this.parseFlags(start);
        if (!parsed.scoped) {
          if (!first) this.error('global flags not at the start of the expression', start);
          const before = this.globalFlags;
          this.globalFlags |= parsed.add;
          if (this.globalFlags & F.X && !(before & F.X)) throw new RestartVerbose();
          return 'flags';
        }
        if (((parsed.add | parsed.remove) & F.I) !== 0) {
          const wantsCase = ((flags | parsed.add) & ~parsed.remove & F.I) !== 0;
          if (wantsCase !== ((this.globalFlags & F.I) !== 0)) {
            throw new UnsupportedPythonFeature('scoped (?i:…) that changes case sensitivity');
          }
        }
        innerFlags = (flags | parsed.add) & ~parsed.remove;
        if (parsed.add & F.A) innerFlags &= ~F.U;
        if (parsed.add & F.U) innerFlags &= ~F.A;
      } else {
        this.error(`unknown extension ?${char}`, start);
      }
    } else {
      capture = this.groups;
    }
    if (capture !== undefined) {
      this.groups++;
      this.openGroups.add(capture);
      wrap = (inner) => `(${inner})`;
    }
    const savedLookbehind = this.lookbehindGroups;
    if (lookbehind && this.lookbehindGroups === undefined) this.lookbehindGroups = this.groups;
    const inner = this.parseAlternation(innerFlags, nested + 1);
    this.lookbehindGroups = savedLookbehind;
    if (this.peek() !== ')') this.error('missing ), unterminated subpattern', start);
    this.pos++;
    if (capture !== undefined) {
      this.openGroups.delete(capture);
      this.groupWidths[capture] = inner.width;
    }
    if (lookbehind && inner.width.min !== inner.width.max) {
      this.error('look-behind requires fixed-width pattern', start);
    }
    return {
      js: wrap(inner.js),
      width: kind === 'assert' ? { min: 0, max: 0 } : inner.width,
      kind,
    };
  }
}

/** A compiled Python pattern. */
export class PyPattern {
  private constructor(
    readonly source: string,
    private readonly regex: RegExp,
    private readonly sticky: RegExp,
    private readonly global: RegExp,
  ) {}

  static compile(pattern: string, flags: number): PyPattern {
    let translator = new Translator(pattern, flags);
    let js: string;
    try {
      js = translator.translate();
    } catch (error) {
      if (!(error instanceof RestartVerbose)) throw error;
      translator = new Translator(pattern, translator.globalFlags | F.X);
      js = translator.translate();
    }
    const jsFlags = translator.globalFlags & F.I ? 'iu' : 'u';
    return new PyPattern(
      js,
      new RegExp(js, jsFlags),
      new RegExp(js, `${jsFlags}y`),
      new RegExp(js, `${jsFlags}g`),
    );
  }

  /** `pattern.search(text)`: the match (groups by Python's numbers) or null. */
  search(text: string): RegExpExecArray | null {
    this.regex.lastIndex = 0;
    return this.regex.exec(text);
  }

  /** `pattern.match(text)`: anchored at the start. */
  match(text: string): RegExpExecArray | null {
    this.sticky.lastIndex = 0;
    return this.sticky.exec(text);
  }

  /** `pattern.sub(replacement, text)` for a replacement without backslashes (no template to expand). */
  sub(replacement: string, text: string): string {
    if (replacement.includes('\\')) {
      throw new UnsupportedPythonFeature('re.sub with a backslash in the replacement');
    }
    return text.replace(this.global, () => replacement);
  }

  /** `pattern.findall(text)`: whole matches, the group, or the groups' list (unmatched = ''). */
  findall(text: string): Array<string | string[]> {
    return [...text.matchAll(this.global)].map((found) => {
      if (found.length === 1) return found[0];
      const groups = found.slice(1).map((group) => group ?? '');
      return groups.length === 1 ? (groups[0] as string) : groups;
    });
  }
}

/** `re.compile(pattern, flags)` for a str pattern: re.error, ValueError or unsupported. */
export function pyReCompile(pattern: string, flags = 0): PyPattern {
  return PyPattern.compile(pattern, flags);
}

/** `re.compile(value, flags)` for any value: a list or dict is unhashable (re's cache), others no pattern. */
export function pyReCompileValue(pattern: PyValue, flags = 0): PyPattern {
  if (Array.isArray(pattern) || pattern instanceof PyDict) {
    throw new PythonException('TypeError', `unhashable type: '${pyTypeName(pattern)}'`);
  }
  if (typeof pattern !== 'string') {
    throw new PythonException('TypeError', 'first argument must be string or compiled pattern');
  }
  return pyReCompile(pattern, flags);
}
