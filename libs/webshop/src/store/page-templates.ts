// HTML of the five WebShop pages, laid out like the original Jinja templates render them
// (blank lines left by template tags included), so that text observations derived from the HTML
// and the `html` observation mode match the original byte for byte.
import { pythonFloatRepr } from '../catalog/index.js';
import type { PageLinks, SelectedOptions, SubPageName } from './page-links.js';
import { escapeHtml as e, flaskToJsonDict, jinjaText } from './python-text-formats.js';
import type { StoreProduct } from './store-product.js';

interface PageBase {
  readonly sessionId: string;
  readonly instructionText: string;
}

export interface SearchPageView extends PageBase {
  readonly kind: 'search';
}

export interface ResultsPageView extends PageBase {
  readonly kind: 'results';
  readonly keywords: readonly string[];
  readonly page: number;
  readonly total: number;
  readonly products: readonly StoreProduct[];
}

export interface ItemPageView extends PageBase {
  readonly kind: 'item';
  readonly keywords: readonly string[];
  readonly page: number;
  readonly product: StoreProduct;
  readonly options: SelectedOptions;
  readonly showAttributes: boolean;
}

export interface SubPageView extends PageBase {
  readonly kind: 'sub';
  readonly keywords: readonly string[];
  readonly page: number;
  readonly product: StoreProduct;
  readonly options: SelectedOptions;
  readonly subPage: SubPageName;
}

/** Values of the done page's (hidden) debug block, already in their display form. */
export interface DonePageDetails {
  readonly mturkCode: string;
  readonly purchasedAttributes: string;
  readonly purchasedCategory: string;
  readonly purchasedQuery: string;
  readonly purchasedProductCategory: string;
  readonly goalAsin: string;
  readonly goalOptions: string;
  readonly goalAttributes: string;
  readonly goalPriceUpper: string;
  readonly goalInstructionText: string;
  readonly goalCategory: string;
  readonly goalProductCategory: string;
  readonly goalQuery: string;
  readonly goal: string;
  readonly rewardInfo: string;
}

export interface DonePageView {
  readonly kind: 'done';
  readonly sessionId: string;
  readonly asin: string;
  readonly options: SelectedOptions;
  readonly reward: number;
  /** `null` renders the page as the text environment does: `None` and empty fields. */
  readonly details: DonePageDetails | null;
}

export type PageView = SearchPageView | ResultsPageView | ItemPageView | SubPageView | DonePageView;

const SEARCH_HEAD = [
  '<!DOCTYPE html>',
  '<html>',
  '  <head>',
  '    <link rel="stylesheet" href="/static/style.css">',
  '    <link rel="stylesheet" href="https://cdnjs.cloudflare.com/ajax/libs/font-awesome/4.7.0/css/font-awesome.min.css">',
  '    <link rel="stylesheet" href="https://maxcdn.bootstrapcdn.com/bootstrap/3.4.1/css/bootstrap.min.css">',
  '    <link rel="icon" href="data:,">',
  '  </head>',
  '  <body>',
  '    <!-- Code reference: https://bootsnipp.com/snippets/m13mN -->',
  '    <div class="container" style="margin-top: 8%;">',
  '      <div class="col-md-6 col-md-offset-3">     ',
  '        <div class="row">',
];

const SEARCH_FOOT = [
  '        </div>            ',
  '      </div>',
  '    </div>',
  '  </body>',
  '</html>',
];

const BROWSE_HEAD = [
  '<!DOCTYPE html>',
  '<html>',
  '  <head>',
  '    <link rel="stylesheet" href="/static/style.css">',
  '    <link rel="stylesheet" href="https://maxcdn.bootstrapcdn.com/bootstrap/3.4.1/css/bootstrap.min.css">',
  '    <link rel="stylesheet" href="https://cdnjs.cloudflare.com/ajax/libs/font-awesome/4.0.3/css/font-awesome.css\t">',
  '    <script src="https://ajax.googleapis.com/ajax/libs/jquery/3.5.1/jquery.min.js"></script>',
  '    <script src="https://stackpath.bootstrapcdn.com/bootstrap/4.3.1/js/bootstrap.bundle.min.js"></script>',
  '    <link rel="icon" href="data:,">',
  '  </head>',
  '  <body>',
  '    <div class="container py-5">',
];

