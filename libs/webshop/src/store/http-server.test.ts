import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { webshopGoalSchema, webshopProductSchema } from '../catalog/index.js';
import { tableNounExtractor } from '../reward/index.js';
import { createCatalogStore } from './catalog-store.js';
import { simpleTextFromNodes, visibleTextNodes } from './html-to-text.js';
import { createStoreHttpServer } from './http-server.js';

const fixture = z
  .object({
    human: z.object({
      products: z.array(webshopProductSchema),
      product_prices: z.record(z.string(), z.number()),
      goals: z.array(webshopGoalSchema),
    }),
    standin_title_nouns: z.record(z.string(), z.array(z.string())),
  })
  .parse(
    JSON.parse(
      readFileSync(
        new URL('../../../../../shared/webshop/fixtures/env_episodes.json', import.meta.url),
        'utf8',
      ),
    ),
  );

const deodorants = [
  'B0TEST0001',
  'B0TEST0002',
  ...Array.from({ length: 14 }, (_, i) => `B0TEST00${String(i + 8).padStart(2, '0')}`),
];
const store = createCatalogStore(
  {
    products: fixture.human.products,
    productPrices: new Map(Object.entries(fixture.human.product_prices)),
    goals: fixture.human.goals,
  },
  {
    search: {
      search: (query, limit) => (query.includes('deodorant') ? deodorants : []).slice(0, limit),
    },
    nounExtractor: tableNounExtractor(fixture.standin_title_nouns),
  },
);

let sut: Server;
let origin = '';

beforeAll(async () => {
  sut = createStoreHttpServer(store);
  await new Promise<void>((resolve) => sut.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(sut.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve, reject) =>
    sut.close((error) => (error ? reject(error) : resolve())),
  );
});

async function page(
  path: string,
  init?: RequestInit,
): Promise<{ status: number; html: string; text: string }> {
  const response = await fetch(`${origin}${path}`, init);
  const html = await response.text();
  return { status: response.status, html, text: simpleTextFromNodes(visibleTextNodes(html)) };
}

function decodeAttribute(value: string): string {
  return value.replaceAll('&#39;', "'").replaceAll('&#34;', '"').replaceAll('&amp;', '&');
}

