import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, redactSecrets } from './logger.js';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, destination };
}

describe('redactSecrets', () => {
  it('removes passwords in URLs, bearer tokens and sk- keys', () => {
    expect(redactSecrets('redis://:hunter2@redis:6379/0')).toBe('redis://:***@redis:6379/0');
    expect(redactSecrets('postgres://bench:s3cret@db/x')).toBe('postgres://bench:***@db/x');
    expect(redactSecrets('Authorization: Bearer abc.def-123')).toBe('Authorization: Bearer ***');
    expect(redactSecrets('key sk-proj-ABCDEFGHIJKLMNOP')).toBe('key sk-***');
    expect(redactSecrets('http://host:8080/path')).toBe('http://host:8080/path');
  });
});

describe('createLogger', () => {
  it('redacts secret fields, headers and secrets inside messages, also in child loggers', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ level: 'info', destination }).child({ run: 'r1' });
    logger.info(
      {
        apiKey: 'sk-live-1234567890',
        headers: { Authorization: 'Bearer xyz' },
        url: 'postgres://u:pw@h/db',
      },
      'calling postgres://u:pw@h/db',
    );
    logger.error({ err: new Error('failed with key sk-abcdefghijkl') }, 'boom');
    const text = lines.join('\n');
    expect(text).not.toContain('sk-live-1234567890');
    expect(text).not.toContain('xyz');
    expect(text).not.toContain(':pw@');
    expect(text).not.toContain('sk-abcdefghijkl');
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ run: 'r1', apiKey: '***' });
  });
});
