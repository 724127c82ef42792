// A graded stack's reset on the real desktop image: deploy/desktop-reset.mjs (the worker's
// --reset-command: the container recreated from its own configuration) until the desktop is ready
// (bytebotd answers a screenshot and OSWorld's VM server answers), side by side with a plain
// `docker rm -f` + `docker run` of the same image and arguments, in turns within one run.
//
//   npx tsx bench/desktop-reset.ts [--rounds 10]
//
// The images are built first when their inputs changed (deploy/desktop/build-desktop-images.mjs).
// Target (issue 28): reset + ready p95 ≤ 15 s on this machine.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { startRealDesktop, type RealDesktop } from '@benchfleet/testing';

const run = promisify(execFile);

interface Round {
  readonly commandMs: number;
  readonly readyMs: number;
}

async function timed(desktop: RealDesktop, recreate: () => Promise<unknown>): Promise<Round> {
  const started = Date.now();
  await recreate();
  const commandMs = Date.now() - started;
  const readyMs = await desktop.waitUntilReady();
  return { commandMs, readyMs };
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

function row(name: string, rounds: readonly Round[]): string {
  const totals = rounds.map((round) => round.commandMs + round.readyMs);
  const seconds = (ms: number) => (ms / 1000).toFixed(1);
  return [
    name.padEnd(34),
    `p50 ${seconds(percentile(totals, 50))} s`,
    `p95 ${seconds(percentile(totals, 95))} s`,
    `max ${seconds(Math.max(...totals))} s`,
    `(command p50 ${seconds(
      percentile(
        rounds.map((r) => r.commandMs),
        50,
      ),
    )} s,`,
    `ready p50 ${seconds(
      percentile(
        rounds.map((r) => r.readyMs),
        50,
      ),
    )} s)`,
  ].join('  ');
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '10' } } });
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1) {
    process.stderr.write(`desktop-reset: --rounds ${values.rounds}: give a whole number ≥ 1\n`);
    process.exit(2);
  }
  const started = await startRealDesktop({ name: 'bench' });
  if (!started.available) {
    process.stderr.write(`desktop-reset: ${started.reason}\n`);
    process.exit(2);
  }
  const { desktop } = started;
  try {
    const reset: Round[] = [];
    const plain: Round[] = [];
    for (let round = 1; round <= rounds; round++) {
      reset.push(await timed(desktop, () => run('/bin/sh', ['-c', desktop.resetCommand])));
      plain.push(
        await timed(desktop, async () => {
          await run('docker', ['rm', '-f', desktop.container]);
          await run('docker', [...desktop.runArgs]);
        }),
      );
      const last = (list: Round[]) =>
        ((list.at(-1)!.commandMs + list.at(-1)!.readyMs) / 1000).toFixed(1);
      process.stderr.write(
        `round ${round}/${rounds}: reset + ready ${last(reset)} s, docker run + ready ${last(plain)} s\n`,
      );
    }
    const { stdout: size } = await run('docker', [
      'image',
      'inspect',
      '--format',
      '{{.Size}}',
      desktop.image,
    ]);
    process.stdout.write(
      [
        `${desktop.image}: ${(Number(size) / 1024 ** 3).toFixed(2)} GiB, ${rounds} rounds in turns`,
        row('desktop-reset.mjs + ready', reset),
        row('docker rm -f + docker run + ready', plain),
        '',
      ].join('\n'),
    );
  } finally {
    await desktop.close();
  }
}

await main();
