import { fileURLToPath } from 'node:url';

/** ../shared/webshop, where the parity fixtures made by the original code live. */
const sharedWebshop = new URL('../../../../shared/webshop/', import.meta.url);

export const pathInSharedWebshop = (relative: string): string =>
  fileURLToPath(new URL(relative, sharedWebshop));

/** The small catalog the fixtures' episodes were recorded on, in the three official file formats. */
export const syntheticCatalogFiles = {
  itemsFile: pathInSharedWebshop('fixtures/synthetic_input/items_shuffle_synthetic.json'),
  attributesFile: pathInSharedWebshop('fixtures/synthetic_input/items_ins_v2_synthetic.json'),
  humanInstructionsFile: pathInSharedWebshop(
    'fixtures/synthetic_input/items_human_ins_synthetic.json',
  ),
};
