import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  getAttributeReward,
  getOptionReward,
  getReward,
  getTypeReward,
  type RewardGoal,
  type RewardProduct,
} from './get-reward.js';
import { tableNounExtractor } from './noun-extractor.js';

const rewardUnitsUrl = new URL(
  '../../../../../shared/webshop/fixtures/reward_units.json',
  import.meta.url,
);
type RewardUnits = {
  get_attribute_reward: {
    purchased: RewardProduct;
    goal_attributes: string[];
    r_attr: number;
    num_attr_matches: number;
  }[];
  get_option_reward: {
    purchased_options: string[];
    goal_options: (string | string[])[];
    r_option: number | null;
    num_option_matches: number;
  }[];
  get_reward: {
    name: string;
    purchased: RewardProduct;
    goal: RewardGoal;
    price: number;
    options: Record<string, string>;
    injected_r_type: number;
    total_reward: number;
    info_without_type_fields: Record<string, unknown>;
  }[];
};
const units = JSON.parse(readFileSync(rewardUnitsUrl, 'utf8')) as RewardUnits;

describe('getAttributeReward', () => {
  it.each(units.get_attribute_reward.map((item, i) => [i, item] as const))(
    'fixture case %i',
    (_, item) => {
      expect(getAttributeReward(item.purchased, { attributes: item.goal_attributes })).toEqual({
        r_attr: item.r_attr,
        num_attr_matches: item.num_attr_matches,
      });
    },
  );

  it('joins a string BulletPoints character by character, so its words no longer match', () => {
    const product = { Attributes: [], Title: '', BulletPoints: 'essential oils', Description: '' };
    expect(getAttributeReward(product, { attributes: ['essential oils'] }).num_attr_matches).toBe(
      0,
    );
    expect(getAttributeReward(product, { attributes: ['e s s'] }).num_attr_matches).toBe(1);
  });

  it('counts an empty goal attribute as a substring of anything', () => {
    expect(
      getAttributeReward(
        { Attributes: ['x'], Title: '', BulletPoints: [], Description: '' },
        { attributes: [''] },
      ).r_attr,
    ).toBe(1);
  });
});

describe('getOptionReward', () => {
  it.each(units.get_option_reward.map((item, i) => [i, item] as const))(
    'fixture case %i',
    (_, item) => {
      expect(getOptionReward(item.purchased_options, item.goal_options)).toEqual({
        r_option: item.r_option,
        num_option_matches: item.num_option_matches,
      });
    },
  );

  it('gives a null r_option for a goal without options', () => {
    expect(getOptionReward(['grey'], [])).toEqual({ r_option: null, num_option_matches: 0 });
  });

  it('does not match a purchased "dark grey" (normalised to "dark") against a goal "grey"', () => {
    expect(getOptionReward(['dark grey'], ['grey']).num_option_matches).toBe(0);
  });
});

describe('getReward', () => {
  it.each(units.get_reward.map((item) => [item.name, item] as const))(
    'fixture case %s',
    (_, item) => {
      const { reward, info } = getReward(item.purchased, item.goal, item.price, item.options, {
        typeReward: () => ({
          r_type: item.injected_r_type,
          query_match: true,
          category_match: true,
          title_score: 1,
        }),
      });
      const {
        query_match: _query,
        category_match: _category,
        title_score: _title,
        ...withoutTypeFields
      } = info;
      expect(reward).toBe(item.total_reward);
      expect(Object.entries(withoutTypeFields)).toEqual(
        Object.entries(item.info_without_type_fields),
      );
    },
  );
});

describe('getTypeReward', () => {
  const nouns = tableNounExtractor({
    goal: ['shoe', 'lace'],
    same: ['shoe', 'lace'],
    half: ['shoe', 'bag'],
    none: ['hat'],
    repeated: ['watch', 'band', 'watch'],
    empty: [],
  });
  const goal = { query: 'q', product_category: 'a › b › c', name: 'goal' };

  it('is 1 with everything matching', () => {
    expect(getTypeReward({ ...goal, name: 'same' }, goal, nouns)).toEqual({
      r_type: 1,
      query_match: true,
      category_match: true,
      title_score: 1,
    });
  });

  it('matches categories on sets of stripped segments, needing 2 in common', () => {
    const category = (product_category: string): boolean =>
      getTypeReward({ query: 'x', product_category, name: 'same' }, goal, nouns).category_match;
    expect(category('b › c › a')).toBe(true);
    expect(category('d › e › f')).toBe(false);
    expect(category('a › d › b')).toBe(true);
    expect(category('  a›b  ')).toBe(true);
    expect(category('a › a › d')).toBe(false);
  });

  it('applies the 0.5, 0.1 and 0 rules in order', () => {
    const other = { query: 'x', product_category: 'd › e' };
    expect(getTypeReward({ ...other, name: 'half' }, goal, nouns)).toMatchObject({
      r_type: 1,
      title_score: 0.5,
    });
    expect(
      getTypeReward({ ...other, name: 'empty' }, { ...goal, name: 'empty' }, nouns),
    ).toMatchObject({ r_type: 0.5, title_score: 0.2 });
    expect(getTypeReward({ ...goal, name: 'none' }, goal, nouns)).toMatchObject({
      r_type: 0,
      query_match: true,
      category_match: true,
    });
    expect(
      getTypeReward({ ...goal, name: 'empty' }, { ...goal, name: 'empty' }, nouns).r_type,
    ).toBe(1);
  });

  it('divides by the goal nouns with duplicates', () => {
    expect(
      getTypeReward({ ...goal, name: 'repeated' }, { ...goal, name: 'repeated' }, nouns)
        .title_score,
    ).toBe(2 / 3);
  });
});

describe('option and price parts against the 2022 MTurk logs', () => {
  const trajectoriesUrl = new URL('../../../../../shared/webshop/human_trajs/', import.meta.url);
  type DoneLine = {
    goal: { goal_options: string[]; price_upper: number };
    content: { options: Record<string, string>; price: number };
    reward_info: { r_option?: number; r_price: boolean };
  };
  const doneLines = readdirSync(trajectoriesUrl)
    .filter((name) => name.endsWith('.jsonl'))
    .map((name) => {
      const lines = readFileSync(new URL(name, trajectoriesUrl), 'utf8').trim().split('\n');
      return [name, JSON.parse(lines.at(-1) ?? '{}') as DoneLine] as const;
    });

  it('reads the 9 sessions', () => expect(doneLines).toHaveLength(9));

  it.each(doneLines)('%s', (_, done) => {
    const option = getOptionReward(Object.values(done.content.options), done.goal.goal_options);
    expect(option.r_option ?? undefined).toBe(done.reward_info.r_option);
    expect(done.content.price <= done.goal.price_upper).toBe(done.reward_info.r_price);
  });
});
