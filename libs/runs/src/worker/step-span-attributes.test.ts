import { describe, expect, it } from 'vitest';
import { stepSpanAttributes, summarizeAction as sut } from './step-span-attributes.js';

describe('summarizeAction', () => {
  it("reads WebShop's action (JSON text with an `action` field): the word before the bracket is its kind", () => {
    expect(
      sut(JSON.stringify({ action: 'search[red shoes]', kind: 'parsed', valid: true })),
    ).toEqual({ kind: 'search', summary: 'search[red shoes]' });
    expect(sut({ action: 'Click[Buy Now]' })).toEqual({ kind: 'click', summary: 'Click[Buy Now]' });
  });

  it("reads OSWorld's tool calls: each tool's name is its kind, with its input in the summary", () => {
    const action = JSON.stringify({
      tool_calls: [
        { name: 'computer_click_mouse', input: { coordinates: { x: 1, y: 2 } } },
        { name: 'computer_type_text', input: { text: 'hi' } },
        { name: 'computer_click_mouse', input: { coordinates: { x: 3, y: 4 } } },
      ],
    });
    expect(sut(action)).toEqual({
      kind: 'computer_click_mouse,computer_type_text',
      summary:
        'computer_click_mouse({"coordinates":{"x":1,"y":2}}), computer_type_text({"text":"hi"}), computer_click_mouse({"coordinates":{"x":3,"y":4}})',
    });
    expect(sut({ tool_calls: [] })).toEqual({ kind: null, summary: null });
  });

  it('keeps text that is not JSON as it is, and gives shapes it does not know no kind', () => {
    expect(sut('think[about it]')).toEqual({ kind: 'think', summary: 'think[about it]' });
    expect(sut('no brackets here')).toEqual({ kind: null, summary: 'no brackets here' });
    expect(sut(JSON.stringify({ tick: 3 }))).toEqual({ kind: null, summary: '{"tick":3}' });
    expect(sut(null)).toEqual({ kind: null, summary: null });
  });
});

describe('stepSpanAttributes', () => {
  it("takes the step's own latency and tokens, or the time since the step before when it reports none", () => {
    expect(
      stepSpanAttributes(
        {
          step: 2,
          action: '{"action":"click[b0]"}',
          latency_ms: 40,
          tokens_in: 9,
          tokens_out: 3,
          reward: 0,
        },
        700,
      ),
    ).toEqual({
      step: 2,
      actionKind: 'click',
      action: 'click[b0]',
      latencyMs: 40,
      tokensIn: 9,
      tokensOut: 3,
      reward: 0,
    });
    expect(stepSpanAttributes({ step: 1, action: null }, 700)).toMatchObject({
      latencyMs: 700,
      tokensIn: null,
      tokensOut: null,
    });
  });
});
