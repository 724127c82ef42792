import { readFileSync } from 'node:fs';
import { z } from 'zod';

/** USD per million tokens, keyed by model name as configured. */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

export interface ModelPrice {
  readonly inputUsdPerMillion: number;
  readonly outputUsdPerMillion: number;
}

const modelPriceSchema = z.strictObject({
  inputUsdPerMillion: z.number().nonnegative(),
  outputUsdPerMillion: z.number().nonnegative(),
});

/** `--price-table` / `LLM_PRICE_TABLE`: `{"model":{"inputUsdPerMillion":..,"outputUsdPerMillion":..}}`. */
export const priceTableSchema = z.record(z.string().min(1), modelPriceSchema);

/** The cost of a call at `price`; null when tokens were used and there is no price (unknown, not free). */
export function costOf(
  price: ModelPrice | undefined,
  tokensIn: number,
  tokensOut: number,
): number | null {
  if (price === undefined) return tokensIn + tokensOut === 0 ? 0 : null;
  return (tokensIn * price.inputUsdPerMillion + tokensOut * price.outputUsdPerMillion) / 1_000_000;
}

/** The cost of a call by model name; null when tokens were used and the model has no price (unknown, not free). */
export function costUsd(
  priceTable: PriceTable | undefined,
  model: string,
  tokensIn: number,
  tokensOut: number,
): number | null {
  return costOf(priceTable?.[model], tokensIn, tokensOut);
}

/**
 * A price table as given on a command line: inline JSON, or the path of a JSON file; returns the
 * data for `priceTableSchema` to check. Throws one line when the file cannot be read or parsed.
 */
export function readPriceTableSource(source: string): unknown {
  let text = source;
  if (!source.trim().startsWith('{')) {
    try {
      text = readFileSync(source, 'utf8');
    } catch {
      throw new Error(
        `${source}: no such file; give a JSON file or inline JSON like {"gpt-4o":{"inputUsdPerMillion":2.5,"outputUsdPerMillion":10}}`,
      );
    }
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`${source}: not JSON`);
  }
}
