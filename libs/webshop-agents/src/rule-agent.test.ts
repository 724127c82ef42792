import { describe, expect, it } from 'vitest';
import { RuleAgent, instructionToQuery } from './rule-agent.js';
import type { AvailableActions, WebshopObservation } from './webshop-agent.js';

const INSTRUCTION =
  'i would like a 3 ounce bottle of bright citrus deodorant for sensitive skin, and price lower than 50.00 dollars';

function page(
  observation: string,
  availableActions: AvailableActions,
  step: number,
): WebshopObservation {
  return { observation, availableActions, step };
}

const searchPage = page(
  `WebShop [SEP] Instruction: [SEP] ${INSTRUCTION} [SEP] Search`,
  { has_search_bar: true, clickables: ['search'] },
  0,
);
const resultsPage = page(
  `Instruction: [SEP] ${INSTRUCTION} [SEP] Back to Search [SEP] Page 2 (Total results: 16) [SEP] < Prev [SEP] Next > [SEP] B0TEST0012 [SEP] Deodorant Stick Number 12 [SEP] $17.49 [SEP] B0TEST0013 [SEP] Deodorant Stick Number 13 [SEP] $18.49`,
  {
    has_search_bar: false,
    clickables: ['back to search', '< prev', 'next >', 'b0test0012', 'b0test0013'],
  },
  1,
);
const itemPage = page(
  `Instruction: [SEP] ${INSTRUCTION} [SEP] Back to Search [SEP] < Prev [SEP] scent [SEP] bright citrus [SEP] Deodorant Stick Number 12 [SEP] Price: $17.49 [SEP] Rating: N.A. [SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now`,
  {
    has_search_bar: false,
    clickables: [
      'back to search',
      '< prev',
      'description',
      'features',
      'reviews',
      'buy now',
      'bright citrus',
    ],
  },
  2,
);

describe('RuleAgent', () => {
  const sut = new RuleAgent();

  it('searches the instruction, opens the first result and buys it', async () => {
    const episode = sut.start({
      instruction: `Instruction: ${INSTRUCTION}`,
      signal: new AbortController().signal,
    });

    const decisions = [
      await episode.nextAction(searchPage),
      await episode.nextAction(resultsPage),
      await episode.nextAction(itemPage),
    ];

    expect(decisions.map((d) => [d.action, d.kind, d.valid])).toEqual([
      [`search[${INSTRUCTION}]`, 'search', true],
      ['click[b0test0012]', 'click', true],
      ['click[buy now]', 'click', true],
    ]);
    expect(decisions.every((d) => d.tokensIn === 0 && d.tokensOut === 0 && d.costUsd === 0)).toBe(
      true,
    );
  });

  it('goes back from a sub-page and reports a results page without products as invalid', async () => {
    const episode = sut.start({ instruction: INSTRUCTION, signal: new AbortController().signal });

    const back = await episode.nextAction(
      page(
        'Instruction: [SEP] x [SEP] Back to Search [SEP] < Prev [SEP] Reviews',
        { has_search_bar: false, clickables: ['back to search', '< prev'] },
        3,
      ),
    );
    const empty = await episode.nextAction(
      page(
        'Page 6 (Total results: 50) [SEP] < Prev [SEP] Next >',
        { has_search_bar: false, clickables: ['back to search', '< prev', 'next >'] },
        4,
      ),
    );
    const done = await episode.nextAction(
      page('Thank you for shopping with us!', { has_search_bar: false, clickables: [] }, 5),
    );

    expect(back.action).toBe('click[< prev]');
    expect(empty).toMatchObject({
      valid: false,
      kind: 'invalid',
      invalidReason: 'the results page lists no product',
    });
    expect(done).toMatchObject({ valid: false, invalidReason: 'nothing to do on this page' });
  });

  it('rejects once the episode is aborted', async () => {
    const controller = new AbortController();
    const episode = sut.start({ instruction: INSTRUCTION, signal: controller.signal });
    controller.abort(new Error('deadline'));

    await expect(episode.nextAction(searchPage)).rejects.toThrow('deadline');
  });
});

describe('instructionToQuery', () => {
  it('drops the prefix and brackets and collapses whitespace', () => {
    expect(instructionToQuery('Instruction:  i need a [2-pack]\n of  socks ')).toBe(
      'i need a 2-pack of socks',
    );
  });
});
