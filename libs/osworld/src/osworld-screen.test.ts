import { describe, expect, it } from 'vitest';
import { BYTEBOT_SCREEN, parseScreenSize } from './osworld-screen.js';

describe('parseScreenSize', () => {
  it('reads WIDTHxHEIGHT', () => {
    expect(parseScreenSize('1280x960')).toEqual(BYTEBOT_SCREEN);
    expect(parseScreenSize(' 1920x1080 ')).toEqual({ width: 1920, height: 1080 });
  });

  it.each(['1280', '1280X960', '0x960', '1280x', 'x960', '-1x5', '1280x960px'])(
    'refuses %s with what it expects',
    (text) => {
      expect(() => parseScreenSize(text)).toThrow(
        `expected WIDTHxHEIGHT in pixels, e.g. 1280x960, got "${text}"`,
      );
    },
  );
});
