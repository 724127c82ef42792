// Lucene 8's StandardTokenizer: Unicode UAX#29 word boundaries, keeping only words that contain
// letters, digits, ideographs, kana, South-East Asian script runs or emoji. Tokens are at most
// MAX_TOKEN_LENGTH UTF-16 code units; a longer word is cut, as Lucene's bounded scanner buffer does.

export const MAX_TOKEN_LENGTH = 255;

const enum WordBreak {
  Other = 0,
  ALetter,
  HebrewLetter,
  Numeric,
  Katakana,
  ExtendNumLet,
  MidLetter,
  MidNum,
  MidNumLet,
  SingleQuote,
  DoubleQuote,
  /** Extend and Format: absorbed by the preceding character (UAX#29 WB4). */
  Extend,
  ZeroWidthJoiner,
  Han,
  Hiragana,
  SouthEastAsian,
  Emoji,
  RegionalIndicator,
  /** '#' and '*', which form an emoji only as a keycap sequence. */
  KeycapBase,
}

const ZWJ = 0x200d;
const VARIATION_SELECTOR_16 = 0xfe0f;
const COMBINING_KEYCAP = 0x20e3;

// Extended_Pictographic as Lucene 8's grammar knew it (Unicode emoji data 11-13); today's
// JavaScript engines carry a later, smaller table that no longer holds e.g. U+2605 '★'.
const EXTENDED_PICTOGRAPHIC_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x00a9, 0x00a9],
  [0x00ae, 0x00ae],
  [0x203c, 0x203c],
  [0x2049, 0x2049],
  [0x2122, 0x2122],
  [0x2139, 0x2139],
  [0x2194, 0x2199],
  [0x21a9, 0x21aa],
  [0x231a, 0x231b],
  [0x2328, 0x2328],
  [0x2388, 0x2388],
  [0x23cf, 0x23cf],
  [0x23e9, 0x23f3],
  [0x23f8, 0x23fa],
  [0x24c2, 0x24c2],
  [0x25aa, 0x25ab],
  [0x25b6, 0x25b6],
  [0x25c0, 0x25c0],
  [0x25fb, 0x25fe],
  [0x2600, 0x2605],
  [0x2607, 0x2612],
  [0x2614, 0x2685],
  [0x2690, 0x2705],
  [0x2708, 0x2712],
  [0x2714, 0x2714],
  [0x2716, 0x2716],
  [0x271d, 0x271d],
  [0x2721, 0x2721],
  [0x2728, 0x2728],
  [0x2733, 0x2734],
  [0x2744, 0x2744],
  [0x2747, 0x2747],
  [0x274c, 0x274c],
  [0x274e, 0x274e],
  [0x2753, 0x2755],
  [0x2757, 0x2757],
  [0x2763, 0x2767],
  [0x2795, 0x2797],
  [0x27a1, 0x27a1],
  [0x27b0, 0x27b0],
  [0x27bf, 0x27bf],
  [0x2934, 0x2935],
  [0x2b05, 0x2b07],
  [0x2b1b, 0x2b1c],
  [0x2b50, 0x2b50],
  [0x2b55, 0x2b55],
  [0x3030, 0x3030],
  [0x303d, 0x303d],
  [0x3297, 0x3297],
  [0x3299, 0x3299],
  [0x1f000, 0x1f0ff],
  [0x1f10d, 0x1f10f],
  [0x1f12f, 0x1f12f],
  [0x1f16c, 0x1f171],
  [0x1f17e, 0x1f17f],
  [0x1f18e, 0x1f18e],
  [0x1f191, 0x1f19a],
  [0x1f1ad, 0x1f1e5],
  [0x1f201, 0x1f20f],
  [0x1f21a, 0x1f21a],
  [0x1f22f, 0x1f22f],
  [0x1f232, 0x1f23a],
  [0x1f23c, 0x1f23f],
  [0x1f249, 0x1f3fa],
  [0x1f400, 0x1f53d],
  [0x1f546, 0x1f64f],
  [0x1f680, 0x1f6ff],
  [0x1f774, 0x1f77f],
  [0x1f7d5, 0x1f7ff],
  [0x1f80c, 0x1f80f],
  [0x1f848, 0x1f84f],
  [0x1f85a, 0x1f85f],
  [0x1f888, 0x1f88f],
  [0x1f8ae, 0x1f8ff],
  [0x1f90c, 0x1f93a],
  [0x1f93c, 0x1f945],
  [0x1f947, 0x1faff],
  [0x1fc00, 0x1fffd],
];

