import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  COLOR_SET,
  normalizeColor,
  normalizeColorSize,
  SIZE_PATTERN_SOURCES,
} from './normalize.js';

const rewardUnitsUrl = new URL(
  '../../../../../shared/webshop/fixtures/reward_units.json',
  import.meta.url,
);
type RewardUnits = {
  normalize_color: { input: string | string[]; output: string | string[] }[];
  normalize_color_size: {
    input_keys: [number, string, string][];
    color_mapping: Record<string, string>;
    size_mapping: Record<string, string>;
  };
};
const units = JSON.parse(readFileSync(rewardUnitsUrl, 'utf8')) as RewardUnits;

describe('normalizeColor', () => {
  it.each(units.normalize_color.map((item) => [JSON.stringify(item.input), item] as const))(
    'fixture %s',
    (_, item) => {
      expect(normalizeColor(item.input)).toEqual(item.output);
    },
  );

  it('tests membership in COLOR_SET order, case-sensitively', () => {
    expect(COLOR_SET).toHaveLength(102);
    expect(normalizeColor('steelivy fuchsia')).toBe('fuchsia');
    expect(normalizeColor('standard')).toBe('tan');
    expect(normalizeColor('light navy')).toBe('light');
    expect(normalizeColor('Black')).toBe('Black');
  });

  it('tests element membership for a tuple', () => {
    expect(normalizeColor(['name', 'grey'])).toBe('grey');
    expect(normalizeColor(['color', 'navy blue'])).toEqual(['color', 'navy blue']);
  });
});

describe('normalizeColorSize', () => {
  it('builds the fixture colour and size maps', () => {
    const sut = normalizeColorSize(units.normalize_color_size.input_keys);
    expect(Object.fromEntries(sut.colorMapping)).toEqual(units.normalize_color_size.color_mapping);
    expect(Object.fromEntries(sut.sizeMapping)).toEqual(units.normalize_color_size.size_mapping);
  });

  it('reports the Python pattern source and handles anchors and digits like Python re', () => {
    expect(SIZE_PATTERN_SOURCES).toHaveLength(40);
    const sut = normalizeColorSize([
      [1, 'x', '12"'],
      [2, 'x', '40cm'],
      [3, 'x', '3.5'],
      [4, 'x', '١٢'],
      [5, 'x', '3 - 4'],
    ]);
    expect(Object.fromEntries(sut.sizeMapping)).toEqual({
      'N.A.': 'not_matched',
      '12"': '(\\d+)"$',
      '40cm': '(\\d+)cm$',
      '3.5': 'numeric_size',
      '١٢': 'numeric_size',
      '3 - 4': '(.*)\\-(.*)',
    });
  });
});
