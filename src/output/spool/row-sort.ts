/**
 * The lines of byte ranges of results.ndjson in row order (the input's order), in bounded memory: results.csv
 * and results.parquet list rows by their row number however the answers arrived, while the
 * journal keeps the order they finished in. Lines are gathered up to `chunkBytes`; a journal that fits is
 * sorted in memory, a larger one is cut into sorted runs on disk (under `tmpDir`) merged by a heap. A line
 * whose row cannot be read is left out, as every reader of the journal does. Rows of equal number keep
 * their journal order.
 */
import { createReadStream, createWriteStream, existsSync, readdirSync, rmSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { basename, join } from 'node:path';
import { readLineBatches } from '@bre-batch/formats/input/lines';
import { MinHeap } from './min-heap.js';
import { rowOfLine } from '@bre-batch/formats/ndjson-file';

export interface JournalRange {
  readonly start: number;
  readonly end: number;
  /** Whether the caller's `visit` sees these lines (rows of earlier sessions). */
  readonly visit: boolean;
}

export interface SortedLine {
  readonly row: number;
  readonly text: string;
  readonly visit: boolean;
  /** Its bytes in the journal: [at, at + bytes), the newline included. */
  readonly at: number;
  readonly bytes: number;
}

/** Text held in memory before a sorted run goes to disk. */
const SORT_CHUNK_BYTES = 32 * 1024 * 1024;
const BATCH = 1024;

const byRow = (a: SortedLine, b: SortedLine) => a.row - b.row;

/** Every line of the ranges (that names its row), in journal order, a batch at a time. */
export async function* rangeLines(path: string, ranges: readonly JournalRange[]): AsyncGenerator<SortedLine[]> {
  for (const r of ranges) {
    if (r.end <= r.start) continue;
    const stream = createReadStream(path, { highWaterMark: 256 * 1024, start: r.start, end: r.end - 1 });
    let at = r.start;
    for await (const lines of readLineBatches(stream, 256 * 1024 * 1024)) {
      const out: SortedLine[] = [];
      for (const l of lines) {
        const from = at;
        at += l.bytes + 1;
        if (l.text === '') continue;
        const row = rowOfLine(l.text);
        if (row !== undefined) out.push({ row, text: l.text, visit: r.visit, at: from, bytes: l.bytes + 1 });
      }
      if (out.length > 0) yield out;
    }
  }
}

async function writeRun(path: string, lines: readonly SortedLine[]): Promise<void> {
  const out: WriteStream = createWriteStream(path);
  let buf = '';
  for (const l of lines) {
    buf += `${l.row}\t${l.visit ? 1 : 0}\t${l.at}\t${l.bytes}\t${l.text}\n`;
    if (buf.length >= 1 << 20) {
      if (!out.write(buf)) await once(out, 'drain');
      buf = '';
    }
  }
  out.end(buf);
  await once(out, 'finish');
}

/** A sorted run on disk, read back a batch of lines at a time. */
class RunReader {
  readonly #source: AsyncGenerator<{ text: string }[]>;
  #batch: SortedLine[] = [];
  #at = 0;

  constructor(path: string) {
    this.#source = readLineBatches(createReadStream(path, { highWaterMark: 256 * 1024 }), 256 * 1024 * 1024);
  }

  /** The next line, or undefined at the end. */
  async next(): Promise<SortedLine | undefined> {
    while (this.#at >= this.#batch.length) {
      const r = await this.#source.next();
      if (r.done) return undefined;
      this.#batch = [];
      this.#at = 0;
      for (const { text } of r.value) {
        if (text === '') continue;
        const a = text.indexOf('\t');
        const b = text.indexOf('\t', a + 1);
        const c = text.indexOf('\t', b + 1);
        const d = text.indexOf('\t', c + 1);
        this.#batch.push({
          row: Number(text.slice(0, a)),
          visit: text[a + 1] === '1',
          at: Number(text.slice(b + 1, c)),
          bytes: Number(text.slice(c + 1, d)),
          text: text.slice(d + 1),
        });
      }
    }
    return this.#batch[this.#at++];
  }
}

/**
 * The lines of `ranges` of the journal at `path` (or of `source`, lines of it chosen by the caller, read to
 * its end before the first batch comes out) in row order, a batch at a time; temporary runs under `tmpDir`,
 * removed at the end.
 */
export async function* linesByRow(
  path: string,
  source: readonly JournalRange[] | AsyncIterable<SortedLine[]>,
  tmpDir: string,
  chunkBytes = SORT_CHUNK_BYTES,
): AsyncGenerator<SortedLine[]> {
  const runs: string[] = [];
  // Runs left by a session killed while sorting go first.
  const prefix = `${basename(path)}.sort-`;
  if (existsSync(tmpDir))
    for (const f of readdirSync(tmpDir))
      if (f.startsWith(prefix) && f.endsWith('.tmp')) rmSync(join(tmpDir, f), { force: true });
  let chunk: SortedLine[] = [];
  let bytes = 0;
  try {
    const batches = Symbol.asyncIterator in source ? source : rangeLines(path, source);
    for await (const batch of batches) {
      for (const l of batch) {
        chunk.push(l);
        bytes += l.text.length;
      }
      if (bytes >= chunkBytes) {
        const run = join(tmpDir, `${prefix}${runs.length}.tmp`);
        runs.push(run);
        await writeRun(run, chunk.sort(byRow));
        chunk = [];
        bytes = 0;
      }
    }
    chunk.sort(byRow);
    if (runs.length === 0) {
      for (let i = 0; i < chunk.length; i += BATCH) yield chunk.slice(i, i + BATCH);
      return;
    }
    // The last chunk stays in memory as one more run; ties go to the earlier run (journal order).
    const readers = runs.map((r) => new RunReader(r));
    let memAt = 0;
    const sources = [...readers.map((r) => () => r.next()), async () => chunk[memAt++]];
    const heap = new MinHeap<{ line: SortedLine; src: number }>(
      (a, b) => a.line.row < b.line.row || (a.line.row === b.line.row && a.src < b.src),
    );
    for (let i = 0; i < sources.length; i += 1) {
      const line = await sources[i]();
      if (line) heap.push({ line, src: i });
    }
    let out: SortedLine[] = [];
    while (heap.size > 0) {
      const top = heap.pop()!;
      out.push(top.line);
      if (out.length >= BATCH) {
        yield out;
        out = [];
      }
      const line = await sources[top.src]();
      if (line) heap.push({ line, src: top.src });
    }
    if (out.length > 0) yield out;
  } finally {
    for (const r of runs) rmSync(r, { force: true });
  }
}
