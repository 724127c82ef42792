import { afterEach, describe, expect, it } from 'vitest';
import { startFakeBytebotDesktop, type FakeBytebotDesktop } from '@benchfleet/testing';
import { BytebotDesktopClient } from './bytebot-desktop.js';

let desktop: FakeBytebotDesktop | undefined;
afterEach(async () => {
  await desktop?.close();
  desktop = undefined;
});

// Probes that get an answer (or a refusal) have a deadline that only catches a hang, so that a starved
// test process cannot take a slow answer for a frozen desktop (0.2 s did at load 40). Only the frozen
// desktop, which never answers, meets a short one: long enough for the request to reach it first.
const ANSWERED_DEADLINE_MS = 600_000;
const FROZEN_DEADLINE_MS = 1_000;

describe('BytebotDesktopClient.healthProblem', () => {
  it('asks for the cursor position; names the desktop and the cause when it is gone, frozen or back', async () => {
    desktop = await startFakeBytebotDesktop();
    const sut = new BytebotDesktopClient(`${desktop.url}/`, ANSWERED_DEADLINE_MS);
    expect(await sut.healthProblem()).toBeNull();
    expect(desktop.stats.actions).toEqual({ cursor_position: 1 });

    await desktop.kill();
    expect(await sut.healthProblem()).toBe(
      `the Bytebot desktop at ${desktop.url} does not answer (ECONNREFUSED)`,
    );
    await desktop.revive();
    expect(await sut.healthProblem()).toBeNull();

    desktop.freeze();
    const frozen = new BytebotDesktopClient(`${desktop.url}/`, FROZEN_DEADLINE_MS);
    expect(await frozen.healthProblem()).toBe(
      `the Bytebot desktop at ${desktop.url} does not answer (no answer within 1 s)`,
    );
    expect(desktop.stats.unanswered).toBe(1);
  });

  it('an answer that is not a cursor position fails the probe', async () => {
    const sut = new BytebotDesktopClient('http://127.0.0.1:9/not-here', ANSWERED_DEADLINE_MS);
    expect(await sut.healthProblem()).toMatch(
      /^the Bytebot desktop at http:\/\/127\.0\.0\.1:9 does not answer \(/,
    );
    desktop = await startFakeBytebotDesktop();
    const wrongPath = new BytebotDesktopClient(`${desktop.url}/api`, ANSWERED_DEADLINE_MS);
    expect(await wrongPath.healthProblem()).toBe(
      `the Bytebot desktop at ${desktop.url} does not answer (HTTP 404)`,
    );
  });
});
