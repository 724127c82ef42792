import { afterAll, beforeAll } from 'vitest';
import type { TestServices } from '@benchfleet/testing';
import { startDashboardUnderTest, type DashboardUnderTest } from './dashboard-under-test.js';
import { launchChromium, type HeadlessChromium } from './headless-chromium.js';

/** The dashboard over a test file's services and a Chromium to read it, ready in `beforeAll`. */
export interface DashboardInChromium {
  sut: DashboardUnderTest;
  browser: HeadlessChromium;
  /** A path of the dashboard as a full URL. */
  url(path: string): string;
}

/**
 * Starts the dashboard and Chromium before the file's own `beforeAll` (call it first) and closes
 * both after its tests: the set-up every browser test of the dashboard shares.
 */
export function useDashboardInChromium(services: TestServices): DashboardInChromium {
  const reader = {
    url: (path: string) => `${reader.sut.dashboard.url}${path}`,
  } as DashboardInChromium;
  beforeAll(async () => {
    reader.sut = await startDashboardUnderTest(services);
    reader.browser = await launchChromium();
  });
  afterAll(async () => {
    await reader.browser?.close();
    await reader.sut?.close();
  });
  return reader;
}
