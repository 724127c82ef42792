// thefuzz 0.19.0 `fuzz.ratio` and `fuzz.token_set_ratio` (defaults: force_ascii, full_process).
import { sequenceMatcherRatio } from '@benchfleet/core';
import {
  pythonRound,
  pythonSplitWhitespace,
  pythonStrip,
  pythonTupleRepr,
  sortedPythonStrings,
} from '../catalog/python-text.js';
import { levenshteinRatio } from './levenshtein-ratio.js';

/** A string, or a Python tuple of strings (synthetic goal options reach thefuzz as `(name, value)`). */
export type FuzzyInput = string | readonly string[];

/** `difflib` is what thefuzz uses without python-Levenshtein (the upstream setup); `levenshtein` with it. */
type FuzzyBackend = 'difflib' | 'levenshtein';

export type FuzzyOptions = { backend?: FuzzyBackend };

const LATIN1_HIGH_HALF = /[\u0080-\u00ff]/g;
// Python's `\W` on str: anything but a letter, a number or '_'.
const NOT_WORD_CHARACTER = /[^\p{L}\p{N}_]/gu;

/** Python `str(x)`: tuples become their repr, e.g. `('size', 'XL')`. */
function fuzzyInputText(input: FuzzyInput): string {
  return typeof input === 'string' ? input : pythonTupleRepr(input);
}

/** `utils.full_process(s, force_ascii=True)`. */
export function fullProcess(input: FuzzyInput): string {
  const ascii = fuzzyInputText(input).replace(LATIN1_HIGH_HALF, '');
  return pythonStrip(ascii.replace(NOT_WORD_CHARACTER, ' ').toLowerCase());
}

function backendRatio(a: string, b: string, backend: FuzzyBackend): number {
  return backend === 'levenshtein' ? levenshteinRatio(a, b) : sequenceMatcherRatio(a, b);
}

/** `fuzz.ratio(s1, s2)`: no preprocessing; 100 for equal strings, 0 if either is empty. */
export function fuzzRatio(s1: string, s2: string, options: FuzzyOptions = {}): number {
  if (s1 === s2) return 100;
  if (s1.length === 0 || s2.length === 0) return 0;
  return pythonRound(100 * backendRatio(s1, s2, options.backend ?? 'difflib'));
}

/**
 * `fuzz.token_set_ratio(s1, s2)`: the best ratio among the sorted shared tokens and each side's
 * shared-plus-own tokens. A token set contained in the other scores 100. `null` scores 0.
 */
export function tokenSetRatio(
  s1: FuzzyInput | null,
  s2: FuzzyInput | null,
  options: FuzzyOptions = {},
): number {
  if (s1 === null || s2 === null) return 0;
  const processed1 = fullProcess(s1);
  const processed2 = fullProcess(s2);
  if (processed1.length === 0 || processed2.length === 0) return 0;
  const tokens1 = new Set(pythonSplitWhitespace(processed1));
  const tokens2 = new Set(pythonSplitWhitespace(processed2));
  const shared = sortedPythonStrings([...tokens1].filter((token) => tokens2.has(token))).join(' ');
  const only1 = sortedPythonStrings([...tokens1].filter((token) => !tokens2.has(token))).join(' ');
  const only2 = sortedPythonStrings([...tokens2].filter((token) => !tokens1.has(token))).join(' ');
  const sect = pythonStrip(shared);
  const combined1 = pythonStrip(`${shared} ${only1}`);
  const combined2 = pythonStrip(`${shared} ${only2}`);
  return Math.max(
    fuzzRatio(sect, combined1, options),
    fuzzRatio(sect, combined2, options),
    fuzzRatio(combined1, combined2, options),
  );
}