function browseTop(view: PageBase, links: PageLinks): string[] {
  return [
    ...BROWSE_HEAD,
    '      <div class="row top-buffer">',
    '        <div class="col-sm-6">',
    '          <div id="instruction-text" class="text-center">',
    `            <h4>Instruction:<br>${e(view.instructionText)}</h4>`,
    '          </div>',
    '        </div>',
    '      </div>',
    '      <div class="row top-buffer">',
    `        <form method="post" action="${e(links.index(view.sessionId))}">`,
    '          <button type="submit" class="btn btn-success">Back to Search</button>',
    '        </form>',
    '      </div>',
  ];
}

function prevForm(action: string): string[] {
  return [
    '      <div class="row top-buffer">',
    `        <form method="post" action="${e(action)}">`,
    '          <button type="submit" class="btn btn-primary">&lt; Prev</button>',
    '        </form>',
    '      </div>',
  ];
}

function renderSearchPage(view: SearchPageView, links: PageLinks): string[] {
  return [
    ...SEARCH_HEAD,
    '          <div id="logo" class="text-center">',
    '            <h2>WebShop</h2>',
    '          </div>',
    '          <div id="instruction-text" class="text-center">',
    `            <h4>Instruction: <br>${e(view.instructionText)}</h4>`,
    '          </div>',
    `          <form role="form" id="form-buscar" method="post" action="${e(links.index(view.sessionId))}">`,
    '            <div class="form-group">',
    '              <div class="input-group">',
    '                <input id="search_input" class="form-control" type="text" name="search_query" placeholder="Search..." required/>',
    '                <span class="input-group-btn">',
    '                  <button class="btn btn-success" type="submit"><i class="glyphicon glyphicon-search" aria-hidden="true"></i>Search</button>',
    '                </span>',
    '              </div>',
    '            </div>',
    '          </form>',
    ...SEARCH_FOOT,
  ];
}

function resultRow(view: ResultsPageView, product: StoreProduct, links: PageLinks): string[] {
  const itemUrl = links.itemPage(view.sessionId, product.asin, view.keywords, view.page, new Map());
  return [
    '        <div class="col-lg-12 mx-auto list-group-item">',
    '          <div class="col-lg-4">',
    `            <img src="${e(jinjaText(product.mainImage))}" class="result-img">`,
    '          </div>',
    '          <div class="col-lg-8">',
    '            <ul class="list-group shadow">',
    '                <div class="media align-items-lg-center flex-column flex-lg-row p-3">',
    '                  <div class="media-body order-2 order-lg-1 searched-product">',
    '                    ',
    `                    <h4 class="mt-0 font-weight-bold mb-2 product-asin"><a class="product-link" href="${e(itemUrl)}">${e(product.asin)}</a></h5>`,
    `                    <h4 class="mt-0 font-weight-bold mb-2 product-title">${e(product.title)}</h5>`,
    '                    <div class="d-flex align-items-center justify-content-between mt-1">',
    `                      <h5 class="font-weight-bold my-2 product-price">${e(product.priceText)}</h6>`,
    '                    </div>',
    '<!--',
    '                    <div class="d-flex align-items-center justify-content-between mt-1">',
    `                      <h5 class="font-weight-bold my-2 product-category">${e(product.category)}</h5>`,
    '                    </div>',
    '                    <div class="d-flex align-items-center justify-content-between mt-1">',
    `                      <h5 class="font-weight-bold my-2 product-query">${e(product.query)}</h5>`,
    '                    </div>',
    '                    <div class="d-flex align-items-center justify-content-between mt-1">',
    `                      <h5 class="font-weight-bold my-2 product-product_category">${e(product.productCategory)}</h5>`,
    '                    </div>',
    '-->',
    '                  </div>',
    '                </div>',
    '            </ul>',
    '          </div>',
    '        </div>',
    '        ',
  ];
}

