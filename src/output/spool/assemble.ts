/**
 * results.csv and results.parquet at the end of a run, in row order (the input's), from what the
 * session spooled (./spool.ts) and the journal, which stays the truth. A spooled chunk that no other line of
 * the folder falls inside is used as it is (its CSV bytes copied, its row group listed in the footer); every
 * other line (rows of earlier sessions, this session's first rows before the spool's thread started, the
 * chunks where those meet this session's: ./chunk-plan.ts) is read from the journal, sorted by row in
 * bounded memory (./row-sort.ts) and encoded, and the two are merged by row. The results files an earlier
 * end wrote are chunks too, listed by their index (./results-index.ts), copied where no row of this session
 * falls inside them: so a resumed run encodes the chunks where the sessions meet, not the whole folder.
 */
import { dirname } from 'node:path';
import type { ResultColumn } from '../journal/columns.js';
import { dirtyReads, inIntervals, markDirty, planEnd, type PlannedChunk } from './chunk-plan.js';
import { dropIndex, readIndex, writeIndex } from './results-index.js';
import { ResultsWriter } from './results-writer.js';
import { linesByRow, rangeLines, type SortedLine } from './row-sort.js';
import {
  kinds,
  names,
  resultHeader,
  resultParquetColumns,
  type ResultFiles,
  type ResultLine,
  type SpoolContents,
  type SpooledSegment,
} from './spool.js';

/**
 * What the caller counts over result lines (summary.json's decisions), kept in the results files' index:
 * the counts of an earlier end stand for its rows, whose lines are then not read (nor visited).
 */
export interface Tally {
  save(): unknown;
  restore(saved: unknown): void;
}

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
  /**
   * The results files' index (./results-index.ts): with `tally`, the files an earlier end wrote are used
   * where it still describes them, and the index of the files written is kept for the next end. Without,
   * an index there is removed (the files it describes are replaced).
   */
  readonly indexPath?: string;
  readonly tally?: Tally;
  /**
   * The segments earlier sessions' spools recorded before they were killed (./records.ts), by start; used
   * only with `tally` (their clean chunks' counts stand for their rows).
   */
  readonly recorded?: readonly SpooledSegment[];
  /** Rows a chunk of the files written holds (default ./chunk-rows.ts CHUNK_ROWS): smaller in tests. */
  readonly chunkRows?: number;
}

/**
 * results.csv and/or results.parquet, written under temporary names and renamed when complete. Returns the
 * rows written, the columns of each, and how many of the rows were chunks used as they are.
 */
export async function assembleResultFiles(
  o: AssembleOptions,
): Promise<{ rows: number; columns: number; copied: number }> {
  const finalNames = names(o.columns);
  const finalKinds = kinds(o.columns);
  const sampled = o.sampled === true;
  const cut = o.visitBefore ?? o.size;
  const earlier =
    o.indexPath && o.tally
      ? readIndex(o.indexPath, {
          journal: o.resultsPath,
          size: o.size,
          cut,
          files: o.files,
          names: finalNames,
          kinds: finalKinds,
          sampled,
        })
      : undefined;
  // Killed sessions' spools after the earlier end's files, before this session's; each range after the last.
  const recorded: SpooledSegment[] = [];
  for (const s of o.tally ? (o.recorded ?? []) : [])
    if (s.start >= (recorded.at(-1)?.end ?? earlier?.size ?? 0) && s.end <= cut) recorded.push(s);
  // The earlier end's files as a segment of their own, before this session's: the journal's bytes up to
  // where it ended, its rows in its chunks.
  const segments: SpooledSegment[] = [
    ...(earlier
      ? [
          {
            start: 0,
            end: earlier.size,
            rows: earlier.chunks.reduce((n, c) => n + c.rows, 0),
            names: finalNames,
            kinds: finalKinds,
            ...(o.files.csv ? { csvPath: o.files.csv } : {}),
            chunks: earlier.chunks,
            parquet: o.files.parquet !== undefined,
            ...(o.files.parquet ? { parquetPath: o.files.parquet } : {}),
          },
        ]
      : []),
    ...recorded,
    ...(o.spool?.segments ?? []),
  ];
  const plan = planEnd(
    segments,
    o.size,
    cut,
    (seg) =>
      (!o.files.csv || (seg.names === finalNames && seg.csvPath !== undefined)) &&
      (!o.files.parquet || (seg.names === finalNames && seg.kinds === finalKinds && seg.parquet)),
  );

  // The lines to encode, read to their end (by the sort) before the first one is written: the journal's
  // part, marking the chunks its rows fall in; then the lines of the chunks found dirty (the earlier end's
  // too: their lines were counted in its tally, so they are not visited).
  async function* toEncode(): AsyncGenerator<SortedLine[]> {
    const aside = new Map<PlannedChunk, SortedLine[]>();
    for (const range of plan.journal)
      for await (const batch of rangeLines(o.resultsPath, [range])) {
        const kept: SortedLine[] = [];
        for (const l of batch) {
          const own = markDirty(plan, l.row, range, l.at);
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
  let out: ResultsWriter | undefined;
  // The sort's temporary runs are removed however this ends.
  try {
    // The first batch comes once every line to encode is read: the chunks are marked by then.
    const first = await sorted.next();
    const clean = plan.chunks.filter((c) => !c.dirty);
    // The spool's body is continued only when a row group of it is used: else its bytes would be dead weight.
    const spoolUsed = clean.some((c) => segments[c.seg].parquetPath === undefined);
    out = new ResultsWriter({
      files: o.files,
      columns: o.columns,
      pqColumns: resultParquetColumns(o.columns, sampled),
      sampled,
      ...(spoolUsed && o.spool?.body ? { body: o.spool.body } : {}),
      chunkRows: o.chunkRows,
    });
    let copied = 0;
    const copy = (c: PlannedChunk) => {
      out!.copy(c.chunk, segments[c.seg].csvPath, segments[c.seg].parquetPath);
      copied += c.chunk.rows;
    };
    let next = 0;
    for (let r = first; !r.done; r = await sorted.next())
      for (const l of r.value) {
        while (next < clean.length && clean[next].chunk.firstRow < l.row) copy(clean[next++]);
        out.encode(l, o.visit);
      }
    while (next < clean.length) copy(clean[next++]);
    const chunks = out.complete();
    // The counts of the earlier end's rows, and of killed sessions' clean chunks, whose lines were not visited.
    if (earlier) o.tally!.restore(earlier.tally);
    for (const c of clean) if (segments[c.seg].chunkCounts) o.tally!.restore(c.chunk.counts);
    // No index while the files change: a crash between the two renames leaves none that would lie.
    if (o.indexPath) dropIndex(o.indexPath);
    out.rename();
    if (o.indexPath && o.tally)
      writeIndex(o.indexPath, {
        journal: o.resultsPath,
        size: o.size,
        files: o.files,
        names: finalNames,
        kinds: finalKinds,
        sampled,
        chunks,
        tally: o.tally.save(),
      });
    return { rows: out.rows, columns: resultHeader(o.columns, sampled).length, copied };
  } catch (err) {
    out?.abort();
    throw err;
  } finally {
    await sorted.return(undefined);
  }
}
