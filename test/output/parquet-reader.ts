/**
 * Reads Parquet files back with parquet-wasm: the Rust `parquet`/arrow-rs implementation compiled to
 * WebAssembly, sharing no code with the writer (hyparquet-writer), so a round trip through it checks the
 * files, not the library against itself. (It caught a footer DuckDB had tolerated: an empty key-value list
 * written without its element type.) Values come back as Arrow values: Int64 as bigint, Timestamp and
 * Date32 as epoch milliseconds.
 */
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { tableFromIPC } from 'apache-arrow';
import { Compression, ParquetFile, readParquet as readWithArrowRs } from 'parquet-wasm';
import { expect } from 'vitest';
import { journalText } from '../helpers/output.js';

export interface ParquetTable {
  readonly columns: readonly string[];
  /** Arrow type names: Int64, Float64, Bool, Utf8, Timestamp<MILLISECOND>, Date32<DAY>. */
  readonly types: readonly string[];
  readonly rows: readonly Record<string, unknown>[];
}

export async function readParquet(path: string): Promise<ParquetTable> {
  const table = tableFromIPC(readWithArrowRs(new Uint8Array(readFileSync(path))).intoIPCStream());
  const columns = table.schema.fields.map((f) => f.name);
  const rows = table.toArray().map((r) => {
    const o: Record<string, unknown> = {};
    for (const c of columns) o[c] = (r as Record<string, unknown>)[c] ?? null;
    return o;
  });
  return { columns, types: table.schema.fields.map((f) => String(f.type)), rows };
}

/** Codec names of every column chunk, as arrow-rs reads them from the footer. */
export async function parquetCodecs(path: string): Promise<string[]> {
  const file = await ParquetFile.fromFile(new Blob([readFileSync(path)]));
  const codecs = new Set<string>();
  for (const rg of file.metadata().rowGroups()) for (const c of rg.columns()) codecs.add(Compression[c.compression()]);
  return [...codecs];
}

/** The rows of each row group, in the file's order, as arrow-rs reads them from the footer. */
export async function parquetRowGroups(path: string): Promise<number[]> {
  const file = await ParquetFile.fromFile(new Blob([readFileSync(path)]));
  return file
    .metadata()
    .rowGroups()
    .map((rg) => rg.numRows());
}

/** A journal value as the reader shows it: integers as bigint, text as is, arrays/objects (and mixed columns' non-text) as JSON text. */
function expectedCell(want: unknown, type: string): unknown {
  if (want === undefined || want === null) return null;
  if (type === 'Int64') return BigInt(want as number);
  if (type === 'Utf8') return typeof want === 'string' ? want : JSON.stringify(want);
  return want;
}

/** A results line as the journal holds it. */
interface JournalLine {
  readonly row: number;
  readonly key: unknown;
  readonly stratum?: unknown;
  readonly weight?: unknown;
  readonly run_id?: unknown;
  readonly run_session?: number;
  readonly stages: Readonly<Record<string, Readonly<Record<string, unknown>> | undefined>>;
}

/** How one cell is held to its journal value: `toBe` (Object.is) or `toEqual`. */
type Same = (got: unknown, want: unknown, how: 'toBe' | 'toEqual', message?: string) => boolean;

/**
 * Every cell of the Parquet file against the journal line it came from (the file is in row order, the journal in
 * the order rows finished). The cells are compared in plain JS first (isDeepStrictEqual: stricter than toEqual);
 * only a file that differs goes through one expect a cell, for its message: vitest's expect costs about 5 µs a
 * call, a CPU second for 7,000 rows of 25 columns.
 */
export async function expectMatchesJournal(parquetPath: string, ndjsonPath: string, header: string[]): Promise<void> {
  const t = await readParquet(parquetPath);
  expect(t.columns).toEqual(header);
  const lines = journalText(ndjsonPath)
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as JournalLine)
    .sort((a, b) => a.row - b.row);
  expect(t.rows).toHaveLength(lines.length);
  // The run and session that wrote the row come last (null for an older bre-batch's line).
  expect(header.slice(-2)).toEqual(['run_id', 'run_session']);
  const quick: Same = (got, want) => isDeepStrictEqual(got, want);
  const each: Same = (got, want, how, message) => {
    if (how === 'toBe') expect(got, message).toBe(want);
    else expect(got, message).toEqual(want);
    return true;
  };
  if (!cellsMatch(t, lines, header, quick)) cellsMatch(t, lines, header, each);
}

/** Each row's cells against its journal line by `same`: false at the first it refuses. */
function cellsMatch(t: ParquetTable, lines: readonly JournalLine[], header: readonly string[], same: Same): boolean {
  // A sampled run's files carry the row's stratum and weight after row,key.
  const lead = header[2] === 'stratum' ? 4 : 2;
  return lines.every((line, i) => {
    const got = t.rows[i];
    if (!same(got.row, BigInt(line.row), 'toBe')) return false;
    if (!same(got.key, line.key, 'toBe')) return false;
    if (lead === 4) {
      if (!same(got.stratum, line.stratum, 'toBe', `row ${line.row} stratum`)) return false;
      if (!same(got.weight, line.weight, 'toBe', `row ${line.row} weight`)) return false;
    }
    if (!same(got.run_id, line.run_id ?? null, 'toBe', `row ${line.row} run_id`)) return false;
    const session = line.run_session === undefined ? null : BigInt(line.run_session);
    if (!same(got.run_session, session, 'toBe', `row ${line.row} run_session`)) return false;
    for (let c = lead; c < header.length - 2; c += 1) {
      const [stage, ...rest] = header[c].split('.');
      const want = line.stages[stage]?.[rest.join('.')];
      if (!same(got[header[c]], expectedCell(want, t.types[c]), 'toEqual', `row ${line.row} ${header[c]}`))
        return false;
    }
    return true;
  });
}
