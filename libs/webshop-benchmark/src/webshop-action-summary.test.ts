import { describe, expect, it } from 'vitest';
import { webshopBenchmark } from './webshop-benchmark.js';
import { summarizeWebshopAction as sut } from './webshop-action-summary.js';

describe('summarizeWebshopAction', () => {
  it("reads WebShop's action (JSON text with an `action` field): the word before the bracket is its kind", () => {
    expect(
      sut(JSON.stringify({ action: 'search[red shoes]', kind: 'parsed', valid: true })),
    ).toEqual({ kind: 'search', summary: 'search[red shoes]' });
    expect(sut({ action: 'Click[Buy Now]' })).toEqual({ kind: 'click', summary: 'Click[Buy Now]' });
  });

  it('reads the leading action field of a step as the worker writes it, as a whole parse would', () => {
    const clickables = [
      'back to search',
      'next >',
      ...Array.from({ length: 50 }, (_, i) => `b0${i}`),
    ];
    for (const [text, kind] of [
      ['search[red "quoted" shoes \\ back\\slash]', 'search'],
      ['Click[caf\u00e9 \n ☕]', 'click'],
      ['click[buy now]', 'click'],
      ['', null],
    ] as const) {
      const written = JSON.stringify({
        action: text,
        kind: 'parsed',
        valid: true,
        available_actions: { has_search_bar: false, clickables },
      });
      expect(sut(written)).toEqual({ kind, summary: text });
    }
    // Not JSON after all: the text as it is, as before.
    expect(sut('{"action":"click[a]"')).toEqual({ kind: null, summary: '{"action":"click[a]"' });
  });

  it('keeps text that is not JSON as it is, and gives shapes it does not know no kind', () => {
    expect(sut('think[about it]')).toEqual({ kind: 'think', summary: 'think[about it]' });
    expect(sut('no brackets here')).toEqual({ kind: null, summary: 'no brackets here' });
    expect(sut(JSON.stringify({ tick: 3 }))).toEqual({ kind: null, summary: '{"tick":3}' });
    expect(sut(null)).toEqual({ kind: null, summary: null });
  });

  it("is the WebShop descriptor's reading of its step spans", () => {
    expect(webshopBenchmark.summarizeAction).toBe(sut);
  });
});
