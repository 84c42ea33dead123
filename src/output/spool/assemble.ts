/**
 * results.csv and results.parquet at the end of a run, in row order (the input's, issue 31), from what the
 * session spooled (./spool.ts) and the journal, which stays the truth. A spooled chunk that no other line of
 * the folder falls inside is used as it is (its CSV bytes copied, its row group listed in the footer); every
 * other line (rows of earlier sessions, this session's first rows before the spool's thread started, the
 * chunks where those meet this session's: ./chunk-plan.ts) is read from the journal, sorted by row in
 * bounded memory (./row-sort.ts) and encoded, and the two are merged by row. So a resumed run encodes its
 * earlier sessions' rows and the few chunks where the sessions meet, not the whole folder.
 */
import { closeSync, openSync, readSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ResultColumn } from '../journal/columns.js';
import { ParquetBody, type GroupsWritten, type ParquetGroupWriter } from '../files/parquet/table-writer.js';
import { dirtyReads, inIntervals, markDirty, planEnd, type PlannedChunk } from './chunk-plan.js';
import { linesByRow, rangeLines, type SortedLine } from './row-sort.js';
import {
  CsvSink,
  kinds,
  leadingColumns,
  names,
  resultParquetColumns,
  RowShape,
  writeAll,
  type ResultFiles,
  type ResultLine,
  type SpoolContents,
} from './spool.js';

export interface AssembleOptions {
  readonly resultsPath: string;
  /** Length of results.ndjson (read up to there). */
  readonly size: number;
  readonly files: ResultFiles;
  /** The final columns (the union of the whole folder). */
  readonly columns: readonly ResultColumn[];
  /** What this session spooled; undefined: every row is read from the journal. */
  readonly spool?: SpoolContents;
  /** Sees result lines read from the journal that start before `visitBefore` (default: all of them). */
  readonly visit?: (line: ResultLine) => void;
  /**
   * Byte offset of the first line `visit` must not see: where this session's lines begin (the caller saw
   * those as they were written, whether or not the spool held them).
   */
  readonly visitBefore?: number;
  /** Folder for temporary files of the sort (default: the journal's). */
  readonly tmpDir?: string;
  /** A sampled run: `stratum,weight` after `row,key` (the spool was told the same). */
  readonly sampled?: boolean;
}

/** Bytes [start, end) of the file at `path` appended to `fd`. */
function copyRange(fd: number, path: string, start: number, end: number): void {
  const src = openSync(path, 'r');
  const buf = Buffer.allocUnsafe(Math.min(1 << 20, Math.max(1, end - start)));
  try {
    for (let at = start; at < end; ) {
      const n = readSync(src, buf, 0, Math.min(buf.length, end - at), at);
      if (n === 0) throw new Error(`${path} ends at byte ${at}, before ${end}`);
      writeAll(fd, buf.subarray(0, n));
      at += n;
    }
  } finally {
    closeSync(src);
  }
}

/**
 * results.csv and/or results.parquet, written under temporary names and renamed when complete. Returns the
 * rows written, the columns of each, and how many of the rows were spooled chunks used as they are.
 */
