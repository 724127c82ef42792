import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { richTextFromNodes, simpleTextFromNodes, visibleTextNodes } from './html-to-text.js';

const sharedWebshop = new URL('../../../../../shared/webshop/', import.meta.url);

describe('visibleTextNodes and the text modes', () => {
  it('reproduces the recorded text observation of each real WebShop page', () => {
    const expected = JSON.parse(
      readFileSync(new URL('fixtures/html_mock_text_observations.json', sharedWebshop), 'utf8'),
    ) as {
      text_observations: Record<string, string>;
    };
    for (const [name, text] of Object.entries(expected.text_observations)) {
      const html = readFileSync(new URL(`html_mocks/${name}`, sharedWebshop), 'utf8');
      expect(simpleTextFromNodes(visibleTextNodes(html)), name).toBe(text);
    }
  });

  it('drops head, script, style, comments and top-level text', () => {
    const html =
      'top<!DOCTYPE html><html><head><title>T</title><style>p{}</style></head><body><script>if (a < b) {}</script><!-- c -->x</body></html>tail';
    expect(visibleTextNodes(html).map((node) => node.text)).toEqual(['x']);
  });

  it('collapses whitespace-only runs to a newline or a space, except inside pre', () => {
    const html = '<div>a</div>\n  <div> </div><div>\t</div><pre>  </pre>';
    expect(visibleTextNodes(html).map((node) => node.text)).toEqual(['a', ' ', ' ', '  ']);
    expect(simpleTextFromNodes(visibleTextNodes(html))).toBe('a [SEP]  [SEP]  [SEP] ');
  });

  it('decodes entities, numeric references in windows-1252 style, and keeps unknown names', () => {
    const [node] = visibleTextNodes(
      '<p>&lt;2-Pack&gt; &#34;x&#34; it&#39;s &#x27;y&#x27; &#150; &bogus; &amp;amp;</p>',
    );
    expect(node?.text).toBe(`<2-Pack> "x" it's 'y' \u2013 &bogus; &amp;`);
  });

  it('ignores end tags that close nothing, as the original parser does', () => {
    const html =
      '<h4 class="product-asin"><a class="product-link" href="/x">B01</a></h5><h4 class="product-title">Title</h5><div><h5>$1</h6></div>';
    expect(visibleTextNodes(html)).toEqual([
      { text: 'B01', parentTag: 'a', parentClass: ['product-link'] },
      { text: 'Title', parentTag: 'h4', parentClass: ['product-title'] },
      { text: '$1', parentTag: 'h5', parentClass: null },
    ]);
  });

  it('marks buttons, clicked options and visited products in text_rich', () => {
    const html = [
      '<button class="btn">Back to Search</button>',
      '<a class="product-link" href="/a">B01</a>',
      '<a class="product-link" href="/b">B02</a>',
      '<h4>scent</h4><label>citrus</label><label>lavender</label><label>3 oz</label>',
      '<p> raw </p>',
    ].join('\n');
    const rich = richTextFromNodes(visibleTextNodes(html), {
      url: 'http://x/item_page/s/B01/k/1/{"scent": "citrus", "size": "3 oz"}',
      visitedAsins: new Set(['B02']),
    });
    expect(rich).toBe(
      [
        'You have clicked 3 oz.',
        'You have clicked citrus.',
        '[button] Back to Search [button_]',
        '',
        '[button] B01 [button_]',
        '',
        '[clicked button] B02 [clicked button_]',
        'scent',
        '  [clicked button] citrus [clicked button_]',
        '  [button] lavender [button_]',
        '  [clicked button] 3 oz [clicked button_]',
        ' raw ',
        '',
      ].join('\n'),
    );
  });
});
