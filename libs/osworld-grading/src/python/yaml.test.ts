import { describe, expect, it } from 'vitest';
import { PyDict, PyOpaque } from './values.js';
import { pyYamlSafeLoad } from './yaml.js';
import { PythonException } from './exceptions.js';

const load = (text: string) => pyYamlSafeLoad(text) as PyDict;
const typeOfError = (text: string): string | undefined => {
  try {
    pyYamlSafeLoad(text);
  } catch (error) {
    if (error instanceof PythonException) return error.type;
    throw error;
  }
  return undefined;
};

describe('yaml.safe_load (PyYAML, YAML 1.1)', () => {
  it("types plain scalars with PyYAML's resolvers", () => {
    const data = load(
      'a: yes\nb: on\nc: 017\nd: 0o17\ne: 1:30\nf: 1e5\ng: 1.5e+3\nh: ~\ni: "yes"\nj: y\n',
    );
    expect(data.items()).toEqual([
      ['a', true],
      ['b', true],
      ['c', 15],
      ['d', '0o17'],
      ['e', 90],
      ['f', '1e5'],
      ['g', 1500],
      ['h', null],
      ['i', 'yes'],
      ['j', 'y'],
    ]);
  });

  it('makes booleans of keys too, and dates opaque', () => {
    const data = load('on: 1\nwhen: 2024-01-01\n');
    expect(data.lookup(true)).toBe(1);
    expect(data.lookup('when')).toBeInstanceOf(PyOpaque);
  });

  it('resolves anchors, aliases and merge keys', () => {
    const data = load('base: &b {x: 1, y: 2}\nname: &n Test\nother: *n\nd:\n  <<: *b\n  y: 3\n');
    expect(data.lookup('other')).toBe('Test');
    expect((data.lookup('d') as PyDict).items()).toEqual([
      ['x', 1],
      ['y', 3],
    ]);
  });

  it('gives None for an empty stream and fails on several documents or an unknown tag', () => {
    expect(pyYamlSafeLoad('')).toBeNull();
    expect(typeOfError('a: 1\n---\nb: 2\n')).toBe('YAMLError');
    expect(typeOfError('a: !foo x\n')).toBe('YAMLError');
    expect(typeOfError('a: =\n')).toBe('YAMLError');
    expect(typeOfError('name: [unclosed\n')).toBe('YAMLError');
  });
});
