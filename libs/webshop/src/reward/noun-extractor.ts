import { createRequire } from 'node:module';

// The tagger and its model (~100 ms to load) are loaded with the first extractor, not at import:
// processes that never score a purchase (the scheduler, a worker before its first) skip them.
const require = createRequire(import.meta.url);

/**
 * Produces the nouns of a product title for the type reward: upstream keeps, in token order and with
 * duplicates, the lowercased text of every spaCy token tagged NOUN or PROPN.
 */
export interface NounExtractor {
  /** Recorded with results, since scores depend on the tagger. */
  readonly name: string;
  nouns(text: string): string[];
}

const NOUN_TAGS = new Set(['NOUN', 'PROPN']);
const NOUN_CACHE_ENTRIES = 20_000;

/**
 * The default extractor: wink-nlp with its English lite model. Like spaCy it uses Universal POS tags
 * and splits "T-Shirt" into t / - / shirt and "38mm" into 38 / mm; its tags can differ from spaCy's
 * en_core_web_lg on title-cased text, so results may differ near the 0.1 and 0.2 thresholds.
 */
export function createWinkNounExtractor(): NounExtractor {
  const winkNLP = require('wink-nlp') as typeof import('wink-nlp').default;
  const model =
    require('wink-eng-lite-web-model') as typeof import('wink-eng-lite-web-model').default;
  const nlp = winkNLP(model, ['sbd', 'pos']);
  const its = nlp.its;
  // Goals and products recur across episodes: their titles are tagged once.
  const seen = new Map<string, readonly string[]>();
  return {
    name: 'wink-nlp@2 wink-eng-lite-web-model@1 (UPOS NOUN/PROPN)',
    nouns(text: string): string[] {
      let nouns = seen.get(text);
      if (nouns === undefined) {
        const tokens = nlp.readDoc(text).tokens();
        const values = tokens.out(its.value);
        const tags = tokens.out(its.pos);
        nouns = values
          .filter((_, i) => NOUN_TAGS.has(tags[i] ?? ''))
          .map((value) => value.toLowerCase());
        if (seen.size >= NOUN_CACHE_ENTRIES) seen.clear();
        seen.set(text, nouns);
      }
      return [...nouns];
    },
  };
}

let defaultExtractor: NounExtractor | undefined;

/** A shared wink-based extractor, created on first use (loading the model takes a moment). */
export function defaultNounExtractor(): NounExtractor {
  defaultExtractor ??= createWinkNounExtractor();
  return defaultExtractor;
}

/** Nouns looked up in a fixed table (title → nouns), e.g. a fixture's `standin_title_nouns`. */
export function tableNounExtractor(
  table: Readonly<Record<string, readonly string[]>>,
  options: { name?: string; fallback?: NounExtractor } = {},
): NounExtractor {
  const nouns = new Map(Object.entries(table));
  return {
    name: options.name ?? 'noun table',
    nouns(text: string): string[] {
      const found = nouns.get(text);
      if (found !== undefined) return [...found];
      if (options.fallback !== undefined) return options.fallback.nouns(text);
      throw new Error(`no nouns recorded for title ${JSON.stringify(text)}`);
    },
  };
}
