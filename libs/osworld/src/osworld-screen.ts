import type { ScreenSize } from '@benchfleet/osworld-grading';

/** Bytebot's desktop runs Xvfb at 1280×960 (its supervisord.conf); setup's placeholders use it. */
export const BYTEBOT_SCREEN: ScreenSize = { width: 1280, height: 960 };

/**
 * `WIDTHxHEIGHT` (the desktop's screen, for setup's `{SCREEN_WIDTH}` placeholders), e.g. `1280x960`.
 * Throws an Error saying what is expected; the caller names the flag.
 */
export function parseScreenSize(text: string): ScreenSize {
  const match = /^([1-9]\d{1,4})x([1-9]\d{1,4})$/.exec(text.trim());
  if (!match) throw new Error(`expected WIDTHxHEIGHT in pixels, e.g. 1280x960, got "${text}"`);
  return { width: Number(match[1]), height: Number(match[2]) };
}
