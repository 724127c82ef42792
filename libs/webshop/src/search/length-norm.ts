// Lucene 8 stores a document's field length in one byte (SmallFloat.intToByte4) and BM25 reads it
// back through a 256-entry table, so lengths above 40 are rounded down to 4 significant bits of
// (length - 24). Scores must use the decoded length, not the true one.

const EXACT_BELOW = 24;

function bitLength(value: number): number {
  return 32 - Math.clz32(value);
}

/** SmallFloat.intToByte4: the one-byte norm Lucene stores for a field length. */
export function encodeLengthNorm(length: number): number {
  if (length < 0) throw new RangeError(`field length must not be negative: ${length}`);
  if (length < EXACT_BELOW) return length;
  const value = length - EXACT_BELOW;
  const bits = bitLength(value);
  if (bits < 4) return EXACT_BELOW + value;
  const shift = bits - 4;
  return EXACT_BELOW + (((value >>> shift) & 7) | ((shift + 1) << 3));
}

/** SmallFloat.byte4ToInt: the field length BM25 sees for a stored norm byte. */
export function decodeLengthNorm(norm: number): number {
  if (norm < EXACT_BELOW) return norm;
  const packed = norm - EXACT_BELOW;
  const exponent = packed >>> 3;
  if (exponent === 0) return EXACT_BELOW + (packed & 7);
  return EXACT_BELOW + ((packed & 7) | 8) * 2 ** (exponent - 1);
}

/** Decoded lengths for the 256 norm bytes, as Lucene's float LENGTH_TABLE holds them. */
export const LENGTH_NORM_TABLE: Float32Array = Float32Array.from({ length: 256 }, (_, norm) =>
  decodeLengthNorm(norm),
);
