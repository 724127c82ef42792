import { describe, expect, it } from 'vitest';
import { toPy } from '../python/values.js';
import { UnsupportedPythonFeature, PythonException } from '../python/exceptions.js';
import { matchRecord, matchValueToRule } from './rule-matching.js';

const match = (value: unknown, rule: unknown): boolean | string => {
  try {
    return matchValueToRule(toPy(value), toPy(rule));
  } catch (error) {
    if (error instanceof PythonException) return error.type;
    if (error instanceof UnsupportedPythonFeature) return 'unsupported';
    throw error;
  }
};

describe('_match_value_to_rule', () => {
  it('searches (not full-matches) with the flags named after "re."', () => {
    expect(match('-- \nAnonym\nXYZ Lab\n', { method: 're.S', ref: 'Anonym\\nXYZ Lab' })).toBe(true);
    expect(match('SMART', { method: 're', ref: 'smart' })).toBe(false);
    expect(match('SMART', { method: 're.I', ref: 'smart' })).toBe(true);
    // any method starting with "re" is a regex
    expect(match('x', { method: 'regex', ref: 'x' })).toBe(true);
  });

  it('fails as getattr(re, name) and re.search do on bad flags and non-str values', () => {
    expect(match('x', { method: 're.Q', ref: 'x' })).toBe('AttributeError');
    expect(match('x', { method: 're.compile', ref: 'x' })).toBe('TypeError');
    expect(match(['smart'], { method: 're', ref: 'smart' })).toBe('TypeError');
    expect(match(null, { method: 're', ref: '(' })).toBe('error');
  });

  it('compares with Python operators, True == 1 included', () => {
    expect(match(1, { method: 'eq', ref: true })).toBe(true);
    expect(match(0, { method: 'ne', ref: false })).toBe(false);
    expect(match('b', { method: 'gt', ref: 'a' })).toBe(true);
    expect(match('b', { method: 'gt', ref: 1 })).toBe('TypeError');
  });

  it('approx:T converts the value with float() and gives False when it cannot', () => {
    expect(match('1.05', { method: 'approx:0.1', ref: 1 })).toBe(true);
    expect(match(' 1_000 ', { method: 'approx:0.5', ref: 1000 })).toBe(true);
    expect(match('abc', { method: 'approx:0.1', ref: 1 })).toBe(false);
    expect(match(null, { method: 'approx:0.1', ref: 1 })).toBe(false);
    expect(match(1, { method: 'approx:0.1', ref: '1' })).toBe('TypeError');
    expect(match(1, { method: 'approx', ref: 1 })).toBe('IndexError');
  });

  it('range.XY uses < for t and <= for e on each side', () => {
    expect(match(2, { method: 'range.te', ref: [0, 2] })).toBe(true);
    expect(match(0, { method: 'range.te', ref: [0, 2] })).toBe(false);
    expect(match(0, { method: 'range.et', ref: [0, 2] })).toBe(true);
    expect(match(1, { method: 'range.xe', ref: [0, 2] })).toBe('AttributeError');
  });

  it('str_list_eq / str_set_eq strip quotes and split on commas', () => {
    expect(match("'a,b'", { method: 'str_list_eq', ref: ['a', 'b'] })).toBe(true);
    expect(match('b,a', { method: 'str_list_eq', ref: ['a', 'b'] })).toBe(false);
    expect(match('b,a,a', { method: 'str_set_eq', ref: ['a', 'b'] })).toBe(true);
    expect(match(5, { method: 'str_set_eq', ref: ['a'] })).toBe('AttributeError');
  });

  it('raises NotImplementedError for an unknown method and refuses spreadsheet_range', () => {
    expect(match(1, { method: 'foo', ref: 1 })).toBe('NotImplementedError');
    expect(match('A1', { method: 'spreadsheet_range', ref: ['A1', 'B2'] })).toBe('unsupported');
  });
});

describe('_match_record', () => {
  it('needs every pattern key in the item with an equal value; extra item keys are fine', () => {
    expect(matchRecord(toPy({ a: '1' }), toPy({ a: '1', b: '2' }))).toBe(true);
    expect(matchRecord(toPy({ a: 1 }), toPy({ a: '1' }))).toBe(false);
    expect(matchRecord(toPy({ c: ['ALL'] }), toPy({ c: ['ALL'] }))).toBe(true);
    expect(matchRecord(toPy({}), toPy({}))).toBe(true);
  });
});
