import { describe, expect, it } from 'vitest';
import { UnsupportedPythonFeature, PythonException } from './exceptions.js';
import { pyReCompile, pyReFlags } from './re.js';

const search = (pattern: string, text: string, flags = 0): boolean =>
  pyReCompile(pattern, flags).search(text) !== null;

const compileError = (pattern: string, flags = 0): string => {
  try {
    pyReCompile(pattern, flags);
  } catch (error) {
    if (error instanceof PythonException) return `${error.type}: ${error.message}`;
    if (error instanceof UnsupportedPythonFeature) return `unsupported: ${error.message}`;
    throw error;
  }
  return 'compiled';
};

describe('Python re translated to a JS RegExp', () => {
  it("matches $ before a final newline and \\Z only at the end, as Python's re does", () => {
    expect(search('^b$', 'b\n')).toBe(true);
    expect(search('b\\Z', 'b\n')).toBe(false);
    expect(search('a$', 'a\nb')).toBe(false);
    expect(search('a$', 'a\nb', pyReFlags.M)).toBe(true);
  });

  it('lets . match \\r (only \\n is a line break) and everything under re.S', () => {
    expect(search('a.b', 'a\rb')).toBe(true);
    expect(search('a.b', 'a\nb')).toBe(false);
    expect(search('a.b', 'a\nb', pyReFlags.S)).toBe(true);
    expect(search('(?s)a.b', 'a\nb')).toBe(true);
  });

  it('uses Unicode \\w, \\d, \\s and \\b for str patterns (ASCII under re.A)', () => {
    expect(search('^\\w+$', 'café')).toBe(true);
    expect(search('\\bsmart\\b', 'très smart')).toBe(true);
    expect(search('\\bsmart\\b', 'ésmart')).toBe(false);
    expect(search('^\\d$', '٣')).toBe(true);
    expect(search('^\\d$', '٣', pyReFlags.A)).toBe(false);
    expect(search('\\s', '\x1c')).toBe(true);
    expect(search('\\s', '\ufeff')).toBe(false);
  });

  it('never matches \\B in an empty string', () => {
    expect(search('\\B', '')).toBe(false);
    expect(search('\\B', 'ab')).toBe(true);
  });

  it('translates named groups, backreferences, {,n}, literal { and a leading ] in a class', () => {
    expect(search('^(?P<w>a+)-(?P=w)$', 'aa-aa')).toBe(true);
    expect(search('^(?P<w>a+)-(?P=w)$', 'aa-a')).toBe(false);
    expect(search('^a{,2}$', 'aa')).toBe(true);
    expect(search('^a{,2}$', 'aaa')).toBe(false);
    expect(search('a{b', 'a{b')).toBe(true);
    expect(search('^[]a]+$', ']a]')).toBe(true);
    expect(search('\\-\\#', '-#')).toBe(true);
  });

  it('honours inline and verbose flags', () => {
    expect(search('(?i)smart', 'SMART')).toBe(true);
    expect(search('smart', 'SMART', pyReFlags.I)).toBe(true);
    expect(search('a b # comment', 'ab', pyReFlags.X)).toBe(true);
    expect(search('(?x) a b', 'ab')).toBe(true);
  });

  it("raises re.error where Python's compiler does", () => {
    expect(compileError('(')).toBe('error: missing ), unterminated subpattern at position 0');
    expect(compileError('a**')).toMatch(/^error: multiple repeat/);
    expect(compileError('(?<=a+)b')).toMatch(/^error: look-behind requires fixed-width pattern/);
    expect(compileError('a(?i)b')).toMatch(/^error: global flags not at the start/);
    expect(compileError('\\q')).toMatch(/^error: bad escape \\q/);
    expect(compileError('[b-a]')).toMatch(/^error: bad character range b-a/);
  });

  it('refuses what JavaScript cannot reproduce instead of matching differently', () => {
    expect(compileError('(?>a)')).toMatch(/^unsupported: atomic group/);
    expect(compileError('a*+')).toMatch(/^unsupported: possessive/);
    expect(compileError('(?i:a)b')).toMatch(/^unsupported: scoped/);
    expect(compileError('(a)(?(1)b|c)')).toMatch(/^unsupported: conditional/);
  });

  it('finds all matches as re.findall does', () => {
    const pattern = pyReCompile("\\b(?:AND|OR) \\((?:[\\w ]+),(?:[\\w ']+),(?:[^)]+)\\)|\\bALL\\b");
    expect(pattern.findall('AND (subject,contains,x) OR (from,is,y)')).toEqual([
      'AND (subject,contains,x)',
      'OR (from,is,y)',
    ]);
    expect(pyReCompile('(a)(b)?').findall('a')).toEqual([['a', '']]);
  });
});
