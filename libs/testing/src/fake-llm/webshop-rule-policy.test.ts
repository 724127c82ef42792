import { describe, expect, it } from 'vitest';
import type { FakeChatRequest } from './chat-script.js';
import { webshopRulePolicy as sut } from './webshop-rule-policy.js';

function request(lastUser: string): FakeChatRequest {
  return {
    index: 0,
    model: 'm',
    body: {},
    authorization: undefined,
    messages: [
      { role: 'system', content: 'You are shopping.' },
      {
        role: 'user',
        content: 'Instruction: i want a [blue] shirt\n\nObservation:\nWebShop [SEP] Search',
      },
      { role: 'assistant', content: 'Action: search[blue shirt]' },
      { role: 'user', content: lastUser },
    ],
  };
}

describe('webshopRulePolicy', () => {
  it('searches the instruction when the page has a search bar', () => {
    expect(
      sut(request('Observation:\nx\n\nAvailable actions:\nsearch[<query>]\nthink[<note>]')),
    ).toBe('Thought: I will search for the instruction.\nAction: search[i want a blue shirt]');
  });

  it('opens the first product of a results page', () => {
    const reply = sut(
      request(
        'Observation:\nclick[b0fake]\n\nAvailable actions:\nclick[back to search]\nclick[< prev]\nclick[next >]\nclick[b0test0002]\nclick[b0test0001]',
      ),
    );
    expect(reply).toContain('Action: click[b0test0002]');
  });

  it('buys on a product page and goes back from a sub-page', () => {
    expect(
      sut(
        request(
          'Available actions:\nclick[back to search]\nclick[< prev]\nclick[buy now]\nclick[blue]',
        ),
      ),
    ).toContain('Action: click[buy now]');
    expect(sut(request('Available actions:\nclick[back to search]\nclick[< prev]'))).toContain(
      'Action: click[< prev]',
    );
  });

  it('thinks when it sees nothing to do', () => {
    expect(sut(request('Available actions:\nthink[<note>]'))).toBe(
      'Action: think[I see nothing to do on this page.]',
    );
  });
});
