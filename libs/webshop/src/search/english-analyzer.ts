// Anserini's default English analyzer as pyserini indexes WebShop: StandardTokenizer →
// EnglishPossessiveFilter → LowerCaseFilter → StopFilter → PorterStemFilter. Every filter looks at
// one token at a time, so a token's analysed form depends on its text alone and can be cached.

import { porterStem } from './porter-stemmer.js';
import { StandardTokenizer } from './standard-tokenizer.js';

/** Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET. */
export const ENGLISH_STOPWORDS: ReadonlySet<string> = new Set([
  'a',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'but',
  'by',
  'for',
  'if',
  'in',
  'into',
  'is',
  'it',
  'no',
  'not',
  'of',
  'on',
  'or',
  'such',
  'that',
  'the',
  'their',
  'then',
  'there',
  'these',
  'they',
  'this',
  'to',
  'was',
  'will',
  'with',
]);

function stripPossessive(token: string): string {
  const length = token.length;
  if (length < 2) return token;
  const last = token.charCodeAt(length - 1);
  if (last !== 0x73 && last !== 0x53) return token;
  const quote = token.charCodeAt(length - 2);
  if (quote === 0x27 || quote === 0x2019 || quote === 0xff07) return token.slice(0, length - 2);
  return token;
}

const lowerCodePointCache = new Map<number, string>();

function lowerCodePoint(cp: number): string {
  let lowered = lowerCodePointCache.get(cp);
  if (lowered === undefined) {
    const full = String.fromCodePoint(cp).toLowerCase();
    // Java's Character.toLowerCase is the simple one-to-one mapping; only U+0130 'İ' has a
    // longer full mapping ("i̇"), and its simple mapping is 'i'.
    lowered = [...full].length === 1 ? full : cp === 0x130 ? 'i' : String.fromCodePoint(cp);
    lowerCodePointCache.set(cp, lowered);
  }
  return lowered;
}

/** Lowercases code point by code point, as Lucene's LowerCaseFilter does. */
export function lowercasePerCodePoint(token: string): string {
  let ascii = true;
  for (let i = 0; i < token.length; i++) {
    if (token.charCodeAt(i) >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii) return token.toLowerCase();
  let out = '';
  for (const ch of token) out += lowerCodePoint(ch.codePointAt(0) ?? 0);
  return out;
}

/** The indexed term for one StandardTokenizer token, or null when the stop filter drops it. */
export function analyzeToken(token: string): string | null {
  const lowered = lowercasePerCodePoint(stripPossessive(token));
  if (ENGLISH_STOPWORDS.has(lowered)) return null;
  return porterStem(lowered);
}

const sharedTokenizer = new StandardTokenizer();

/** Analysed terms of a text, in order, duplicates kept. */
export function analyzeText(text: string): string[] {
  const count = sharedTokenizer.tokenize(text);
  const { starts, ends } = sharedTokenizer;
  const terms: string[] = [];
  for (let t = 0; t < count; t++) {
    const term = analyzeToken(text.slice(starts[t], ends[t]));
    if (term !== null) terms.push(term);
  }
  return terms;
}
