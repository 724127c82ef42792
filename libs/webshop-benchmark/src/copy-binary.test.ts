import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { to as copyTo } from 'pg-copy-streams';
import { describe, expect, it } from 'vitest';
import { useTestServices } from '@benchfleet/testing';
import { readBinaryCopyOfOneColumn } from './copy-binary.js';
import { withPostgresClient } from '@benchfleet/db';

const services = useTestServices();

/** What Postgres sends for `copy (select v from values …) to stdout (format binary)`, as one buffer. */
async function copyOutput(values: Buffer[]): Promise<Buffer> {
  return withPostgresClient(services.db, async (client) => {
    await client.query('create temporary table copied (seq int, v bytea)');
    for (const [seq, value] of values.entries())
      await client.query('insert into copied values ($1, $2)', [seq, value]);
    const pieces: Buffer[] = [];
    for await (const piece of client.query(
      copyTo('copy (select v from copied order by seq) to stdout (format binary)'),
    ))
      pieces.push(piece as Buffer);
    await client.query('drop table copied');
    return Buffer.concat(pieces);
  });
}

function inPieces(data: Buffer, size: number): Readable {
  const pieces: Buffer[] = [];
  for (let at = 0; at < data.length; at += size) pieces.push(data.subarray(at, at + size));
  return Readable.from(pieces);
}

async function read(stream: Readable): Promise<{ rows: number; bytes: Buffer }> {
  const got: Buffer[] = [];
  const rows = await readBinaryCopyOfOneColumn(
    stream,
    (piece) => void got.push(Buffer.from(piece)),
  );
  return { rows, bytes: Buffer.concat(got) };
}

describe('readBinaryCopyOfOneColumn', () => {
  it('gives back the bytes of every row in order, however the stream is cut', async () => {
    const values = [
      randomBytes(70_000),
      Buffer.alloc(0),
      Buffer.from([0xff, 0xff]),
      randomBytes(3),
    ];
    const output = await copyOutput(values);
    for (const size of [1, 2, 5, 7, 4096, output.length]) {
      const { rows, bytes } = await read(inPieces(output, size));
      expect(rows, `pieces of ${size}`).toBe(4);
      expect(bytes.equals(Buffer.concat(values)), `pieces of ${size}`).toBe(true);
    }
  });

  it('refuses a stream cut short, a null and what is not binary COPY output', async () => {
    const output = await copyOutput([randomBytes(100)]);
    await expect(read(inPieces(output.subarray(0, output.length - 2), 16))).rejects.toThrow(
      'ended early',
    );
    await expect(read(inPieces(output.subarray(0, 60), 16))).rejects.toThrow('ended early');
    const withNull = await withPostgresClient(services.db, async (client) => {
      const pieces: Buffer[] = [];
      for await (const piece of client.query(
        copyTo('copy (select null::bytea) to stdout (format binary)'),
      ))
        pieces.push(piece as Buffer);
      return Buffer.concat(pieces);
    });
    await expect(read(inPieces(withNull, 3))).rejects.toThrow('null');
    await expect(read(Readable.from([Buffer.from('text,output\n'.repeat(4))]))).rejects.toThrow(
      'not in the binary format',
    );
  });
});
