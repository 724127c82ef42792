// Deterministic demo catalogue in WebShop's own input formats: raw products as in
// items_shuffle*.json, attribute entries as in items_ins_v2*.json (with synthetic instruction seeds)
// and human-style instructions as in items_human_ins.json, so the catalogue loads through the same
// code path as the real files. Product i depends only on (seed, i).

import { DemoRandom, mix32 } from './demo-random.js';
import {
  DEMO_BRAND_SYLLABLES,
  DEMO_GENERIC_SENTENCES,
  DEMO_PRODUCT_GROUPS,
  type DemoAttribute,
  type DemoCategory,
  type DemoProductGroup,
} from './product-groups.js';

export const DEMO_CATALOG_SIZE = 1000;

export interface DemoCatalogOptions {
  products: number;
  seed: number;
}

interface DemoRawOptionValue {
  value: string;
  image: string | null;
}

/** One record of items_shuffle*.json, keys in the original's order. */
interface DemoRawProduct {
  name: string;
  product_information: Record<string, string>;
  brand: string;
  brand_url: string;
  full_description: string;
  pricing: string;
  list_price: string;
  availability_quantity: number | '';
  availability_status: string;
  images: string[];
  product_category: string;
  average_rating: string;
  small_description: string[] | string;
  total_reviews: string;
  total_answered_questions: string;
  customization_options: '' | Record<string, DemoRawOptionValue[] | null>;
  seller_id: string;
  seller_name: string;
  fulfilled_by_amazon: string;
  fast_track_message: string;
  aplus_present: string;
  asin: string;
  category: DemoCategory;
  query: string;
  page: number;
  small_description_old: string;
}

/** One value of items_ins_v2*.json. `instruction_options` is an addition of the demo catalogue. */
interface DemoAttributeEntry {
  attributes: string[];
  instruction?: string;
  instruction_attributes?: string[];
  instruction_options?: string[];
}

/** One record of items_human_ins.json. */
interface DemoHumanInstruction {
  asin: string;
  instruction: string;
  attributes: string[];
  options: string[];
  instruction_attributes: string[];
  instruction_options: string[];
  assignment_id: string;
  worker_id: string;
}

export interface DemoCatalogRecord {
  product: DemoRawProduct;
  attributes: DemoAttributeEntry;
  humanInstructions: DemoHumanInstruction[];
}

/** The three WebShop input files, shaped like the catalog module's CatalogSource. */
export interface DemoCatalog {
  items: DemoRawProduct[];
  attributes: Record<string, DemoAttributeEntry>;
  humanInstructions: Record<string, DemoHumanInstruction[]>;
}

const SYNTHETIC_INSTRUCTION_SHARE = 0.4;
const HUMAN_INSTRUCTION_SHARE = 0.3;

function demoAsin(seed: number, index: number): string {
  // mix32 is a bijection on uint32, so distinct indices give distinct asins for one seed.
  return `B0${mix32(index ^ mix32(seed))
    .toString(36)
    .toUpperCase()
    .padStart(8, '0')}`;
}

function titleCase(text: string): string {
  return text.replace(
    /(^|[\s-])([a-z])/g,
    (_, space: string, letter: string) => space + letter.toUpperCase(),
  );
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function withThousands(integer: number): string {
  return String(integer).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

function dollars(amount: number): string {
  const [whole = '0', cents = '00'] = amount.toFixed(2).split('.');
  return `$${withThousands(Number(whole))}.${cents}`;
}

/** The processed form load_products gives an option value. */
function processedOptionValue(value: string): string {
  return value.trim().replaceAll('/', ' | ').toLowerCase();
}

function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '_');
}

interface ProductDraft {
  group: DemoProductGroup;
  brand: string;
  descriptor: string;
  material: string;
  attributes: DemoAttribute[];
  /** Option name → chosen raw values. */
  options: Array<{ name: string; values: string[] }>;
}

function fill(template: string, draft: ProductDraft): string {
  return template.replace(/\{(noun|brand|material|descriptor)\}/g, (_, key: string) => {
    if (key === 'noun') return draft.group.noun.toLowerCase();
    if (key === 'brand') return draft.brand;
    if (key === 'material') return draft.material;
    return draft.descriptor.toLowerCase();
  });
}

