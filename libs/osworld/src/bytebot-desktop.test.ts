import { afterEach, describe, expect, it } from 'vitest';
import { startFakeBytebotDesktop, type FakeBytebotDesktop } from '@benchfleet/testing';
import { BytebotDesktopClient } from './bytebot-desktop.js';

let desktop: FakeBytebotDesktop | undefined;
afterEach(async () => {
  await desktop?.close();
  desktop = undefined;
});

describe('BytebotDesktopClient.healthProblem', () => {
  it('asks for the cursor position; names the desktop and the cause when it is gone, frozen or back', async () => {
    desktop = await startFakeBytebotDesktop();
    const sut = new BytebotDesktopClient(`${desktop.url}/`, 200);
    expect(await sut.healthProblem()).toBeNull();
    expect(desktop.stats.actions).toEqual({ cursor_position: 1 });

    await desktop.kill();
    expect(await sut.healthProblem()).toBe(
      `the Bytebot desktop at ${desktop.url} does not answer (ECONNREFUSED)`,
    );
    await desktop.revive();
    expect(await sut.healthProblem()).toBeNull();

    desktop.freeze();
    expect(await sut.healthProblem()).toBe(
      `the Bytebot desktop at ${desktop.url} does not answer (no answer within 0.2 s)`,
    );
    expect(desktop.stats.unanswered).toBe(1);
  });

  it('an answer that is not a cursor position fails the probe', async () => {
    const sut = new BytebotDesktopClient('http://127.0.0.1:9/not-here', 200);
    expect(await sut.healthProblem()).toMatch(
      /^the Bytebot desktop at http:\/\/127\.0\.0\.1:9 does not answer \(/,
    );
    desktop = await startFakeBytebotDesktop();
    const wrongPath = new BytebotDesktopClient(`${desktop.url}/api`, 200);
    expect(await wrongPath.healthProblem()).toBe(
      `the Bytebot desktop at ${desktop.url} does not answer (HTTP 404)`,
    );
  });
});
