import type { Readable } from 'node:stream';

// PostgreSQL's binary COPY format (docs: "COPY … Binary Format"): an 11-byte signature, a 32-bit
// flags field and a header extension of a given length; then per row a 16-bit field count (-1
// ends the data) and per field a 32-bit length (-1 for null) and the value's bytes.
const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/**
 * Reads a `COPY (select one_bytea_column …) TO STDOUT (FORMAT binary)` stream and hands each
 * value's bytes, in row order, to `onBytes` as they arrive (pieces of a value, never a whole one
 * copied together), awaiting it before reading on. Returns the number of rows. A value that is
 * null or a row of other than one field is refused.
 */
export async function readBinaryCopyOfOneColumn(
  stream: Readable,
  onBytes: (piece: Buffer) => Promise<void> | void,
): Promise<number> {
  let pending = Buffer.alloc(0);
  let headerDone = false;
  let valueLeft = 0;
  let rows = 0;
  let ended = false;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let data = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
    pending = Buffer.alloc(0);
    while (data.length > 0 && !ended) {
      if (valueLeft > 0) {
        const piece = data.subarray(0, Math.min(valueLeft, data.length));
        valueLeft -= piece.length;
        data = data.subarray(piece.length);
        await onBytes(piece);
        continue;
      }
      if (!headerDone) {
        if (data.length < SIGNATURE.length + 8) break;
        if (!data.subarray(0, SIGNATURE.length).equals(SIGNATURE))
          throw new Error('COPY output is not in the binary format');
        const extension = data.readUInt32BE(SIGNATURE.length + 4);
        if (data.length < SIGNATURE.length + 8 + extension) break;
        data = data.subarray(SIGNATURE.length + 8 + extension);
        headerDone = true;
        continue;
      }
      if (data.length < 2) break;
      const fields = data.readInt16BE(0);
      if (fields === -1) {
        ended = true;
        break;
      }
      if (fields !== 1) throw new Error(`COPY row has ${fields} fields, expected 1`);
      if (data.length < 6) break;
      const length = data.readInt32BE(2);
      if (length < 0) throw new Error('COPY row holds a null value');
      data = data.subarray(6);
      valueLeft = length;
      rows += 1;
    }
    if (!ended && data.length > 0) pending = Buffer.from(data);
  }
  if (!ended || valueLeft > 0) throw new Error('COPY output ended early');
  return rows;
}