export async function assembleResultFiles(
  o: AssembleOptions,
): Promise<{ rows: number; columns: number; copied: number }> {
  const finalNames = names(o.columns);
  const finalKinds = kinds(o.columns);
  const sampled = o.sampled === true;
  const shape = new RowShape(o.columns, sampled);
  const pqColumns = resultParquetColumns(o.columns, sampled);
  const plan = planEnd(
    o.spool?.segments ?? [],
    o.size,
    o.visitBefore ?? o.size,
    (seg) =>
      (!o.files.csv || (seg.names === finalNames && seg.csvPath !== undefined)) &&
      (!o.files.parquet || (seg.names === finalNames && seg.kinds === finalKinds && seg.parquet)),
  );

  // The lines to encode, read to their end (by the sort) before the first one is written: the journal's
  // part, marking the chunks its rows fall in; then the lines of the chunks found dirty.
  async function* toEncode(): AsyncGenerator<SortedLine[]> {
    const aside = new Map<PlannedChunk, SortedLine[]>();
    for (const range of plan.journal)
      for await (const batch of rangeLines(o.resultsPath, [range])) {
        const kept: SortedLine[] = [];
        for (const l of batch) {
          const own = markDirty(plan, l.row, range);
          if (!own) kept.push(l);
          else {
            const held = aside.get(own);
            if (held) held.push(l);
            else aside.set(own, [l]);
          }
        }
        if (kept.length > 0) yield kept;
      }
    for (const [chunk, lines] of aside) if (chunk.dirty) yield lines;
    const again = dirtyReads(plan);
    if (again.ranges.length === 0) return;
    for await (const batch of rangeLines(o.resultsPath, again.ranges)) {
      const kept = batch.filter((l) => inIntervals(again.rows, l.row));
      if (kept.length > 0) yield kept;
    }
  }

  const sorted = linesByRow(o.resultsPath, toEncode(), o.tmpDir ?? dirname(o.resultsPath));
  // The sort's temporary runs are removed however this ends.
  try {
    // The first batch comes once every line to encode is read: the chunks are marked by then.
    const first = await sorted.next();
    const clean = plan.chunks.filter((c) => !c.dirty);
    const segments = o.spool?.segments ?? [];

    const csvTmp = o.files.csv ? `${o.files.csv}.tmp` : undefined;
    const csvFd = csvTmp ? openSync(csvTmp, 'w') : undefined;
    const csv = csvFd === undefined ? undefined : new CsvSink(csvFd);
    // The spool's body is continued only when a row group of it is used: else its bytes would be dead weight.
    const spoolBody = clean.length > 0 ? o.spool?.body : undefined;
    const body = o.files.parquet
      ? spoolBody
        ? ParquetBody.append(spoolBody.path, spoolBody.bytes)
        : new ParquetBody(`${o.files.parquet}.tmp`)
      : undefined;
    const pq: ParquetGroupWriter | undefined = body?.groups(pqColumns);
    const parts: GroupsWritten[] = [];
    let rows = 0;
    let copied = 0;

    const encode = (l: SortedLine): void => {
      let line: ResultLine | undefined;
      try {
        line = JSON.parse(l.text) as ResultLine;
      } catch {
        return; // a line that does not parse is left out, as by every reader of the journal
      }
      if (!line?.stages) return;
      if (l.visit) o.visit?.(line);
      const values = shape.values(line);
      csv?.add(shape.record(values));
      pq?.push(values);
      rows += 1;
    };
    const copy = (c: PlannedChunk): void => {
      if (csv) {
        csv.flush();
        copyRange(csvFd!, segments[c.seg].csvPath!, c.chunk.csvStart, c.chunk.csvEnd);
      }
      if (pq) {
        // The rows encoded so far go before it, as a (smaller) row group of their own.
        const before = pq.take();
        if (before.rows > 0) parts.push(before);
        parts.push(c.chunk.groups!);
      }
      rows += c.chunk.rows;
      copied += c.chunk.rows;
    };

    try {
      csv?.add([...leadingColumns(sampled).map((c) => c.name), ...o.columns.map((c) => c.name)]);
      let next = 0;
      for (let r = first; !r.done; r = await sorted.next())
        for (const l of r.value) {
          while (next < clean.length && clean[next].chunk.firstRow < l.row) copy(clean[next++]);
          encode(l);
        }
      while (next < clean.length) copy(clean[next++]);
      if (body) {
        const last = pq!.take();
        if (last.rows > 0 || parts.length === 0) parts.push(last);
        body.finish(pqColumns, parts);
        renameSync(body.path, o.files.parquet!);
      }
      if (csv) {
        csv.flush();
        closeSync(csvFd!);
        renameSync(csvTmp!, o.files.csv!);
      }
    } catch (err) {
      body?.abort();
      if (csvFd !== undefined) {
        try {
          closeSync(csvFd);
        } catch {
          /* already closed */
        }
        rmSync(csvTmp!, { force: true });
      }
      throw err;
    }
    return { rows, columns: o.columns.length + leadingColumns(sampled).length, copied };
  } finally {
    await sorted.return(undefined);
  }
}
