import { describe, expect, it } from 'vitest';
import { runCli } from '@benchfleet/testing';
import { invokedCommand } from './scheduler-cli.js';

describe('scheduler CLI', () => {
  it('finds the command the arguments run, or none', () => {
    expect(invokedCommand(['enqueue', '--domain', 'chrome'])).toBe('enqueue');
    expect(invokedCommand(['--help'])).toBeUndefined();
    expect(invokedCommand([])).toBeUndefined();
    expect(invokedCommand(['help', 'export'])).toBe('export');
    expect(invokedCommand(['webshop', 'import', '--demo'])).toBe('webshop');
  });

  it('lists every command in --help without loading them, and loads the one asked for', async () => {
    const top = await runCli('scheduler', ['--help'], process.env);
    expect(top.code).toBe(0);
    for (const name of [
      'migrate',
      'enqueue',
      'runs',
      'status',
      'aggregate',
      'export',
      'compare',
      'cancel',
      'resume',
      'retry',
      'worker',
      'osworld',
      'webshop',
      'demo',
    ]) {
      expect(top.stdout).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
    }
    // The options of a command, and the benchmarks' own, come from its module and the registry.
    const enqueue = await runCli('scheduler', ['help', 'enqueue'], process.env);
    expect(enqueue.code).toBe(0);
    expect(enqueue.stdout).toContain('--max-tasks <n>');
    expect(enqueue.stdout).toContain('--catalog');
    const exportHelp = await runCli('scheduler', ['export', '--help'], process.env);
    expect(exportHelp.stdout).toMatch(/all or nothing; .*osworld/s);
  });
});
