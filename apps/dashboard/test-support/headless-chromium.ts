import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { chromiumPrerequisite } from '@benchfleet/testing';

// Debian's Chromium, never a downloaded browser; the tests' global setup installs it when missing.
const CHROMIUM_PATH = chromiumPrerequisite().path;

/**
 * How long a page's waits (a locator's, a navigation's) may take: a bound that only catches a
 * hang. Playwright's own 30 s ran out at load 10-15 while the page was on its way (a search
 * answered, a table drawn); tests wait for the text or element they need, never for an amount of time.
 */
const HANG_BOUND_MS = 600_000;

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

export interface HeadlessChromium {
  context: BrowserContext;
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

/** A fresh profile in a temporary directory, removed on close. */
export async function launchChromium(
  viewport = { width: 1400, height: 1000 },
): Promise<HeadlessChromium> {
  const profile = await mkdtemp(join(tmpdir(), 'benchfleet-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: FLAGS,
    viewport,
  });
  context.setDefaultTimeout(HANG_BOUND_MS);
  context.setDefaultNavigationTimeout(HANG_BOUND_MS);
  return {
    context,
    newPage: () => context.newPage(),
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** Waits, with Playwright's own polling of the page, until the locator's text contains `text`. */
export async function waitForText(
  locator: Locator,
  text: string | RegExp,
  timeoutMs = HANG_BOUND_MS,
): Promise<string> {
  const matching = locator.filter({ hasText: text }).first();
  await matching.waitFor({ state: 'visible', timeout: timeoutMs });
  return (await matching.textContent()) ?? '';
}
