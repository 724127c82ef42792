import { describe, expect, it } from 'vitest';
import { holdOffMs, parseResetDuration, readRateHints as sut } from './rate-limit-headers.js';

describe('readRateHints', () => {
  it("reads OpenAI's rate-limit headers, from fetch Headers or a plain record", () => {
    const headers = new Headers({
      'x-ratelimit-limit-requests': '500',
      'x-ratelimit-limit-tokens': '30000',
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-remaining-tokens': '29000',
      'x-ratelimit-reset-requests': '6m0s',
      'x-ratelimit-reset-tokens': '20ms',
      'retry-after': '7',
    });
    const expected = {
      retryAfterMs: 7000,
      limitRequests: 500,
      limitTokens: 30000,
      remainingRequests: 0,
      remainingTokens: 29000,
      resetRequestsMs: 360_000,
      resetTokensMs: 20,
    };
    expect(sut(headers)).toEqual(expected);
    expect(sut(Object.fromEntries(headers.entries()))).toEqual(expected);
    expect(sut(undefined)).toEqual({});
  });

  it('prefers retry-after-ms, reads an HTTP date, and ignores what is not a number', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(sut({ 'retry-after-ms': '1500', 'retry-after': '9' }, now).retryAfterMs).toBe(1500);
    expect(sut({ 'retry-after': 'Wed, 01 Jan 2025 00:00:03 GMT' }, now).retryAfterMs).toBe(3000);
    expect(sut({ 'retry-after': 'soon', 'x-ratelimit-limit-requests': 'many' }, now)).toEqual({});
  });

  it('parses Go-style durations', () => {
    expect(
      ['1s', '1.5s', '20ms', '6m0s', '1h2m3s', '0.25', 'x', ''].map(parseResetDuration),
    ).toEqual([1000, 1500, 20, 360_000, 3_723_000, 250, undefined, undefined]);
  });
});

describe('holdOffMs', () => {
  it('waits the Retry-After, else the reset of the exhausted limit, else the sooner reset, else the fallback', () => {
    expect(holdOffMs({ retryAfterMs: 2000, resetRequestsMs: 9000 }, 1000)).toBe(2000);
    expect(holdOffMs({ remainingTokens: 0, resetTokensMs: 4000, resetRequestsMs: 100 }, 1000)).toBe(
      4000,
    );
    expect(holdOffMs({ resetTokensMs: 4000, resetRequestsMs: 300 }, 1000)).toBe(300);
    expect(holdOffMs({}, 1000)).toBe(1000);
  });
});