function attributeSentence(attribute: DemoAttribute, noun: string, rng: DemoRandom): string {
  switch (attribute.placement) {
    case 'before':
      return rng.pick([
        `This ${noun} is ${attribute.text}.`,
        `${capitalize(attribute.text)} and built to last.`,
      ]);
    case 'with':
      return rng.pick([`Comes with ${attribute.text}.`, `Designed with ${attribute.text}.`]);
    case 'for':
      return rng.pick([`Made for ${attribute.text}.`, `A great choice for ${attribute.text}.`]);
  }
}

function brandName(rng: DemoRandom): string {
  return DEMO_BRAND_SYLLABLES.map((syllables) => rng.pick(syllables)).join('');
}

function chooseOptions(group: DemoProductGroup, rng: DemoRandom): ProductDraft['options'] {
  return group.options.map((spec) => {
    const chosen = new Set(rng.sample(spec.values, rng.int(spec.count[0], spec.count[1])));
    return { name: spec.name, values: spec.values.filter((value) => chosen.has(value)) };
  });
}

function customizationOptions(
  draft: ProductDraft,
  asin: string,
  rng: DemoRandom,
): DemoRawProduct['customization_options'] {
  if (draft.options.length === 0 || rng.chance(0.1)) return '';
  const raw: Record<string, DemoRawOptionValue[] | null> = {};
  const nullColor = rng.chance(0.05);
  for (const { name, values } of draft.options) {
    const spec = draft.group.options.find((candidate) => candidate.name === name);
    if (nullColor && name === 'Color') {
      raw[name] = null;
      continue;
    }
    raw[name] = values.map((value) => ({
      value,
      image: spec?.withImages ? `https://example.invalid/img/${asin}_${slug(value)}.jpg` : null,
    }));
  }
  return raw;
}

function pricing(group: DemoProductGroup, rng: DemoRandom): string {
  const [low, high] = group.price;
  const cents = rng.pick([0.99, 0.49, 0.95, 0.0, 0.79]);
  const price = Math.floor(low + (high - low) * rng.next() ** 1.5) + cents;
  const roll = rng.next();
  if (roll < 0.04) return '';
  if (roll < 0.22) {
    const upper = Math.floor(price * (1.1 + rng.next() * 0.6)) + 0.99;
    return `${dollars(price)} - ${dollars(upper)}`;
  }
  return dollars(price);
}

function describe(draft: ProductDraft, rng: DemoRandom): string {
  if (rng.chance(0.03)) return '';
  const noun = draft.group.noun.toLowerCase();
  const sentences = [
    ...rng.sample(draft.group.facts, rng.int(3, 4)).map((fact) => fill(fact, draft)),
    ...draft.attributes.slice(2).map((attribute) => attributeSentence(attribute, noun, rng)),
    ...rng.sample(DEMO_GENERIC_SENTENCES, rng.int(0, 2)).map((sentence) => fill(sentence, draft)),
  ];
  return rng.sample(sentences, sentences.length).map(capitalize).join(' ');
}

function bulletPoints(draft: ProductDraft, rng: DemoRandom): string[] {
  const lead = draft.attributes[0];
  const features = rng.sample(draft.group.features, rng.int(2, draft.group.features.length));
  const bullets = features.map(
    ([label, sentence]) => `${label}: ${capitalize(fill(sentence, draft))} `,
  );
  if (lead !== undefined) {
    const [, sentence] = rng.pick(draft.group.features);
    const fact = fill(rng.pick(draft.group.facts), draft);
    bullets.unshift(
      `${lead.text.toUpperCase()}: ${capitalize(fill(sentence, draft))} ${capitalize(fact)} `,
    );
  }
  return bullets;
}

function title(draft: ProductDraft, rng: DemoRandom): string {
  const { group, brand, descriptor, attributes } = draft;
  const audience =
    group.audiences.length > 0 && rng.chance(0.7) ? ` for ${rng.pick(group.audiences)}` : '';
  const highlights = attributes.slice(0, 2).map((attribute) => titleCase(attribute.text));
  const size = draft.options.find((candidate) => candidate.name === 'Size')?.values[0];
  const sizeHint = size !== undefined && rng.chance(0.4) ? [size] : [];
  return [`${brand} ${descriptor} ${group.noun}${audience}`, ...highlights, ...sizeHint].join(', ');
}

