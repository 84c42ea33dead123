/**
 * The files rebuilt from the journal at the end of every run (and by merge): results.csv and
 * results.parquet (completed from what the run spooled, src/output/spool/spool.ts, or read from results.ndjson),
 * errors.parquet, transactions.csv and transactions.parquet. Each journal is read at most once: the columns
 * of the results files are known before the read (the column union kept during the run,
 * src/output/journal/columns.ts), so one pass writes the CSV and the Parquet file side by side. Every file is
 * written under a temporary name and renamed when complete, so a crash leaves the previous one or none.
 */
import { createWriteStream, rmSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { rename } from 'node:fs/promises';
import { csvRecords } from '../files/csv-line.js';
import { errorTableColumns, FILES, TRANSACTION_COLUMNS, TRANSACTION_TABLE } from '@bre-batch/formats';

import type { NormalisedTransaction } from '@bre-batch/core/types';
import { ColumnUnion, type StageColumns } from '../journal/columns.js';
import { excelSafe } from '../files/excel.js';
import { readNdjsonBatches } from '@bre-batch/formats/ndjson-file';
import { journalSize } from '@bre-batch/formats/journal-file';
import { isoOffset } from '../files/parquet/schema.js';
import { assembleResultFiles, type Tally } from './assemble.js';
import { recordedSpools } from './records.js';
import { ErrorGroups, type ErrorGroup } from '../error-groups.js';
import type { ResultFiles, ResultLine, SpoolContents } from './spool.js';
import { ParquetTableWriter } from '../files/parquet/table-writer.js';
import type { OutputFormat } from './output-formats.js';

/** The files this module writes (their names are the output format's, packages/formats/src/files.ts). */
export const REBUILT_FILES = [
  FILES.resultsCsv,
  FILES.resultsParquet,
  FILES.errorsParquet,
  FILES.transactions,
  FILES.transactionsParquet,
] as const;

/** A CSV file written a batch of records at a time, under a temporary name. */
class CsvFile {
  readonly #path: string;
  readonly #out;

  constructor(path: string) {
    this.#path = path;
    this.#out = createWriteStream(`${path}.tmp`);
  }

  // csv-stringify's synchronous form over a batch of records: the same quoting as its stream, without a
  // stream write per row.
  async write(records: string[][]): Promise<void> {
    if (records.length > 0 && !this.#out.write(csvRecords(records))) await once(this.#out, 'drain');
  }

  async close(): Promise<void> {
    this.#out.end();
    await once(this.#out, 'finish');
    await rename(`${this.#path}.tmp`, this.#path);
  }

  abort(): void {
    this.#out.destroy();
    rmSync(`${this.#path}.tmp`, { force: true });
  }
}

/** The column union of a results.ndjson not kept during a run (merge, an older folder): one pass. */
async function scanUnion(ndjsonPath: string): Promise<ColumnUnion> {
  const union = new ColumnUnion();
  for await (const batch of readNdjsonBatches<ResultLine>(ndjsonPath))
    for (const l of batch) if (l?.stages) union.observe(l.stages);
  return union;
}

/** errors.parquet from errors.ndjson; `visit` sees every error line (the run report counts codes there). */
export async function writeErrorFiles(
  ndjsonPath: string,
  parquetPath: string | undefined,
  visit?: (line: Record<string, unknown>) => void,
  sampled = false,
): Promise<number> {
  const columns = errorTableColumns(sampled);
  const pq = parquetPath ? new ParquetTableWriter(parquetPath, columns) : undefined;
  let rows = 0;
  try {
    for await (const batch of readNdjsonBatches<Record<string, unknown>>(ndjsonPath)) {
      for (const line of batch) {
        if (!line) continue;
        visit?.(line);
        pq?.push(columns.map((c) => line[c.name]));
        rows += 1;
      }
    }
    pq?.close();
  } catch (err) {
    pq?.abort();
    throw err;
  }
  return rows;
}

/** transactions.csv and/or transactions.parquet from the transactions journal (rows that reached results only). */
async function writeTransactionFiles(journalPath: string, files: ResultFiles): Promise<number> {
  const csv = files.csv ? new CsvFile(files.csv) : undefined;
  const pq = files.parquet ? new ParquetTableWriter(files.parquet, TRANSACTION_TABLE) : undefined;
  let n = 0;
  try {
    await csv?.write([[...TRANSACTION_COLUMNS]]);
    for await (const batch of readNdjsonBatches<{ key: unknown; transactions: NormalisedTransaction[] }>(journalPath)) {
      const records: string[][] = [];
      for (const entry of batch) {
        if (!entry) continue;
        for (const t of entry.transactions) {
          if (csv)
            records.push([
              excelSafe(entry.key),
              t.source,
              excelSafe(t.account),
              excelSafe(t.txn_id),
              t.timestamp ?? '',
              t.value_date ?? '',
              t.type,
              String(t.amount),
              t.balance === null ? '' : String(t.balance),
              excelSafe(t.mode),
              excelSafe(t.narration),
            ]);
          pq?.push([
            entry.key,
            t.source,
            t.account,
            t.txn_id,
            t.timestamp,
            t.timestamp === null ? null : isoOffset(t.timestamp),
            t.value_date,
            t.type,
            t.amount,
            t.balance,
            t.mode,
            t.narration,
          ]);
          n += 1;
        }
      }
      await csv?.write(records);
    }
    pq?.close();
    await csv?.close();
  } catch (err) {
    pq?.abort();
    csv?.abort();
    throw err;
  }
  return n;
}

export interface RebuildOptions {
  readonly dir: string;
  readonly stages: readonly StageColumns[];
  /** The column union of results.ndjson (kept during the run); without it, one more pass learns it. */
  readonly union?: ColumnUnion;
  /** What the run spooled (src/output/spool/spool.ts); without it, results are read from the journal. */
  readonly spool?: SpoolContents;
  readonly formats: ReadonlySet<OutputFormat>;
  /** The transactions journal, for account pipelines. */
  readonly transactionsJournal?: string;
  readonly visitResult?: (line: ResultLine) => void;
  /** Byte offset of results.ndjson from which `visitResult` sees no line (this session's rows). */
  readonly visitResultsBefore?: number;
  /**
   * What `visitResult` counts, kept with the results files' index: an earlier end's files are used again
   * (their rows not read from the journal) only with it (src/output/spool/assemble.ts).
   */
  readonly tally?: Tally;
  /**
   * A run's end: the chunks earlier sessions' spools recorded before they were killed (./records.ts) are used
   * (with `tally`), but those of this session's spool (`except`, its id).
   */
  readonly recorded?: { readonly except?: string };
  readonly visitError?: (line: Record<string, unknown>) => void;
  /** A sampled run: the results and errors files carry `stratum,weight` after `row,key`. */
  readonly sampled?: boolean;
  /** Rows a chunk of the results files holds (default ./chunk-rows.ts CHUNK_ROWS), as the spool was told. */
  readonly chunkRows?: number;
}

export interface RebuildResult {
  readonly results: { rows: number; columns: number };
  /** Rows of the results files used as they were written (spooled, or by an earlier end), not encoded. */
  readonly copied: number;
  readonly errors: number;
  /** The errors file's lines by field and code (../error-groups.ts). */
  readonly errorGroups: readonly ErrorGroup[];
  readonly transactions?: number;
  /** The files written, by name. */
  readonly files: readonly string[];
}

/**
 * Every rebuilt file of an output folder. A format left out (`--output-formats`) has its files removed, so
 * that a folder never holds a stale one beside fresh others.
 */
export async function rebuildOutputs(o: RebuildOptions): Promise<RebuildResult> {
  const csv = o.formats.has('csv');
  const parquet = o.formats.has('parquet');
  const at = (name: string) => join(o.dir, name);
  for (const [name, format] of [
    [FILES.resultsCsv, 'csv'],
    [FILES.transactions, 'csv'],
    [FILES.resultsParquet, 'parquet'],
    [FILES.errorsParquet, 'parquet'],
    [FILES.transactionsParquet, 'parquet'],
  ] as const) {
    if (!o.formats.has(format)) rmSync(at(name), { force: true });
  }
  const files: string[] = [];
  const resultFiles = {
    csv: csv ? at(FILES.resultsCsv) : undefined,
    parquet: parquet ? at(FILES.resultsParquet) : undefined,
  };
  const resultsPath = at(FILES.results);
  const union = o.union ?? (await scanUnion(resultsPath));
  const size = journalSize(resultsPath);
  const recorded =
    o.recorded && o.tally
      ? recordedSpools(join(o.dir, FILES.state), {
          journal: resultsPath,
          cut: o.visitResultsBefore ?? size,
          except: o.recorded.except,
        }).segments
      : undefined;
  const { copied, ...results } = await assembleResultFiles({
    resultsPath,
    size,
    files: resultFiles,
    columns: union.columns(o.stages),
    spool: o.spool,
    visit: o.visitResult,
    visitBefore: o.visitResultsBefore,
    sampled: o.sampled,
    chunkRows: o.chunkRows,
    indexPath: at(FILES.resultsIndex),
    tally: o.tally,
    recorded,
  });
  if (csv) files.push(FILES.resultsCsv);
  if (parquet) files.push(FILES.resultsParquet);
  const groups = new ErrorGroups();
  const errors = await writeErrorFiles(
    at(FILES.errors),
    parquet ? at(FILES.errorsParquet) : undefined,
    (line) => {
      groups.add(line);
      o.visitError?.(line);
    },
    o.sampled,
  );
  if (parquet) files.push(FILES.errorsParquet);
  let transactions: number | undefined;
  if (o.transactionsJournal) {
    transactions = await writeTransactionFiles(o.transactionsJournal, {
      csv: csv ? at(FILES.transactions) : undefined,
      parquet: parquet ? at(FILES.transactionsParquet) : undefined,
    });
    if (csv) files.push(FILES.transactions);
    if (parquet) files.push(FILES.transactionsParquet);
  }
  return { results, copied, errors, errorGroups: groups.result(), transactions, files };
}
