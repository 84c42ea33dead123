/**
 * A chunk's committed rows, one bit per row from the chunk's first row: what the sink holds of the chunk, kept
 * in the chunk's own row so that a worker taking it over skips exactly those rows (rows are done out of order,
 * so a position alone would send again the rows committed after a gap).
 */
export function emptyBits(rows: number): Buffer {
  return Buffer.alloc(Math.ceil(rows / 8));
}

export function hasBit(bits: Buffer, i: number): boolean {
  return (bits[i >> 3] & (1 << (i & 7))) !== 0;
}

/** Sets the bit; true when it was not set before. */
export function setBit(bits: Buffer, i: number): boolean {
  const mask = 1 << (i & 7);
  if ((bits[i >> 3] & mask) !== 0) return false;
  bits[i >> 3] |= mask;
  return true;
}

export function clearBit(bits: Buffer, i: number): boolean {
  const mask = 1 << (i & 7);
  if ((bits[i >> 3] & mask) === 0) return false;
  bits[i >> 3] &= ~mask;
  return true;
}

/** The committed position: how many rows from the chunk's start are committed without a gap. */
export function prefixOf(bits: Buffer, rows: number): number {
  let i = 0;
  while (i < rows && (i & 7) === 0 && i + 8 <= rows && bits[i >> 3] === 0xff) i += 8;
  while (i < rows && hasBit(bits, i)) i += 1;
  return i;
}

export function countBits(bits: Buffer, rows: number): number {
  let n = 0;
  for (let i = 0; i < rows; i += 1) if (hasBit(bits, i)) n += 1;
  return n;
}

/** The chunk's bits as the database gave them (bytea), sized to its rows. */
export function bitsOf(value: unknown, rows: number): Buffer {
  const out = emptyBits(rows);
  if (Buffer.isBuffer(value)) value.copy(out, 0, 0, Math.min(value.length, out.length));
  return out;
}
