// A WebShop catalog from Postgres as a ready Store: shared by the WebShop workers and the site.

export * from './catalog-store-loader.js';