function renderResultsPage(view: ResultsPageView, links: PageLinks): string[] {
  const prev =
    view.page > 1
      ? [
          '            <div class="col-sm-2">',
          `              <form method="post" action="${e(links.searchResults(view.sessionId, view.keywords, view.page - 1))}">`,
          '                <button type="submit" class="btn btn-primary">&lt; Prev</button>',
          '              </form>',
          '            </div>',
        ]
      : ['            <div class="col-sm-2">', '            </div>'];
  return [
    ...browseTop(view, links),
    '      <div class="row top-buffer">',
    '        <div class="col-sm-8">',
    '          <div class="display-4">',
    `            <h3>Page ${view.page} (Total results: ${view.total})</h3>`,
    '          </div>',
    '          ',
    ...prev,
    '            <div class="col-sm-2">',
    `              <form method="post" action="${e(links.searchResults(view.sessionId, view.keywords, view.page + 1))}">`,
    '                <button type="submit" class="btn btn-primary">Next &gt;</button>',
    '              </form>',
    '            </div>',
    '          ',
    '        </div>',
    '      </div>',
    '',
    '      <div class="row top-buffer">',
    '        ',
    ...view.products.flatMap((product) => resultRow(view, product, links)),
    '      </div>',
    '    </div>',
    '  </body>',
    '</html>',
  ];
}

function optionGroup(
  view: ItemPageView,
  name: string,
  values: readonly string[],
  links: PageLinks,
): string[] {
  const lines = [
    '            <div class="row top-buffer">',
    `              <h4>${e(name)}</h4>`,
    '              <div class="radio-toolbar">',
    '                ',
  ];
  values.forEach((value, index) => {
    const withChoice = new Map(view.options).set(name, value);
    const url = links.itemPage(
      view.sessionId,
      view.product.asin,
      view.keywords,
      view.page,
      withChoice,
    );
    const id = `radio_${e(name)}${index}`;
    lines.push(
      '                  ',
      '                  ',
      '                  ',
      `                  <input type="radio" id="${id}" name="${e(name)}" value="${e(value)}" data-url="${e(url)}">`,
      `                  <label for="${id}">${e(value)}</label>`,
      '                ',
    );
  });
  lines.push('              </div>', '            </div>', '          ');
  return lines;
}

function subPageButton(
  view: ItemPageView,
  name: string,
  subPage: SubPageName,
  links: PageLinks,
): string[] {
  const action = links.itemSubPage(
    view.sessionId,
    view.product.asin,
    view.keywords,
    view.page,
    subPage,
    view.options,
  );
  return [
    `            <div class="col-sm-3" name="${name}">`,
    `              <form method="post" action="${e(action)}">`,
    `                <button class="btn btn-primary" type="submit">${subPage}</button>`,
    '              </form>',
    '            </div>',
  ];
}

