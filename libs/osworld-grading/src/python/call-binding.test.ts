import { describe, expect, it } from 'vitest';
import { bindArguments, bindPythonCall, pyKeywordArguments } from './call-binding.js';
import { PythonException } from './exceptions.js';
import { PyDict } from './values.js';

const checkJson = {
  name: 'check_json',
  parameters: ['result', 'rules', 'is_yaml'],
  defaults: { is_yaml: false },
};

// Each message is what python3.11 raises for the same call.
describe("Python's argument binding", () => {
  it('binds positionals, keywords and defaults; an explicit None is not the default', () => {
    expect(bindPythonCall(checkJson, ['r'], { rules: { a: 1 } }).values).toEqual([
      'r',
      PyDict.fromEntries([['a', 1]]),
      false,
    ]);
    expect(bindArguments(checkJson, ['r', 'x', null], {}).values).toEqual(['r', 'x', null]);
  });

  it('collects unknown keywords into **options, in order, when the function takes them', () => {
    const bound = bindArguments(
      { name: 'compare_text_file', parameters: ['actual', 'expected'], varKeywords: true },
      ['a'],
      { ignore_case: true, expected: 'e', ignore_blanks: 1 },
    );
    expect(bound.values).toEqual(['a', 'e']);
    expect(bound.options).toEqual([
      ['ignore_case', true],
      ['ignore_blanks', 1],
    ]);
  });

  it('says "from 2 to 3" when defaults make the count a range, and "argument" for one', () => {
    expect(() => bindArguments(checkJson, [1, 2, 3, 4], {})).toThrow(
      new PythonException(
        'TypeError',
        'check_json() takes from 2 to 3 positional arguments but 4 were given',
      ),
    );
    expect(() => bindArguments({ name: 'one', parameters: ['a'] }, [1, 2], {})).toThrow(
      new PythonException('TypeError', 'one() takes 1 positional argument but 2 were given'),
    );
  });

  it("lists missing arguments as Python does: \"'a' and 'b'\", then \"'a', 'b', and 'c'\"", () => {
    expect(() => bindArguments(checkJson, [], {})).toThrow(
      new PythonException(
        'TypeError',
        "check_json() missing 2 required positional arguments: 'result' and 'rules'",
      ),
    );
    expect(() => bindArguments({ name: 'three', parameters: ['a', 'b', 'c'] }, [], {})).toThrow(
      new PythonException(
        'TypeError',
        "three() missing 3 required positional arguments: 'a', 'b', and 'c'",
      ),
    );
  });

  it('refuses an unexpected or doubled keyword, and a ** that is no mapping', () => {
    expect(() => bindArguments(checkJson, ['r'], { bogus: 1 })).toThrow(
      new PythonException('TypeError', "check_json() got an unexpected keyword argument 'bogus'"),
    );
    expect(() => bindArguments(checkJson, ['r'], { result: 1 })).toThrow(
      new PythonException('TypeError', "check_json() got multiple values for argument 'result'"),
    );
    expect(() => pyKeywordArguments('exact_match', ['x'])).toThrow(
      new PythonException(
        'TypeError',
        'exact_match() argument after ** must be a mapping, not list',
      ),
    );
    expect(pyKeywordArguments('exact_match', { a: 1 })).toEqual({ a: 1 });
  });
});
