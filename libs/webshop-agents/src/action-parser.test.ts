import { describe, expect, it } from 'vitest';
import { parseAction, parseAgentReply } from './action-parser.js';
import type { AvailableActions } from './webshop-agent.js';

const searchPage: AvailableActions = { has_search_bar: true, clickables: ['search'] };
const resultsPage: AvailableActions = {
  has_search_bar: false,
  clickables: ['back to search', 'next >', 'b0test0001', 'b0test0002'],
};
const itemPage: AvailableActions = {
  has_search_bar: false,
  clickables: [
    'back to search',
    '< prev',
    'description',
    'features',
    'reviews',
    'buy now',
    'bright citrus',
    '3 ounce (pack of 1)',
  ],
};

describe('parseAction', () => {
  it.each([
    ['search[3 ounce deodorant]', searchPage, 'search[3 ounce deodorant]'],
    ['Search[  3 ounce   deodorant ]', searchPage, 'search[3 ounce deodorant]'],
    ['click[B0TEST0002]', resultsPage, 'click[b0test0002]'],
    ['CLICK[Buy Now]', itemPage, 'click[buy now]'],
    ['click[3 Ounce (Pack of 1)]', itemPage, 'click[3 ounce (pack of 1)]'],
    ['click[< Prev]', itemPage, 'click[< prev]'],
    ['think[the first one looks right]', resultsPage, 'think[the first one looks right]'],
  ])('accepts %s', (candidate, available, action) => {
    expect(parseAction(candidate, available)).toMatchObject({ valid: true, action });
  });

  it.each([
    ['search[deodorant]', resultsPage, 'search is not available on this page (no search bar)'],
    ['search[]', searchPage, 'empty search query'],
    ['search[   ]', searchPage, 'empty search query'],
    ['search[a [b] c]', searchPage, 'search query must not contain [ or ]'],
    ['click[search]', searchPage, 'click[search] is refused by the store; use search[<query>]'],
    ['click[b0test0009]', resultsPage, '"b0test0009" is not clickable on this page'],
    ['click[buy now]', resultsPage, '"buy now" is not clickable on this page'],
    [
      'buy[b0test0001]',
      resultsPage,
      'unknown action "buy"; use search[...], click[...] or think[...]',
    ],
    ['click b0test0001', resultsPage, 'not of the form name[argument]: "click b0test0001"'],
    [
      'click[b0test0001] now',
      resultsPage,
      'not of the form name[argument]: "click[b0test0001] now"',
    ],
  ])('refuses %s', (candidate, available, reason) => {
    expect(parseAction(candidate, available)).toEqual({
      valid: false,
      kind: 'invalid',
      action: candidate.trim(),
      reason,
    });
  });
});

describe('parseAgentReply', () => {
  it('takes the Action line and keeps the thought', () => {
    const reply = 'Thought: The first result matches the scent.\nAction: click[b0test0001]';
    expect(parseAgentReply(reply, resultsPage)).toEqual({
      valid: true,
      kind: 'click',
      action: 'click[b0test0001]',
      thought: 'The first result matches the scent.',
    });
  });

  it('holds the model to its first action when it goes on to invent observations', () => {
    const reply =
      'Action: click[b0test0002]\nObservation: You are on the item page.\nAction: click[buy now]';
    expect(parseAgentReply(reply, resultsPage)).toMatchObject({
      valid: true,
      action: 'click[b0test0002]',
    });
  });

  it('accepts a bare action, an action on the line after "Action:", and code ticks', () => {
    expect(parseAgentReply('think[compare prices first]', resultsPage)).toMatchObject({
      valid: true,
      kind: 'think',
    });
    expect(parseAgentReply('Action:\n`click[next >]`', resultsPage)).toMatchObject({
      valid: true,
      action: 'click[next >]',
    });
    expect(parseAgentReply('**Thought:** go on\n**Action:** click[next >]', resultsPage)).toEqual({
      valid: true,
      kind: 'click',
      action: 'click[next >]',
      thought: 'go on',
    });
    expect(parseAgentReply('I will search.\nsearch[citrus deodorant]', searchPage)).toEqual({
      valid: true,
      kind: 'search',
      action: 'search[citrus deodorant]',
      thought: 'I will search.',
    });
  });

  it('uses a reasoning block as the thought', () => {
    const reply = '<think>Only two results; the first fits.</think>\nAction: click[b0test0001]';
    expect(parseAgentReply(reply, resultsPage)).toMatchObject({
      valid: true,
      action: 'click[b0test0001]',
      thought: 'Only two results; the first fits.',
    });
  });

  it.each([
    ['', 'empty reply'],
    ['   \n  ', 'empty reply'],
    ['I would buy the first product.', 'no action found in the reply'],
    ['Thought: hmm\nAction:', 'no action found in the reply'],
    [
      'click[b0test0001]\nclick[b0test0002]',
      '2 action-like lines and no "Action:" line; reply with one action',
    ],
    [
      'Action: click on the first product',
      'not of the form name[argument]: "click on the first product"',
    ],
    ['Action: click[b0test0003]', '"b0test0003" is not clickable on this page'],
    ['{"action": "click[b0test0001]"}', 'no action found in the reply'],
  ])('refuses %j with a reason', (reply, reason) => {
    expect(parseAgentReply(reply, resultsPage)).toMatchObject({
      valid: false,
      kind: 'invalid',
      reason,
    });
  });
});
