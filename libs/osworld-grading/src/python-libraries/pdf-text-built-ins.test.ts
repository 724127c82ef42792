import { expect, it } from 'vitest';

// Taken before pdf-text.ts is loaded (a dynamic import below): V8's own built-ins.
const builtIns = {
  stringify: JSON.stringify,
  parse: JSON.parse,
  push: Array.prototype.push,
  toString: Function.prototype.toString,
};

it("reading a PDF leaves the process's JSON, Array.prototype.push and Function.prototype.toString V8's own (pdf.js's legacy build polyfills them, many times slower)", async () => {
  const { extractPdfText } = await import('./pdf-text.js');
  await expect(extractPdfText(new TextEncoder().encode('not a pdf'))).rejects.toThrow();
  expect({
    stringify: JSON.stringify,
    parse: JSON.parse,
    push: Array.prototype.push,
    toString: Function.prototype.toString,
  }).toEqual(builtIns);
  expect(JSON.stringify({ a: [1, 'b'] })).toBe('{"a":[1,"b"]}');
});