describe('createStoreHttpServer', () => {
  it('serves the search page of goal i for session fixed_i', async () => {
    const { status, text, html } = await page('/fixed_1');
    expect(status).toBe(200);
    expect(text).toBe(
      'WebShop [SEP] Instruction: [SEP] i would like a 3 ounce bottle of bright citrus deodorant for sensitive skin, and price lower than 50.00 dollars [SEP] Search',
    );
    expect(html).toContain('<form role="form" id="form-buscar" method="post" action="/fixed_1">');
  });

  it('redirects a posted search to the results route with the keywords as a Python list', async () => {
    const response = await fetch(`${origin}/fixed_1`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'search_query=Bright+Citrus+Deodorant',
      redirect: 'manual',
    });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe(
      '/search_results/fixed_1/%5B%27bright%27%2C%20%27citrus%27%2C%20%27deodorant%27%5D/1',
    );
    const results = await page(response.headers.get('location') ?? '');
    expect(results.text).toContain(
      'Page 1 (Total results: 16) [SEP] Next > [SEP] B0TEST0001 [SEP] Bright Citrus',
    );
  });

  it('lets a ReAct-style client browse with raw queries and Python dict options, and scores the purchase', async () => {
    const results = await page('/search_results/fixed_1/bright citrus deodorant/2');
    expect(results.text).toContain(
      'Page 2 (Total results: 16) [SEP] < Prev [SEP] Next > [SEP] B0TEST0016',
    );

    const item = await page(
      `/item_page/fixed_1/B0TEST0001/bright citrus deodorant/1/${encodeURIComponent("{'scent': 'bright citrus'}")}`,
    );
    expect(item.text).toContain(
      '[SEP] scent [SEP] assorted scents [SEP] bright citrus [SEP] calming lavender [SEP] size',
    );
    expect(item.html).toContain('let options = JSON.parse(`{"scent": "bright citrus"}`);');

    const sub = await page(
      `/item_sub_page/fixed_1/B0TEST0001/bright citrus deodorant/1/Features/{}`,
    );
    expect(sub.text).toMatch(
      /< Prev \[SEP\] NATURAL: aluminum free deodorant made with organic calendula\. \[SEP\] GENTLE/,
    );

    const done = await page(
      `/done/fixed_1/B0TEST0001/${encodeURIComponent("{'scent': 'bright citrus', 'size': '3 ounce (pack of 1)'}")}`,
    );
    expect(done.status).toBe(200);
    expect(done.text).toContain('Your score (min 0.0, max 1.0) [SEP] 1.0 [SEP] Reward Details');
    // generate_mturk_code: sha1(session id)[:10].upper()
    expect(done.text).toContain(
      'Your code: [SEP] 4B81D879DB [SEP] (Paste it in your MTurk interface.)',
    );
    expect(done.html).toContain('<h4 id="goal-asin">asin<pre>B0TEST0001</pre></p>');
    expect(done.html).toContain(
      '<h4 id="options">options<pre>{"scent": "bright citrus", "size": "3 ounce (pack of 1)"}</pre></h4>',
    );
  });

  it('serves pages whose links, option URLs and forms lead to working routes', async () => {
    const results = await page('/search_results/fixed_1/%5B%27deodorant%27%5D/1');
    const productHref = /<a class="product-link" href="([^"]+)">B0TEST0001<\/a>/.exec(
      results.html,
    )?.[1];
    expect(productHref).toBe('/item_page/fixed_1/B0TEST0001/%5B%27deodorant%27%5D/1/%7B%7D');

    const item = await page(decodeAttribute(productHref ?? ''));
    expect(item.text).toContain('Aluminum Free, 3 Ounce [SEP] Price: $10.99 [SEP] Rating: N.A.');
    const optionUrl = /data-url="([^"]+)">\s*<label for="radio_size1">/.exec(item.html)?.[1];
    const withOption = await page(decodeAttribute(optionUrl ?? ''));
    expect(withOption.status).toBe(200);
    expect(optionUrl).toBe(
      '/item_page/fixed_1/B0TEST0001/%5B%27deodorant%27%5D/1/%7B%27size%27:%20%273%20ounce%20%28pack%20of%201%29%27%7D',
    );
    expect(withOption.html).toContain(
      'let options = JSON.parse(`{"size": "3 ounce (pack of 1)"}`);',
    );

    const buyAction =
      /<form method="post" action="([^"]+)">\s*<button type="submit" class="btn btn-lg purchase">/.exec(
        withOption.html,
      )?.[1];
    expect(buyAction).toBe(
      '/done/fixed_1/B0TEST0001/%7B%27size%27:%20%273%20ounce%20%28pack%20of%201%29%27%7D',
    );
    const done = await page(decodeAttribute(buyAction ?? ''), { method: 'POST' });
    // the goal wants scent bright citrus and size 3 ounce (pack of 1): 3 of 4 parts met
    expect(done.text).toContain('Your score (min 0.0, max 1.0) [SEP] 0.75 [SEP] Reward Details');

    const back =
      /<form method="post" action="([^"]+)">\s*<button type="submit" class="btn btn-success">Back to Search/.exec(
        item.html,
      )?.[1];
    expect(back).toBe('/fixed_1');
  });

  it('answers bad addresses with 4xx instead of failing', async () => {
    expect((await page('/fixed_999')).status).toBe(404);
    expect((await page('/item_page/fixed_1/NOPE/x/1/{}')).status).toBe(404);
    expect((await page('/item_page/fixed_1/B0TEST0001/x/one/{}')).status).toBe(404);
    expect(
      (await page(`/item_page/fixed_1/B0TEST0001/x/1/${encodeURIComponent('{oops')}`)).status,
    ).toBe(400);
    expect((await page('/item_sub_page/fixed_1/B0TEST0001/x/1/Secrets/{}')).status).toBe(404);
    expect((await page('/nothing/here')).status).toBe(404);
    expect((await page('/%E0%A4%A')).status).toBe(400);
  });

  it('sends / to a default session', async () => {
    const response = await fetch(`${origin}/`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/abc');
  });
});