const MID_LETTER = new Set([0x3a, 0xb7, 0x387, 0x5f4, 0x2027, 0xfe13, 0xfe55, 0xff1a]);
const MID_NUM_LET = new Set([0x2e, 0x2018, 0x2019, 0x2024, 0xfe52, 0xff07, 0xff0e]);
const MID_NUM = new Set([
  0x2c, 0x3b, 0x37e, 0x589, 0x60c, 0x60d, 0x66c, 0x7f8, 0x2044, 0xfe10, 0xfe14, 0xfe50, 0xfe54,
  0xff0c, 0xff1b,
]);
const KATAKANA_EXTRA = new Set([
  0x3031, 0x3032, 0x3033, 0x3034, 0x3035, 0x309b, 0x309c, 0x30a0, 0x30fc, 0xff70,
]);
// Characters that are ALetter for word breaking without being Alphabetic.
const ALETTER_EXTRA: ReadonlyArray<readonly [number, number]> = [
  [0x02c2, 0x02c5],
  [0x02d2, 0x02d7],
  [0x02de, 0x02df],
  [0x02e5, 0x02eb],
  [0x02ed, 0x02ed],
  [0x02ef, 0x02ff],
  [0x055a, 0x055c],
  [0x055e, 0x055e],
  [0x058a, 0x058a],
  [0x05f3, 0x05f3],
  [0xa708, 0xa716],
  [0xa720, 0xa721],
  [0xa789, 0xa78a],
  [0xab5b, 0xab5b],
];
// Prepend characters are Cf but not Format for word breaking.
const PREPEND_FORMAT = new Set([
  0x600, 0x601, 0x602, 0x603, 0x604, 0x605, 0x6dd, 0x70f, 0x8e2, 0x110bd, 0x110cd,
]);

const IS_GRAPHEME_EXTEND_OR_SPACING_MARK = /^[\p{Grapheme_Extend}\p{Mc}]$/u;
const IS_FORMAT = /^\p{Cf}$/u;
const IS_CONNECTOR_PUNCTUATION = /^\p{Pc}$/u;
const IS_DECIMAL_DIGIT = /^\p{Nd}$/u;
const IS_KATAKANA = /^\p{Script=Katakana}$/u;
const IS_HAN = /^\p{Script=Han}$/u;
const IS_HIRAGANA = /^\p{Script=Hiragana}$/u;
const IS_SOUTH_EAST_ASIAN =
  /^[\p{Script=Thai}\p{Script=Lao}\p{Script=Myanmar}\p{Script=Khmer}\p{Script=Tai_Le}\p{Script=New_Tai_Lue}\p{Script=Tai_Tham}\p{Script=Tai_Viet}\p{Script=Ahom}]$/u;
const IS_SOUTH_EAST_ASIAN_WORD_PART = /^[\p{L}\p{M}]$/u;
const IS_HEBREW = /^\p{Script=Hebrew}$/u;
const IS_OTHER_LETTER = /^\p{Lo}$/u;
const IS_ALPHABETIC = /^\p{Alphabetic}$/u;
const IS_IDEOGRAPHIC = /^\p{Ideographic}$/u;

function inRanges(cp: number, ranges: ReadonlyArray<readonly [number, number]>): boolean {
  for (const [lo, hi] of ranges) {
    if (cp < lo) return false;
    if (cp <= hi) return true;
  }
  return false;
}