function renderItemPage(view: ItemPageView, links: PageLinks): string[] {
  const { product } = view;
  const attributesButton = view.showAttributes
    ? ['            ', ...subPageButton(view, 'attributes', 'Attributes', links), '            ']
    : ['            '];
  return [
    ...browseTop(view, links),
    ...prevForm(links.searchResults(view.sessionId, view.keywords, view.page)),
    '      <div class="row top-buffer">',
    '        <div class="col-md-4 mb-4 mb-md-0">',
    '          <div class="row top-buffer">',
    `            <img id="product-image" src="${e(jinjaText(product.mainImage))}" class="item-page-img">`,
    '          </div>',
    '          ',
    ...product.options.flatMap((option) => optionGroup(view, option.name, option.values, links)),
    '        </div>',
    '        <div class="col-md-6">',
    `          <h2>${e(product.title)}</h2>`,
    `          <h4>Price: ${e(product.priceText)}</h4>`,
    '          <h4>Rating: N.A.</h4>',
    '          <div class="row top-buffer">',
    ...subPageButton(view, 'description', 'Description', links),
    ...subPageButton(view, 'bulletpoints', 'Features', links),
    ...subPageButton(view, 'reviews', 'Reviews', links),
    ...attributesButton,
    '          </div>',
    '        </div>',
    '        <div class="col-sm-2">',
    '          <div class="row top-buffer">',
    `            <form method="post" action="${e(links.done(view.sessionId, product.asin, view.options))}">`,
    '              <button type="submit" class="btn btn-lg purchase">Buy Now</button>',
    '            </form>',
    '          </div>',
    '        </div>',
    '      </div>',
    '    </div>',
    '  </body>',
    '  <script>',
    '    $(document).ready(function() {',
    "      $('input:radio').each(function() {",
    '        //console.log($(this).val());',
    `        let options = JSON.parse(\`${flaskToJsonDict(view.options)}\`);`,
    '        let optionValues = $.map(options, function(value, key) { return value });',
    '        //console.log(optionValues);',
    '        if (optionValues.includes($(this).val())) {',
    "          $(this).prop('checked', true);",
    '',
    `          let option_to_image = JSON.parse(\`${flaskToJsonDict(product.optionImages)}\`);`,
    '//          console.log($(this).val());',
    '//          console.log(options);',
    '//          console.log(option_to_image);',
    '          let image_url = option_to_image[$(this).val()];',
    '',
    '          //console.log(image_url);',
    '          if (image_url) {',
    '            $("#product-image").attr("src", image_url);',
    '          }',
    '        }',
    '        ',
    '        // reload with updated options',
    '        this.addEventListener("click", function() {',
    '          window.location.href = this.dataset.url;',
    '        });',
    '',
    '      });',
    '    });',
    '  </script>',
    '</html>',
  ];
}

function listCard(
  name: string,
  items: readonly string[],
  itemLine: (item: string) => string,
): string[] {
  return [
    `            <div class="col-sm-6" name="${name}">`,
    '              <div class="card card-body">',
    '                <ul>',
    '                  ',
    ...items.flatMap((item) => [itemLine(item), '                  ']),
    '                </ul>',
    '              </div>',
    '            </div>',
  ];
}

function subPageBody(view: SubPageView): string[] {
  const { product } = view;
  switch (view.subPage) {
    case 'Description':
      return [
        '            <div class="col-sm-6" name="description">',
        '              <div class="card card-body">',
        `                <p class="product-info">${e(jinjaText(product.description))}</p>`,
        '              </div>',
        '            </div>',
      ];
    case 'Features':
      return listCard(
        'bulletpoints',
        product.bulletPoints,
        (bullet) => `                  <li><p class="product-info"> ${e(bullet)}</p></li>`,
      );
    case 'Reviews':
      // The original never loads reviews, so its review loop always renders empty.
      return [
        '            <div class="col-sm-6" name="reviews">',
        '              <div class="card card-body">',
        '                ',
        '              </div>',
        '            </div>',
      ];
    case 'Attributes':
      return [
        ...listCard(
          'attributes',
          product.attributes,
          (attribute) => `                  <li><p class="attribute">${e(attribute)}</p></li>`,
        ),
        '            <div class="col-sm-6" name="category">',
        '              <div class="card card-body">',
        `                <h5 class="product-category">${e(product.category)}</h5>`,
        `                <h5 class="product-query">${e(product.query)}</h5>`,
        `                <h5 class="product-product_category">${e(product.productCategory)}</h5>`,
        '              </div>',
        '            </div>',
      ];
  }
}

