/**
 * .state/columns.ndjson: the column union (src/output/journal/columns.ts) as a journal, so that the end of a run
 * needs no first pass over results.ndjson to learn the header, and a resume after `kill -9` still knows
 * every column of the rows written before it.
 *
 * One line per field that was new or wider, `{"row":N,"stage":..,"field":..,"types":bits}`, handed to the
 * kernel before the results line of row N (AppendFile.before), so a results line on disk always has its
 * columns on disk. results.ndjson stays the truth: the journal is replaced by a scan of results.ndjson when
 * - it is missing while results exist (a folder written by an older build, or damaged);
 * - a line names a row that is not in results.ndjson (the row was in flight at a crash: its line was torn
 *   or never written, and the column may have been seen in no finished row).
 * Both are rare; the usual resume reads only this small file.
 */
import { existsSync, renameSync, rmSync } from 'node:fs';
import type { RowSet } from './bitset.js';
import { ColumnUnion, type ColumnChange, type ResultStages } from './columns.js';
import { AppendFile, readNdjson, readNdjsonBatches } from '@bre-batch/formats/ndjson-file';

interface JournalLine {
  readonly row: number;
  readonly stage: string;
  readonly field: string;
  readonly types: number;
}

function line(row: number, c: ColumnChange): string {
  return JSON.stringify({ row, stage: c.stage, field: c.field, types: c.types });
}

/** The union of a results.ndjson, each change attributed to the row that showed it. */
export async function scanResultColumns(
  resultsPath: string,
  onChange?: (row: number, changes: ColumnChange[]) => void,
): Promise<ColumnUnion> {
  const union = new ColumnUnion();
  for await (const batch of readNdjsonBatches<{ row?: number; stages?: ResultStages }>(resultsPath)) {
    for (const l of batch) {
      if (!l?.stages) continue;
      const changes = union.observe(l.stages);
      if (changes && onChange) onChange(l.row ?? 0, changes);
    }
  }
  return union;
}

/** Writes a whole journal for `union` atomically (a temporary file, renamed). */
async function rewrite(path: string, resultsPath: string): Promise<ColumnUnion> {
  const tmp = `${path}.tmp`;
  rmSync(tmp, { force: true });
  const out = new AppendFile(tmp);
  const union = await scanResultColumns(resultsPath, (row, changes) => {
    for (const c of changes) out.append(line(row, c));
  });
  out.close();
  renameSync(tmp, path);
  return union;
}

export class ColumnJournal {
  readonly union: ColumnUnion;
  /** Whether opening needed a scan of results.ndjson (see the file comment). */
  readonly rescanned: boolean;
  readonly #file: AppendFile;

  private constructor(union: ColumnUnion, file: AppendFile, rescanned: boolean) {
    this.union = union;
    this.#file = file;
    this.rescanned = rescanned;
  }

  /** `succeeded`: the rows found in results.ndjson when the folder was opened. */
  static async open(path: string, resultsPath: string, succeeded: RowSet): Promise<ColumnJournal> {
    let union: ColumnUnion | undefined;
    if (existsSync(path)) {
      new AppendFile(path).close(); // cuts a torn last line (a crash mid-write): the rest is whole
      union = new ColumnUnion();
      for await (const l of readNdjson<JournalLine>(path)) {
        if (
          !l ||
          typeof l.row !== 'number' ||
          !succeeded.has(l.row) ||
          typeof l.stage !== 'string' ||
          typeof l.field !== 'string' ||
          typeof l.types !== 'number'
        ) {
          union = undefined;
          break;
        }
        union.add(l.stage, l.field, l.types);
      }
    } else if (succeeded.size === 0) union = new ColumnUnion();
    const rescanned = union === undefined;
    union ??= await rewrite(path, resultsPath);
    return new ColumnJournal(union, new AppendFile(path), rescanned);
  }

  /** The journal file, to be flushed before results.ndjson (see AppendFile.before). */
  get file(): AppendFile {
    return this.#file;
  }

  /** Adds a result's fields to the union; journals what is new or wider. Returns whether anything was. */
  observe(row: number, stages: ResultStages): boolean {
    const changes = this.union.observe(stages);
    if (!changes) return false;
    for (const c of changes) this.#file.append(line(row, c));
    return true;
  }

  close(): void {
    this.#file.close();
  }
}

/** Writes the journal of a folder whose union is known (merge): one line per column, at the row given. */
export function writeColumnJournal(path: string, entries: Iterable<{ row: number; change: ColumnChange }>): void {
  const tmp = `${path}.tmp`;
  rmSync(tmp, { force: true });
  const out = new AppendFile(tmp);
  for (const e of entries) out.append(line(e.row, e.change));
  out.close();
  renameSync(tmp, path);
}
