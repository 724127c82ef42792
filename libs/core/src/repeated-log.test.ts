import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from './logger.js';
import { causeOf, RepeatedLog } from './repeated-log.js';

function capture() {
  const lines: Array<{ msg: string; repeated?: number; job?: string }> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number]);
      done();
    },
  });
  // pino writes synchronously to a plain stream: what is logged is in `lines` at once.
  return { lines, logger: createLogger({ level: 'info', destination }) };
}

afterEach(() => void vi.useRealTimers());

describe('RepeatedLog', () => {
  // Once: a Redis turned read-only made two workers write 510,000 identical lines in a minute.
  it('logs a cause once per interval, then one line with the count while it goes on', () => {
    vi.useFakeTimers();
    const { lines, logger } = capture();
    const sut = new RepeatedLog(logger, 30_000);
    for (let i = 0; i < 10_000; i += 1)
      sut.error('READONLY', { job: String(i) }, 'worker error: READONLY');
    expect(lines.map((line) => line.msg)).toEqual(['worker error: READONLY']);
    vi.advanceTimersByTime(30_000);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({
      msg: 'worker error: READONLY (9999 more time(s) in the last 30 s)',
      repeated: 9999,
      job: '9999',
    });
    // Still going: one line per interval, not two.
    for (let i = 0; i < 5; i += 1) sut.error('READONLY', {}, 'worker error: READONLY');
    vi.advanceTimersByTime(30_000);
    expect(lines.map((line) => line.repeated)).toEqual([undefined, 9999, 5]);
    // Over: the next interval says nothing, and the cause is told again at once when it returns.
    vi.advanceTimersByTime(30_000);
    expect(lines).toHaveLength(3);
    sut.error('READONLY', {}, 'worker error: READONLY');
    expect(lines).toHaveLength(4);
  });

  it('keeps causes apart, and tells what is still counted when flushed', () => {
    vi.useFakeTimers();
    const { lines, logger } = capture();
    const sut = new RepeatedLog(logger, 30_000);
    sut.warn('a', {}, 'cause a');
    sut.warn('b', {}, 'cause b');
    sut.warn('a', {}, 'cause a');
    expect(lines.map((line) => line.msg)).toEqual(['cause a', 'cause b']);
    sut.flush();
    expect(lines.map((line) => line.msg)).toEqual([
      'cause a',
      'cause b',
      'cause a (1 more time(s) in the last 30 s)',
    ]);
  });
});

describe('causeOf', () => {
  it('drops what changes between two errors of one cause: ids, numbers', () => {
    expect(causeOf(new Error('Missing lock for job 1234. moveToFinished'))).toBe(
      causeOf(new Error('Missing lock for job 99. moveToFinished')),
    );
    expect(
      causeOf(
        new Error(
          'READONLY script: d96ca626f1ea141b44a856b312fc636d99aa9ea9, on @user_script:217.',
        ),
      ),
    ).toBe('READONLY script: …, on @user_script:#.');
  });
});