function computeWordBreak(cp: number): WordBreak {
  if (cp === ZWJ) return WordBreak.ZeroWidthJoiner;
  if (cp >= 0x1f1e6 && cp <= 0x1f1ff) return WordBreak.RegionalIndicator;
  if (inRanges(cp, EXTENDED_PICTOGRAPHIC_RANGES)) return WordBreak.Emoji;
  if (cp >= 0x1f3fb && cp <= 0x1f3ff) return WordBreak.Extend;
  if (MID_LETTER.has(cp)) return WordBreak.MidLetter;
  if (MID_NUM_LET.has(cp)) return WordBreak.MidNumLet;
  if (MID_NUM.has(cp)) return WordBreak.MidNum;
  if (cp === 0x27) return WordBreak.SingleQuote;
  if (cp === 0x22) return WordBreak.DoubleQuote;
  if (cp === 0x23 || cp === 0x2a) return WordBreak.KeycapBase;
  const ch = String.fromCodePoint(cp);
  if (IS_GRAPHEME_EXTEND_OR_SPACING_MARK.test(ch)) return WordBreak.Extend;
  if (IS_FORMAT.test(ch)) {
    return cp === 0x200b || PREPEND_FORMAT.has(cp) ? WordBreak.Other : WordBreak.Extend;
  }
  if (cp === 0x202f || IS_CONNECTOR_PUNCTUATION.test(ch)) return WordBreak.ExtendNumLet;
  if (cp === 0x66b || IS_DECIMAL_DIGIT.test(ch)) return WordBreak.Numeric;
  if (KATAKANA_EXTRA.has(cp) || IS_KATAKANA.test(ch)) return WordBreak.Katakana;
  if (IS_HAN.test(ch)) return WordBreak.Han;
  if (IS_HIRAGANA.test(ch)) return WordBreak.Hiragana;
  if (IS_SOUTH_EAST_ASIAN.test(ch)) {
    return IS_SOUTH_EAST_ASIAN_WORD_PART.test(ch) ? WordBreak.SouthEastAsian : WordBreak.Other;
  }
  if (IS_HEBREW.test(ch) && IS_OTHER_LETTER.test(ch)) return WordBreak.HebrewLetter;
  if ((IS_ALPHABETIC.test(ch) && !IS_IDEOGRAPHIC.test(ch)) || inRanges(cp, ALETTER_EXTRA)) {
    return WordBreak.ALetter;
  }
  return WordBreak.Other;
}

// Word-break class + 1 per code point, 0 while not yet computed.
const wordBreakCache = new Uint8Array(0x110000);
for (let cp = 0; cp < 0x80; cp++) wordBreakCache[cp] = computeWordBreak(cp) + 1;

// ASCII letters and digits, the ASCII characters that never continue a word after them, and the
// ASCII middle characters ('.', ',', ':', ';', apostrophe), which continue it only before a letter or
// digit. A run of letters and digits ended by a stop, or by a middle character and then anything
// but a letter, digit or non-ASCII character, is a whole token with no rule to consult.
const ASCII_ALPHANUMERIC = new Uint8Array(0x80);
const ASCII_WORD_STOP = new Uint8Array(0x80);
const ASCII_MIDDLE = new Uint8Array(0x80);
for (let cp = 0; cp < 0x80; cp++) {
  const cls = computeWordBreak(cp);
  ASCII_ALPHANUMERIC[cp] = cls === WordBreak.ALetter || cls === WordBreak.Numeric ? 1 : 0;
  ASCII_WORD_STOP[cp] =
    cls === WordBreak.Other || cls === WordBreak.KeycapBase || cls === WordBreak.DoubleQuote
      ? 1
      : 0;
  ASCII_MIDDLE[cp] =
    cls === WordBreak.MidLetter ||
    cls === WordBreak.MidNum ||
    cls === WordBreak.MidNumLet ||
    cls === WordBreak.SingleQuote
      ? 1
      : 0;
}

function endsAsciiWord(text: string, at: number): boolean {
  if (at >= text.length) return true;
  const code = text.charCodeAt(at);
  if (code >= 0x80) return false;
  if (ASCII_WORD_STOP[code] === 1) return true;
  if (ASCII_MIDDLE[code] !== 1) return false;
  if (at + 1 >= text.length) return true;
  const after = text.charCodeAt(at + 1);
  return after < 0x80 && ASCII_ALPHANUMERIC[after] === 0;
}

function wordBreakOf(cp: number): WordBreak {
  const cached = wordBreakCache[cp] ?? 0;
  if (cached !== 0) return cached - 1;
  const computed = computeWordBreak(cp);
  wordBreakCache[cp] = computed + 1;
  return computed;
}

const enum WordState {
  /** Only ExtendNumLet seen so far: not a word yet. */
  Lead,
  Letter,
  Hebrew,
  Number,
  Katakana,
  /** ExtendNumLet after a word core. */
  Connector,
  /** Hebrew letter followed by an apostrophe. */
  HebrewQuote,
}

/**
 * Splits text into Lucene StandardTokenizer tokens. The offsets of the last call are kept in
 * `starts` / `ends` (UTF-16 indices) to avoid allocating per token.
 */
