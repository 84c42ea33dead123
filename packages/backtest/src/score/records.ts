/**
 * Reads back a file of fixed-width float64 records (written with files.ts NumberSink) in large chunks: the
 * score statistics pass over one record per compared key several times, and a generator step per number
 * would cost more than the arithmetic.
 */
import { closeSync, openSync, readSync } from 'node:fs';

/** Calls `fn(buf, i)` for each record; the record is buf[i .. i + width). */
export function forEachRecord(path: string, width: number, fn: (buf: Float64Array, at: number) => void): void {
  const perChunk = Math.max(1, Math.floor(65_536 / width));
  const buf = new Float64Array(perChunk * width);
  const bytes = new Uint8Array(buf.buffer);
  const recordBytes = width * 8;
  const fd = openSync(path, 'r');
  try {
    let carry = 0;
    for (;;) {
      const got = readSync(fd, bytes, carry, bytes.length - carry, null);
      const have = carry + got;
      const whole = Math.floor(have / recordBytes);
      for (let r = 0; r < whole; r += 1) fn(buf, r * width);
      carry = have - whole * recordBytes;
      if (got <= 0) break;
      // A chunk boundary inside a record: move its start to the front (rare; reads are whole records normally).
      if (carry > 0) bytes.copyWithin(0, whole * recordBytes, have);
    }
  } finally {
    closeSync(fd);
  }
}
