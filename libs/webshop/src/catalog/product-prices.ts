import type { PythonRandom } from './python-random.js';
import { pythonFloatRepr } from './python-text.js';

const DEFAULT_PRODUCT_PRICE = 100.0;

export type ParsedPricing = { pricing: number[]; Price: string };

const NOT_DIGIT_OR_DOT = /[^\p{Nd}.]/gu;
const DECIMAL_DIGIT = /\p{Nd}/u;

// Python's `\d` and Decimal accept every Unicode decimal digit; Unicode lays each set out as a
// contiguous 0…9 run, so a digit's value is its offset from the start of its run, modulo 10.
function asciiDigit(ch: string): string {
  const codePoint = ch.codePointAt(0) ?? 0;
  if (codePoint <= 0x39) return ch;
  let runStart = codePoint;
  while (DECIMAL_DIGIT.test(String.fromCodePoint(runStart - 1))) runStart -= 1;
  return String((codePoint - runStart) % 10);
}

function parseDecimalPiece(raw: string, piece: string): number {
  const cleaned = Array.from(piece.replace(NOT_DIGIT_OR_DOT, ''), (ch) =>
    ch === '.' ? ch : asciiDigit(ch),
  ).join('');
  if (!/^(?:\d+\.?\d*|\.\d+)$/.test(cleaned)) {
    throw new Error(
      `pricing ${JSON.stringify(raw)}: ${JSON.stringify(piece)} is not a decimal amount`,
    );
  }
  return Number(cleaned);
}

/**
 * The `pricing` string of a raw product as `load_products` reads it: every `$`-separated piece after
 * the first loses its non-digit, non-dot characters and becomes a float; one value is a price, two or
 * more a range (only the first two are kept). Absent or empty means `$100.0`.
 */
export function parsePricing(raw: string | null | undefined): ParsedPricing {
  if (raw === null || raw === undefined || raw === '') {
    return {
      pricing: [DEFAULT_PRODUCT_PRICE],
      Price: `$${pythonFloatRepr(DEFAULT_PRODUCT_PRICE)}`,
    };
  }
  const values = raw
    .split('$')
    .slice(1)
    .map((piece) => parseDecimalPiece(raw, piece));
  const [first, second] = values;
  if (first === undefined) {
    throw new Error(`pricing ${JSON.stringify(raw)} has no $ amount`);
  }
  if (second === undefined) {
    return { pricing: [first], Price: `$${pythonFloatRepr(first)}` };
  }
  return {
    pricing: [first, second],
    Price: `$${pythonFloatRepr(first)} to $${pythonFloatRepr(second)}`,
  };
}

/**
 * The hidden price of one product (`generate_product_prices`): its single price, or for a range one
 * `uniform(lo, hi)` draw from `rng`. Upstream draws them in product order.
 */
export function drawHiddenPrice(pricing: readonly number[], rng: PythonRandom): number {
  const [low, high] = pricing;
  if (low === undefined) return DEFAULT_PRODUCT_PRICE;
  if (high === undefined || pricing.length === 1) return low;
  return rng.uniform(low, high);
}

/** The hidden prices of a product list, in product order (see drawHiddenPrice). */
export function generateProductPrices(
  products: readonly { asin: string; pricing: readonly number[] }[],
  rng: PythonRandom,
): Map<string, number> {
  const prices = new Map<string, number>();
  for (const product of products) prices.set(product.asin, drawHiddenPrice(product.pricing, rng));
  return prices;
}