export class StandardTokenizer {
  starts = new Int32Array(256);
  ends = new Int32Array(256);
  count = 0;
  private text = '';
  private limit = 0;
  /** Code point and class of the unit read by `readUnit`, and where it ends (after WB4). */
  private unitClass: WordBreak = WordBreak.Other;
  private unitEnd = 0;

  tokenize(text: string): number {
    this.text = text;
    this.count = 0;
    const length = text.length;
    let i = 0;
    while (i < length) {
      const code = text.charCodeAt(i);
      if (code < 0x80 && ASCII_ALPHANUMERIC[code] === 1) {
        let j = i + 1;
        while (j < length) {
          const next = text.charCodeAt(j);
          if (next >= 0x80 || ASCII_ALPHANUMERIC[next] === 0) break;
          j++;
        }
        if (j - i <= MAX_TOKEN_LENGTH && endsAsciiWord(text, j)) {
          this.push(i, j);
          i = j;
          continue;
        }
      }
      let cls: WordBreak;
      let width = 1;
      if (code < 0x80) {
        cls = (wordBreakCache[code] ?? 1) - 1;
      } else {
        const cp = text.codePointAt(i) ?? code;
        if (cp > 0xffff) width = 2;
        cls = wordBreakOf(cp);
      }
      if (
        cls === WordBreak.Other ||
        (cls >= WordBreak.MidLetter && cls <= WordBreak.ZeroWidthJoiner)
      ) {
        i += width;
        continue;
      }
      this.limit = Math.min(length, i + MAX_TOKEN_LENGTH);
      let end: number;
      switch (cls) {
        case WordBreak.Han:
        case WordBreak.Hiragana:
          end = this.skipExtend(i + width, false);
          break;
        case WordBreak.SouthEastAsian:
          end = this.matchSouthEastAsian(i);
          break;
        case WordBreak.Emoji:
        case WordBreak.RegionalIndicator:
        case WordBreak.KeycapBase:
          end = this.matchEmoji(i);
          break;
        default:
          end = this.matchWord(i);
      }
      if (end > i) {
        this.push(i, end);
        i = end;
      } else {
        i += width;
      }
    }
    return this.count;
  }

  private push(start: number, end: number): void {
    if (this.count === this.starts.length) {
      const starts = new Int32Array(this.count * 2);
      starts.set(this.starts);
      this.starts = starts;
      const ends = new Int32Array(this.count * 2);
      ends.set(this.ends);
      this.ends = ends;
    }
    this.starts[this.count] = start;
    this.ends[this.count] = end;
    this.count++;
  }

  private classAt(i: number): WordBreak {
    const code = this.text.charCodeAt(i);
    if (code < 0x80) return (wordBreakCache[code] ?? 1) - 1;
    return wordBreakOf(this.text.codePointAt(i) ?? code);
  }

  private widthAt(i: number): number {
    const code = this.text.charCodeAt(i);
    return code >= 0xd800 && code <= 0xdbff && i + 1 < this.text.length ? 2 : 1;
  }

  /** Skips Extend / Format characters from i, and ZWJ unless `stopAtJoiner`. */
  private skipExtend(i: number, stopAtJoiner: boolean): number {
    while (i < this.limit) {
      const cls = this.classAt(i);
      if (cls !== WordBreak.Extend && (stopAtJoiner || cls !== WordBreak.ZeroWidthJoiner)) break;
      const width = this.widthAt(i);
      if (i + width > this.limit) break;
      i += width;
    }
    return i;
  }

  /** Reads the character at i with its trailing Extend / Format / ZWJ; false past the limit. */
  private readUnit(i: number): boolean {
    if (i >= this.limit) return false;
    const width = this.widthAt(i);
    if (i + width > this.limit) return false;
    this.unitClass = this.classAt(i);
    this.unitEnd = this.skipExtend(i + width, false);
    return true;
  }

  private matchSouthEastAsian(start: number): number {
    let i = start;
    while (this.readUnit(i) && this.unitClass === WordBreak.SouthEastAsian) i = this.unitEnd;
    return i;
  }