function renderSubPage(view: SubPageView, links: PageLinks): string[] {
  return [
    ...browseTop(view, links),
    ...prevForm(
      links.itemPage(view.sessionId, view.product.asin, view.keywords, view.page, view.options),
    ),
    '      <div class="row top-buffer">',
    '        <div class="col-md-12">',
    '          <div class="row top-buffer">',
    ...subPageBody(view),
    '          </div>',
    '        </div>',
    '      </div>',
    '    </div>',
    '  </body>',
    '</html>',
  ];
}

function renderDonePage(view: DonePageView): string[] {
  const d = view.details;
  const shown = (value: string | undefined): string => e(value ?? 'None');
  const blank = (value: string | undefined): string => e(value ?? '');
  return [
    ...SEARCH_HEAD,
    '          <div id="thankyou" class="text-center">',
    '            <h1>Thank you for shopping with us!</h1>',
    '          </div>',
    '          <div id="stats" class="text-center">',
    '            <h3 align="mturk_code">Your code: </h3>',
    `            <p><pre>${shown(d?.mturkCode)}</pre> (Paste it in your MTurk interface.)</p>`,
    '            <div style="display:none">',
    '              <h2 align="left">Purchased</h2>',
    '              <hr class="solid">',
    `              <h4 id="asin">asin<pre>${e(view.asin)}</pre></p>`,
    `              <h4 id="options">options<pre>${flaskToJsonDict(view.options)}</pre></h4>`,
    `              <h4 id="purchased_attrs">attrs<pre>${shown(d?.purchasedAttributes)}</pre></h4>`,
    `              <h4 id="purchased-category">category<pre>${shown(d?.purchasedCategory)}</pre></h4>`,
    `              <h4 id="purchased-query">query<pre>${shown(d?.purchasedQuery)}</pre></h4>`,
    `              <h4 id="purchased-pc">product category<pre>${shown(d?.purchasedProductCategory)}</pre></h4>`,
    '              <h2 align="left">Target</h2>',
    '              <hr class="solid">',
    `              <h4 id="goal-asin">asin<pre>${blank(d?.goalAsin)}</pre></p>`,
    `              <h4 id="goal-options">options<pre>${blank(d?.goalOptions)}</pre></h4>`,
    `              <h4 id="goal-attrs">attrs<pre>${blank(d?.goalAttributes)}</pre></h4>`,
    `              <h4 id="goal-price">price upper<pre>${blank(d?.goalPriceUpper)}</pre></h4>`,
    `              <h4 id="goal-instruction-text">instuction text<pre>${blank(d?.goalInstructionText)}</pre></h4>`,
    `              <h4 id="goal-category">category<pre>${blank(d?.goalCategory)}</pre></h4>`,
    `              <h4 id="goal-pc">product category<pre>${blank(d?.goalProductCategory)}</pre></h4>`,
    `              <h4 id="goal-query">query<pre>${blank(d?.goalQuery)}</pre></h4>`,
    `              <h4>Goal <div id="goal"><pre>${shown(d?.goal)}</pre></div></h4>`,
    '              <h2 align="left">Reward</h2>',
    '            </div>',
    '            <hr class="solid">',
    `      \t\t\t<h3   id="reward">Your score (min 0.0, max 1.0)<pre>${pythonFloatRepr(view.reward)}</pre></h3>`,
    `            <h4 hidden>Reward Details <div id="reward_info"><pre>${shown(d?.rewardInfo)}</pre></div></h4>`,
    '          </div>',
    ...SEARCH_FOOT,
  ];
}

export function renderPageHtml(view: PageView, links: PageLinks): string {
  switch (view.kind) {
    case 'search':
      return renderSearchPage(view, links).join('\n');
    case 'results':
      return renderResultsPage(view, links).join('\n');
    case 'item':
      return renderItemPage(view, links).join('\n');
    case 'sub':
      return renderSubPage(view, links).join('\n');
    case 'done':
      return renderDonePage(view).join('\n');
  }
}