/** "Find me …" in the style of items_ins_v2's synthetic instructions. */
function syntheticInstruction(query: string, attributes: readonly DemoAttribute[]): string {
  const of = (placement: DemoAttribute['placement']) =>
    attributes
      .filter((attribute) => attribute.placement === placement)
      .map((attribute) => attribute.text);
  const before = of('before');
  const withTexts = of('with');
  const forTexts = of('for');
  let text = `Find me ${before.length > 0 ? `${before.join(', ')} ` : ''}${query}`;
  if (withTexts.length > 0) text += ` with ${withTexts.join(', ')}`;
  if (forTexts.length > 0) text += ` for ${forTexts.join(', ')}`;
  return text;
}

function optionPhrase(name: string, value: string): string {
  switch (name) {
    case 'Color':
      return `in ${value}`;
    case 'Size':
    case 'Capacity':
      return `in size ${value}`;
    case 'Flavor Name':
      return `in ${value} flavor`;
    case 'Scent':
      return `with ${value} scent`;
    default:
      return `for ${value}`;
  }
}

/** A shopper's request like those in items_human_ins.json. */
function humanInstruction(
  draft: ProductDraft,
  asin: string,
  seed: number,
  index: number,
  ordinal: number,
  rng: DemoRandom,
): DemoHumanInstruction {
  const attributes = rng.sample(draft.attributes, rng.int(1, 2));
  const offered = draft.options.filter((candidate) => candidate.values.length > 0);
  const chosenOptions = rng
    .sample(offered, rng.int(offered.length > 0 ? 1 : 0, Math.min(2, offered.length)))
    .map(({ name, values }) => ({ name, value: processedOptionValue(rng.pick(values)) }));
  const before = attributes
    .filter((attribute) => attribute.placement === 'before')
    .map((attribute) => attribute.text);
  const after = attributes
    .filter((attribute) => attribute.placement !== 'before')
    .map((attribute) => `${attribute.placement} ${attribute.text}`);
  const opener = rng.pick([
    "i'm looking for",
    'i need',
    'i want to buy',
    'find me',
    'i would like',
    'can you get me',
  ]);
  const noun = draft.group.query;
  const leading = before[0] ?? noun;
  const article = /[^s]s$/.test(noun) ? [] : /^[aeiou]/.test(leading) ? ['an'] : ['a'];
  const phrases = [
    [opener, ...article, ...before, noun, ...after].join(' '),
    ...chosenOptions.map(({ name, value }) => optionPhrase(name, value)),
  ];
  const instruction = `${phrases.join(', ')}.`;
  return {
    asin,
    instruction,
    attributes: draft.attributes.map((attribute) => attribute.text),
    options: chosenOptions.map(({ name, value }) => `${name.toLowerCase()}: ${value}`),
    instruction_attributes: attributes.map((attribute) => attribute.text),
    instruction_options: chosenOptions.map(({ value }) => value),
    assignment_id: `DEMO${mix32(seed ^ mix32(index * 4 + ordinal))
      .toString(36)
      .toUpperCase()}`,
    worker_id: `DEMOWORKER${rng.int(1, 40)}`,
  };
}

