import { describe, expect, it } from 'vitest';
import { MAX_TOKEN_LENGTH, standardTokens } from './standard-tokenizer.js';

describe('standardTokens', () => {
  it.each([
    ['x-large t-shirt 2-in-1', ['x', 'large', 't', 'shirt', '2', 'in', '1']],
    [
      '3.4 fl oz, 1,299.00 and 16oz 2.4g v2.1',
      ['3.4', 'fl', 'oz', '1,299.00', 'and', '16oz', '2.4g', 'v2.1'],
    ],
    [
      'e.g. U.S.A. www.example.com support@example.com',
      ['e.g', 'U.S.A', 'www.example.com', 'support', 'example.com'],
    ],
    ["don't o'hara kids' 'quoted'", ["don't", "o'hara", 'kids', 'quoted']],
    [
      'title:shoes a:1 zx_81 _lead trail_ ___',
      ['title:shoes', 'a', '1', 'zx_81', '_lead', 'trail_'],
    ],
    [
      '60" 38/40/41mm -4°f ½ cup 【new】 c++ #1',
      ['60', '38', '40', '41mm', '4', 'f', 'cup', 'new', 'c', '1'],
    ],
    ['™®© ★★ ✔ 🎁gift', ['™', '®', '©', '★', '★', '✔', '🎁', 'gift']],
    ['中文 ひらがな カタカナ', ['中', '文', 'ひ', 'ら', 'が', 'な', 'カタカナ']],
    ['ＳＨＯＥＳ café crème', ['ＳＨＯＥＳ', 'café', 'crème']],
    ['1.a a.1 1a.b', ['1', 'a', 'a', '1', '1a.b']],
    ['👩‍👩‍👧 🇺🇸 👍🏽 #️⃣', ['👩‍👩‍👧', '🇺🇸', '👍🏽', '#️⃣']],
    ['co\u00adoperate e\u0301te', ['co\u00adoperate', 'e\u0301te']],
    [
      "a. a.b a..b 1, 1,2 x' x's a_b a; a:b. ab\u0301 z\"",
      ['a', 'a.b', 'a', 'b', '1', '1,2', 'x', "x's", 'a_b', 'a', 'a:b', 'ab\u0301', 'z'],
    ],
  ])('%j', (text, tokens) => {
    expect(standardTokens(text)).toEqual(tokens);
  });

  it('cuts words longer than the maximum token length', () => {
    const word = 'a'.repeat(MAX_TOKEN_LENGTH + 45);
    expect(standardTokens(word).map((token) => token.length)).toEqual([MAX_TOKEN_LENGTH, 45]);
  });
});