  private matchWord(start: number): number {
    let state = WordState.Lead;
    let pos = start;
    let accepted = -1;
    while (this.readUnit(pos)) {
      const cls = this.unitClass;
      const next = this.unitEnd;
      let nextState: WordState | -1 = -1;
      let consumedTo = next;
      switch (cls) {
        case WordBreak.ALetter:
          if (state !== WordState.Katakana) nextState = WordState.Letter;
          break;
        case WordBreak.HebrewLetter:
          if (state !== WordState.Katakana) nextState = WordState.Hebrew;
          break;
        case WordBreak.Numeric:
          if (state !== WordState.Katakana) nextState = WordState.Number;
          break;
        case WordBreak.Katakana:
          if (
            state === WordState.Lead ||
            state === WordState.Katakana ||
            state === WordState.Connector
          ) {
            nextState = WordState.Katakana;
          }
          break;
        case WordBreak.ExtendNumLet:
          nextState = state === WordState.Lead ? WordState.Lead : WordState.Connector;
          break;
        case WordBreak.SingleQuote:
        case WordBreak.MidLetter:
        case WordBreak.MidNumLet:
        case WordBreak.MidNum:
        case WordBreak.DoubleQuote: {
          if (cls === WordBreak.SingleQuote && state === WordState.Hebrew) {
            nextState = WordState.HebrewQuote;
            break;
          }
          const joined = this.joinAcross(state, cls, next);
          if (joined !== -1) {
            nextState = joined;
            consumedTo = this.unitEnd;
          }
          break;
        }
        default:
          break;
      }
      if (nextState === -1) break;
      state = nextState;
      pos = consumedTo;
      if (state !== WordState.Lead) accepted = pos;
    }
    return accepted;
  }

  /**
   * A middle character joins the word only when the right kind of character follows it:
   * letters around MidLetter / MidNumLet / apostrophe, digits around MidNum / MidNumLet /
   * apostrophe, Hebrew letters around a double quote. Leaves unitEnd after the follower.
   */
  private joinAcross(state: WordState, mid: WordBreak, followerAt: number): WordState | -1 {
    const letterSide = state === WordState.Letter || state === WordState.Hebrew;
    let wanted: 'letter' | 'number' | 'hebrew' | null = null;
    if (mid === WordBreak.DoubleQuote) {
      if (state === WordState.Hebrew) wanted = 'hebrew';
    } else if (mid === WordBreak.MidLetter) {
      if (letterSide) wanted = 'letter';
    } else if (mid === WordBreak.MidNum) {
      if (state === WordState.Number) wanted = 'number';
    } else if (letterSide) {
      wanted = 'letter';
    } else if (state === WordState.Number) {
      wanted = 'number';
    }
    if (wanted === null || !this.readUnit(followerAt)) return -1;
    const follower = this.unitClass;
    if (wanted === 'number') return follower === WordBreak.Numeric ? WordState.Number : -1;
    if (follower === WordBreak.HebrewLetter) return WordState.Hebrew;
    if (wanted === 'letter' && follower === WordBreak.ALetter) return WordState.Letter;
    return -1;
  }

  private matchEmoji(start: number): number {
    let pos = this.matchEmojiUnit(start);
    if (pos === -1) return -1;
    while (pos < this.limit) {
      if (this.classAt(pos) !== WordBreak.ZeroWidthJoiner) break;
      const joined = this.matchEmojiUnit(pos + 1);
      if (joined === -1) {
        pos = this.skipExtend(pos, false);
        break;
      }
      pos = joined;
    }
    return pos;
  }

  /** One emoji character, flag pair or keycap sequence with its modifiers; -1 if none at i. */
  private matchEmojiUnit(i: number): number {
    if (i >= this.limit) return -1;
    const cls = this.classAt(i);
    const width = this.widthAt(i);
    let end = i + width;
    if (cls === WordBreak.RegionalIndicator) {
      if (end >= this.limit || this.classAt(end) !== WordBreak.RegionalIndicator) return -1;
      end += this.widthAt(end);
    } else if (cls === WordBreak.KeycapBase) {
      if (end < this.limit && this.text.charCodeAt(end) === VARIATION_SELECTOR_16) end++;
      if (end >= this.limit || this.text.charCodeAt(end) !== COMBINING_KEYCAP) return -1;
      end++;
    } else if (cls !== WordBreak.Emoji) {
      return -1;
    }
    if (end > this.limit) return -1;
    return this.skipExtend(end, true);
  }
}

export function standardTokens(text: string): string[] {
  const tokenizer = new StandardTokenizer();
  const count = tokenizer.tokenize(text);
  const tokens: string[] = [];
  for (let t = 0; t < count; t++) {
    tokens.push(text.slice(tokenizer.starts[t], tokenizer.ends[t]));
  }
  return tokens;
}