/** Product `index` of the catalogue for `seed`, with its attribute entry and human instructions. */
export function generateDemoProduct(seed: number, index: number): DemoCatalogRecord {
  const rng = new DemoRandom(seed, index);
  const asin = demoAsin(seed, index);
  const group = rng.pick(DEMO_PRODUCT_GROUPS);
  const draft: ProductDraft = {
    group,
    brand: brandName(rng),
    descriptor: rng.pick(group.descriptors),
    material: rng.pick(group.materials),
    attributes: rng.sample(group.attributes, rng.int(3, 5)),
    options: chooseOptions(group, rng),
  };

  const bullets = bulletPoints(draft, rng);
  const customization = customizationOptions(draft, asin, rng);
  // Instructions may only ask for options the listing actually offers.
  const listed: ProductDraft = {
    ...draft,
    options:
      customization === '' ? [] : draft.options.filter(({ name }) => customization[name] !== null),
  };
  const price = pricing(group, rng);
  const reviews = rng.int(0, 25_000);
  const product: DemoRawProduct = {
    name: title(draft, rng),
    product_information: {
      ASIN: asin,
      'Item model number': `${draft.brand.slice(0, 3).toUpperCase()}-${rng.int(100, 9999)}`,
      'Date First Available': `${rng.pick(['January', 'March', 'May', 'July', 'September', 'November'])} ${rng.int(1, 28)}, ${rng.int(2015, 2022)}`,
    },
    brand: rng.chance(0.5) ? `Visit the ${draft.brand} Store` : `Brand: ${draft.brand}`,
    brand_url: `https://example.invalid/stores/${draft.brand.toLowerCase()}`,
    full_description: describe(draft, rng),
    pricing: price,
    list_price:
      price !== '' && !price.includes(' - ') && rng.chance(0.3)
        ? dollars(Number(price.slice(1).replaceAll(',', '')) * 1.25)
        : '',
    availability_quantity: rng.chance(0.2) ? rng.int(1, 20) : '',
    availability_status: rng.pick([
      'In Stock.',
      'In Stock.',
      'Only 3 left in stock - order soon.',
      '',
    ]),
    images: [
      `https://example.invalid/img/${asin}_0.jpg`,
      `https://example.invalid/img/${asin}_1.jpg`,
      ...(rng.chance(0.5) ? ['https://example.invalid/img/transparent-pixel.gif'] : []),
    ],
    product_category: group.productCategory,
    average_rating: `${(3 + rng.next() * 2).toFixed(1)} out of 5 stars`,
    small_description: rng.chance(0.03) ? (bullets[0] ?? '') : bullets,
    total_reviews: reviews === 0 ? '' : `${withThousands(reviews)} ratings`,
    total_answered_questions: rng.chance(0.3) ? `${rng.int(1, 200)} answered questions` : '',
    customization_options: customization,
    seller_id: '',
    seller_name: '',
    fulfilled_by_amazon: '',
    fast_track_message: '',
    aplus_present: '',
    asin,
    category: group.category,
    query: rng.chance(0.2) ? `${capitalize(group.query)} ` : group.query,
    page: rng.int(1, 20),
    small_description_old: '',
  };

  const attributes: DemoAttributeEntry = {
    attributes: draft.attributes.map((attribute) => attribute.text),
  };
  if (rng.chance(SYNTHETIC_INSTRUCTION_SHARE)) {
    const instructionAttributes = rng.sample(draft.attributes, rng.int(1, 3));
    attributes.instruction = syntheticInstruction(group.query, instructionAttributes);
    attributes.instruction_attributes = instructionAttributes.map((attribute) => attribute.text);
    attributes.instruction_options = listed.options
      .filter((candidate) => candidate.values.length > 0 && rng.chance(0.5))
      .map(({ values }) => processedOptionValue(rng.pick(values)));
  }

  const humanInstructions = rng.chance(HUMAN_INSTRUCTION_SHARE)
    ? Array.from({ length: rng.int(1, 2) }, (_, ordinal) =>
        humanInstruction(listed, asin, seed, index, ordinal, rng),
      )
    : [];

  return { product, attributes, humanInstructions };
}

/** Streams the catalogue product by product; nothing is kept between records. */
export function* generateDemoProducts(options: DemoCatalogOptions): Generator<DemoCatalogRecord> {
  for (let index = 0; index < options.products; index++)
    yield generateDemoProduct(options.seed, index);
}

/** The whole catalogue in memory, in WebShop's three file formats. */
export function generateDemoCatalog(options: DemoCatalogOptions): DemoCatalog {
  const catalog: DemoCatalog = { items: [], attributes: {}, humanInstructions: {} };
  for (const { product, attributes, humanInstructions } of generateDemoProducts(options)) {
    catalog.items.push(product);
    catalog.attributes[product.asin] = attributes;
    if (humanInstructions.length > 0) catalog.humanInstructions[product.asin] = humanInstructions;
  }
  return catalog;
}
