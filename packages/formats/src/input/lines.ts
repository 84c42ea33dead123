/**
 * Splits a byte stream into physical lines, holding at most one chunk and its lines plus one partial line.
 * A line longer than `maxLineBytes` is not buffered: its bytes are discarded up to the next newline and it
 * is handed over as `tooLong`, so a 2 GB single-line file cannot exhaust memory. Decoding is per line (bytes
 * that do not decode cost only their own line, flagged `undecodable`), by a byte order mark's encoding, else
 * the one given, else UTF-8; names resolve by the WHATWG label table, legacy encodings through iconv-lite
 * (why not TextDecoder: docs/decisions/legacy-encodings.md).
 */
import { isUtf8 } from 'node:buffer';
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import type Iconv from 'iconv-lite';
import { Utf16ToUtf8 } from './utf16.js';

/**
 * iconv-lite is loaded at the first legacy encoding asked for: its code tables are half a megabyte of code,
 * which every command reading a UTF-8 file (nearly all) would otherwise load and compile at start-up.
 */
let iconvLoaded: typeof Iconv | undefined;
function iconv(): typeof Iconv {
  iconvLoaded ??= createRequire(import.meta.url)('iconv-lite') as typeof Iconv;
  return iconvLoaded;
}

export interface PhysicalLine {
  /** Line number, from 1. */
  readonly line: number;
  /** Decoded text without the line terminator (bytes that do not decode become U+FFFD). */
  readonly text: string;
  /** True when the line exceeded maxLineBytes; `text` is then empty. */
  readonly tooLong: boolean;
  readonly bytes: number;
  /** The line ended in CR LF (the CR is not in `text`): a quoted CSV field spanning lines keeps it. */
  readonly crlf: boolean;
  /** Some of the line's bytes are not valid in the input's encoding. */
  readonly undecodable: boolean;
}

/** The encoding a name stands for (WHATWG labels: `latin1` is windows-1252), or undefined if unknown. */
export function encodingOf(label: string): string | undefined {
  let name: string;
  try {
    name = new TextDecoder(label).encoding;
  } catch {
    return undefined;
  }
  // 'replacement' stands for encodings refused on purpose (ISO-2022-KR, HZ...); a few WHATWG ones
  // (iso-2022-jp, x-mac-cyrillic) iconv-lite does not have.
  return name === 'utf-8' ||
    name === 'utf-16le' ||
    name === 'utf-16be' ||
    (name !== 'replacement' && iconv().encodingExists(name))
    ? name
    : undefined;
}

interface LineDecoder {
  decode(buf: Buffer): string;
  /** Only asked when the decoded text holds U+FFFD, which the file may also hold as a character. */
  valid(buf: Buffer): boolean;
}

const utf8Decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
const UTF8: LineDecoder = { decode: (buf) => utf8Decoder.decode(buf), valid: (buf) => isUtf8(buf) };

/** Encodings besides UTF-8/16 in which U+FFFD can be written (so it is not always a decoding error). */
const HOLDS_FFFD = new Set(['gb18030']);

function lineDecoder(encoding: string): LineDecoder {
  if (encoding === 'utf-8' || encoding === 'utf-16le' || encoding === 'utf-16be') return UTF8;
  const lib = iconv();
  return {
    decode: (buf) => lib.decode(buf, encoding, { stripBOM: false }),
    // iconv-lite turns what does not decode into U+FFFD, which a legacy code page cannot hold.
    valid: (buf) =>
      HOLDS_FFFD.has(encoding) && lib.encode(lib.decode(buf, encoding, { stripBOM: false }), encoding).equals(buf),
  };
}

/** The encoding a byte order mark at the start names, and the mark's length. */
function byteOrderMark(head: Buffer): { encoding: string; length: number } | undefined {
  if (head.length >= 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf)
    return { encoding: 'utf-8', length: 3 };
  if (head.length >= 2 && head[0] === 0xff && head[1] === 0xfe) return { encoding: 'utf-16le', length: 2 };
  if (head.length >= 2 && head[0] === 0xfe && head[1] === 0xff) return { encoding: 'utf-16be', length: 2 };
  return undefined;
}

