/**
 * Reads Parquet files back with parquet-wasm: the Rust `parquet`/arrow-rs implementation compiled to
 * WebAssembly, sharing no code with the writer (hyparquet-writer), so a round trip through it checks the
 * files, not the library against itself. (It caught a footer DuckDB had tolerated: an empty key-value list
 * written without its element type.) Values come back as Arrow values: Int64 as bigint, Timestamp and
 * Date32 as epoch milliseconds.
 */
import { readFileSync } from 'node:fs';
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

/** Every cell of the Parquet file against the journal line it came from (the file is in row order, the journal in the order rows finished). */
export async function expectMatchesJournal(parquetPath: string, ndjsonPath: string, header: string[]): Promise<void> {
  const t = await readParquet(parquetPath);
  expect(t.columns).toEqual(header);
  const lines = journalText(ndjsonPath)
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .sort((a, b) => a.row - b.row);
  expect(t.rows).toHaveLength(lines.length);
  lines.forEach((line, i) => {
    const got = t.rows[i];
    expect(got.row).toBe(BigInt(line.row));
    expect(got.key).toBe(line.key);
    // A sampled run's files carry the row's stratum and weight after row,key.
    const lead = header[2] === 'stratum' ? 4 : 2;
    if (lead === 4) {
      expect(got.stratum, `row ${line.row} stratum`).toBe(line.stratum);
      expect(got.weight, `row ${line.row} weight`).toBe(line.weight);
    }
    // The run and session that wrote the row come last (null for an older bre-batch's line).
    expect(header.slice(-2)).toEqual(['run_id', 'run_session']);
    expect(got.run_id, `row ${line.row} run_id`).toBe(line.run_id ?? null);
    expect(got.run_session, `row ${line.row} run_session`).toBe(
      line.run_session === undefined ? null : BigInt(line.run_session),
    );
    for (let c = lead; c < header.length - 2; c += 1) {
      const [stage, ...rest] = header[c].split('.');
      const want = line.stages[stage]?.[rest.join('.')];
      expect(got[header[c]], `row ${line.row} ${header[c]}`).toEqual(expectedCell(want, t.types[c]));
    }
  });
}
