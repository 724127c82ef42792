// WebShop's normalize.py: colour normalisation for the option reward, and the colour/size maps.
import type { FuzzyInput } from './fuzzy-match.js';

/** Order matters: normalizeColor returns the first entry contained in its input. */
export const COLOR_SET: readonly string[] = [
  'alabaster',
  'apricot',
  'aqua',
  'ash',
  'asphalt',
  'azure',
  'banana',
  'beige',
  'black',
  'blue',
  'blush',
  'bordeaux',
  'bronze',
  'brown',
  'burgundy',
  'camel',
  'camo',
  'caramel',
  'champagne',
  'charcoal',
  'cheetah',
  'chestnut',
  'chocolate',
  'christmas',
  'coffee',
  'cognac',
  'copper',
  'coral',
  'cranberry',
  'cream',
  'crystal',
  'dark',
  'denim',
  'eggplant',
  'elephant',
  'espresso',
  'fuchsia',
  'gold',
  'granite',
  'grape',
  'graphite',
  'grass',
  'gray',
  'green',
  'grey',
  'heather',
  'indigo',
  'ivory',
  'ivy',
  'khaki',
  'lavender',
  'lemon',
  'leopard',
  'light',
  'lilac',
  'lime',
  'magenta',
  'maroon',
  'mauve',
  'merlot',
  'midnight',
  'mint',
  'mocha',
  'multicolor',
  'mushroom',
  'mustard',
  'natural',
  'navy',
  'nude',
  'olive',
  'orange',
  'peach',
  'pewter',
  'pink',
  'plum',
  'purple',
  'rainbow',
  'red',
  'rose',
  'royal',
  'rust',
  'sand',
  'sapphire',
  'seashell',
  'silver',
  'skull',
  'slate',
  'steel',
  'stone',
  'stonewash',
  'sunflower',
  'tan',
  'taupe',
  'teal',
  'tiger',
  'turquoise',
  'violet',
  'walnut',
  'wheat',
  'white',
  'wine',
  'yellow',
];

const SIZE_SET: readonly string[] = [
  'xx-large',
  '3x-large',
  '4x-large',
  '5x-large',
  'x-large',
  'x-small',
  'medium',
  'large',
  'small',
  'queen',
  'twin',
  'full',
  'king',
  'one size',
  'pack',
];

/** The Python source of each size pattern, as normalize_color_size reports it. */
export const SIZE_PATTERN_SOURCES: readonly string[] = [
  ...SIZE_SET,
  '(.*)neck(.*)sleeve',
  '(.*) women \\| (.*) men',
  '(.*)w x(.*)l',
  '(.*)w by (.*)l',
  '(.*)w x(.*)h',
  '(.*)wide',
  '(.*)x-wide',
  '(.*)narrow',
  '(.*)petite',
  '(.*)inch',
  '(.*)plus',
  '(.*)mm',
  'women(.*)',
  '(.*)x(.*)',
  '(.*)ft',
  '(.*)feet',
  '(.*)meter',
  '(.*)yards',
  '(.*)\\*(.*)',
  '(.*)\\-(.*)',
  '(\\d+)"$',
  '(\\d+)f$',
  '(\\d+)m$',
  '(\\d+)cm$',
  '(\\d+)g$',
];

// The same patterns for JavaScript: Python's `\d` is any Unicode digit, its `$` also matches before a
// final newline, and `.` stops only at '\n'.
function toJavaScriptPattern(source: string): RegExp {
  const translated = source
    .replaceAll('\\-', '-')
    .replaceAll('\\d', '\\p{Nd}')
    .replaceAll('.', '[^\\n]')
    .replace(/\$$/, '(?=\\n?$)');
  return new RegExp(translated, 'u');
}

const SIZE_PATTERNS = SIZE_PATTERN_SOURCES.map((source) => ({
  source,
  regex: toJavaScriptPattern(source),
}));

/**
 * `normalize_color(x)`: the first COLOR_SET entry `c` with `c in x` (a substring test for a string; an
 * element test for a tuple), otherwise `x` unchanged.
 */
export function normalizeColor(x: FuzzyInput): FuzzyInput {
  const found = COLOR_SET.find((color) => x.includes(color));
  return found ?? x;
}

export type ColorSizeMappings = {
  colorMapping: Map<string, string>;
  sizeMapping: Map<string, string>;
};

const PYTHON_DECIMAL_DIGITS = /^\p{Nd}+$/u;

/**
 * `normalize_color_size(product_prices)` over `(id, color, size)` keys. Only the repository tests use
 * it; the reward does not. Python iterates sets here, so only the pairs are meaningful, not the order.
 */
export function normalizeColorSize(
  keys: Iterable<readonly [unknown, string, string]>,
): ColorSizeMappings {
  const colors = new Set<string>();
  const sizes = new Set<string>();
  for (const [, color, size] of keys) {
    colors.add(color.toLowerCase());
    sizes.add(size.toLowerCase());
  }
  const colorMapping = new Map<string, string>([['N.A.', 'not_matched']]);
  for (const color of colors) {
    colorMapping.set(color, COLOR_SET.find((base) => color.includes(base)) ?? 'not_matched');
  }
  const sizeMapping = new Map<string, string>([['N.A.', 'not_matched']]);
  for (const size of sizes) {
    const pattern = SIZE_PATTERNS.find(({ regex }) => regex.test(size));
    if (pattern !== undefined) sizeMapping.set(size, pattern.source);
    else if (PYTHON_DECIMAL_DIGITS.test(size.replace('.', '')))
      sizeMapping.set(size, 'numeric_size');
    else sizeMapping.set(size, 'not_matched');
  }
  return { colorMapping, sizeMapping };
}