/** The items of batches one by one, for readers that want them so (the runner takes whole batches). */
export async function* unbatch<T>(batches: AsyncIterable<readonly T[]>): AsyncGenerator<T> {
  // for-of, not yield*: yield* over an array wraps it in an async iterator, promises per item.
  for await (const batch of batches) for (const item of batch) yield item;
}

/** The lines of a stream one by one (see `readLineBatches`). */
export function readLines(
  stream: Readable | AsyncIterable<Buffer | string>,
  maxLineBytes: number,
  encoding?: string,
): AsyncGenerator<PhysicalLine> {
  return unbatch(readLineBatches(stream, maxLineBytes, encoding));
}

/**
 * The lines of a stream, handed over a chunk's worth at a time: every step of an async generator costs
 * promises, so a reader of millions of lines takes them in batches (one per chunk read, never empty).
 * `encoding` is a WHATWG label (default UTF-8); a byte order mark overrides it. `onEncoding` hears the
 * encoding used, once, before the first line. `after` makes it the rest of a file from one of its lines
 * on (a job's chunk, src/input/ranges.ts): lines are numbered on after that line, and no byte order mark is looked
 * for (the encoding is the file's, found at its start).
 */
export async function* readLineBatches(
  stream: Readable | AsyncIterable<Buffer | string>,
  maxLineBytes: number,
  encoding = 'utf-8',
  onEncoding?: (name: string) => void,
  after?: { readonly line: number },
): AsyncGenerator<PhysicalLine[]> {
  let parts: Buffer[] = [];
  let partBytes = 0;
  let skipping = false;
  let skippedBytes = 0;
  let line = after?.line ?? 0;
  const source = (stream as AsyncIterable<Buffer | string>)[Symbol.asyncIterator]();
  const toBuffer = (raw: Buffer | string): Buffer => (typeof raw === 'string' ? Buffer.from(raw) : raw);

  // The byte order mark needs the first 3 bytes, which a stream may hand over one by one.
  let head: Buffer = Buffer.alloc(0);
  let ended = false;
  while (head.length < 3) {
    const r = await source.next();
    if (r.done) {
      ended = true;
      break;
    }
    head = head.length === 0 ? toBuffer(r.value) : Buffer.concat([head, toBuffer(r.value)]);
  }
  const bom = after ? undefined : byteOrderMark(head);
  const used = bom?.encoding ?? encodingOf(encoding) ?? 'utf-8';
  onEncoding?.(used);
  if (bom) head = head.subarray(bom.length);
  const utf16 = used === 'utf-16le' || used === 'utf-16be' ? new Utf16ToUtf8(used === 'utf-16be') : undefined;
  const decoder = lineDecoder(used);

  let chunk: Buffer | undefined = utf16 ? utf16.push(head) : head;
  for (;;) {
    if (chunk === undefined) {
      if (ended) break;
      const r = await source.next();
      if (r.done) {
        ended = true;
        if (!utf16) break;
        chunk = utf16.end();
      } else chunk = utf16 ? utf16.push(toBuffer(r.value)) : toBuffer(r.value);
    }
    const batch = split(chunk);
    chunk = undefined;
    if (batch.length > 0) yield batch;
  }
  if (skipping || partBytes > 0) {
    line += 1;
    yield [finish()];
  }

  function split(buf: Buffer): PhysicalLine[] {
    const batch: PhysicalLine[] = [];
    let start = 0;
    while (start <= buf.length) {
      const nl = buf.indexOf(0x0a, start);
      const end = nl === -1 ? buf.length : nl;
      const piece = buf.subarray(start, end);
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
    return batch;
  }

  function finish(): PhysicalLine {
    if (skipping) {
      const out = { line, text: '', tooLong: true, bytes: skippedBytes, crlf: false, undecodable: false };
      skipping = false;
      skippedBytes = 0;
      return out;
    }
    let buf = parts.length === 1 ? parts[0] : Buffer.concat(parts, partBytes);
    const crlf = buf.length > 0 && buf[buf.length - 1] === 0x0d;
    if (crlf) buf = buf.subarray(0, buf.length - 1);
    const text = decoder.decode(buf);
    const undecodable = text.indexOf('\uFFFD') !== -1 && !decoder.valid(buf);
    const out = { line, text, tooLong: false, bytes: partBytes, crlf, undecodable };
    parts = [];
    partBytes = 0;
    return out;
  }
}
