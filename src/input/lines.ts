/**
 * Splits a byte stream into physical lines, holding at most one chunk and its lines plus one partial line.
 * A line longer than `maxLineBytes` is not buffered: its bytes are discarded up to the next newline and it
 * is handed over as `tooLong`, so a 2 GB single-line file cannot exhaust memory.
 */
import type { Readable } from 'node:stream';

export interface PhysicalLine {
  /** Line number, from 1. */
  readonly line: number;
  /** Decoded text without the line terminator (invalid UTF-8 becomes U+FFFD). */
  readonly text: string;
  /** True when the line exceeded maxLineBytes; `text` is then empty. */
  readonly tooLong: boolean;
  readonly bytes: number;
}

const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: false });

/** The items of batches one by one, for readers that want them so (the runner takes whole batches). */
export async function* unbatch<T>(batches: AsyncIterable<readonly T[]>): AsyncGenerator<T> {
  // for-of, not yield*: yield* over an array wraps it in an async iterator, promises per item.
  for await (const batch of batches) for (const item of batch) yield item;
}

/** The lines of a stream one by one (see `readLineBatches`). */
export function readLines(stream: Readable | AsyncIterable<Buffer | string>, maxLineBytes: number): AsyncGenerator<PhysicalLine> {
  return unbatch(readLineBatches(stream, maxLineBytes));
}

/**
 * The lines of a stream, handed over a chunk's worth at a time: every step of an async generator costs
 * promises, so a reader of millions of lines takes them in batches (one per chunk read, never empty).
 */
export async function* readLineBatches(stream: Readable | AsyncIterable<Buffer | string>, maxLineBytes: number): AsyncGenerator<PhysicalLine[]> {
  let parts: Buffer[] = [];
  let partBytes = 0;
  let skipping = false;
  let skippedBytes = 0;
  let line = 0;
  for await (const raw of stream as AsyncIterable<Buffer | string>) {
    const chunk = typeof raw === 'string' ? Buffer.from(raw) : raw;
    const batch: PhysicalLine[] = [];
    let start = 0;
    while (start <= chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl === -1 ? chunk.length : nl;
      const piece = chunk.subarray(start, end);
      if (skipping) skippedBytes += piece.length;
      else if (partBytes + piece.length > maxLineBytes) {
        skipping = true;
        skippedBytes = partBytes + piece.length;
        parts = [];
        partBytes = 0;
      } else if (piece.length > 0) {
        parts.push(piece);
        partBytes += piece.length;
      }
      if (nl === -1) break;
      line += 1;
      batch.push(finish());
      start = nl + 1;
    }
    if (batch.length > 0) yield batch;
  }
  if (skipping || partBytes > 0) {
    line += 1;
    yield [finish()];
  }

  function finish(): PhysicalLine {
    if (skipping) {
      const out = { line, text: '', tooLong: true, bytes: skippedBytes };
      skipping = false;
      skippedBytes = 0;
      return out;
    }
    let buf = parts.length === 1 ? parts[0] : Buffer.concat(parts, partBytes);
    if (buf.length > 0 && buf[buf.length - 1] === 0x0d) buf = buf.subarray(0, buf.length - 1);
    if (line === 1 && buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) buf = buf.subarray(3);
    const out = { line, text: decoder.decode(buf), tooLong: false, bytes: partBytes };
    parts = [];
    partBytes = 0;
    return out;
  }
}
