/**
 * The output folder of a run, and the bookkeeping that makes resuming safe:
 * - results.ndjson and errors.ndjson are the journal: a row is done once its line is written (one write()
 *   per line, before anything else happens to the row); on open, torn tails are cut and the done rows are
 *   read back into a bit set;
 * - transactions and secrets are first journalled per row under .state/ and only rows that reached
 *   results.ndjson are kept when transactions.csv is rebuilt, so a crash never duplicates them;
 * - --retry-errors moves errors.ndjson aside to errors.retrying.ndjson: those rows are not done any more
 *   and run again; they land in results or, failing again, back in errors; the aside file is removed at
 *   the end. A crash in between is repaired by the next run of either kind.
 */
import { existsSync, mkdirSync, renameSync, rmSync, createWriteStream, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { stringify } from 'csv-stringify';
import { BreError } from '../errors.js';
import type { NormalisedTransaction } from '../types.js';
import { RowSet } from './bitset.js';
import { excelSafe } from './excel.js';
import { AppendFile, readNdjson, rowOfLine } from './ndjson-file.js';
import { FILES, readManifest, TRANSACTION_COLUMNS, writeManifest, writeSummary, type ErrorLine, type Manifest, type RunSummary } from './format/index.js';
import { checkSameRun } from './manifest.js';
import { lockOutput } from './lock.js';
import { readLines } from '../input/lines.js';
import { createReadStream } from 'node:fs';

/** Adds the row of every line to each set; a row already in the first set counts as a duplicate. */
async function rowsOf(path: string, into: readonly RowSet[], dupes: { n: number }): Promise<void> {
  if (!existsSync(path)) return;
  for await (const l of readLines(createReadStream(path), 256 * 1024 * 1024)) {
    if (l.text === '') continue;
    const row = rowOfLine(l.text);
    if (row === undefined) continue;
    if (into[0].has(row) || (into.length > 1 && into[1].has(row))) dupes.n += 1;
    for (const set of into) set.add(row);
  }
}

/** Rewrites an NDJSON journal keeping only the lines of `rows` (atomically: a temporary file, renamed). */
async function keepRowsOf(path: string, rows: RowSet, mode: number): Promise<void> {
  if (!existsSync(path)) return;
  const tmp = `${path}.tmp`;
  rmSync(tmp, { force: true }); // left by a run killed while rewriting
  const out = new AppendFile(tmp, mode);
  for await (const l of readLines(createReadStream(path), 256 * 1024 * 1024)) {
    const row = rowOfLine(l.text);
    if (l.text && row !== undefined && rows.has(row)) out.append(l.text);
  }
  out.close();
  chmodSync(tmp, mode);
  renameSync(tmp, path);
}

export class RunOutput {
  readonly dir: string;
  /** Rows already in results or errors. */
  readonly done = new RowSet();
  /** With --retry-errors (or a retry interrupted earlier): the rows to run again. */
  readonly retry = new RowSet();
  /** Rows found done when the folder was opened. */
  resumedRows = 0;
  /** The --limit of the run that created the folder (null: none, or a new folder). */
  earlierLimit: number | null = null;
  succeededBefore = 0;
  failedBefore = 0;
  readonly #results: AppendFile;
  readonly #errors: AppendFile;
  #tx: AppendFile | undefined;
  #secrets: AppendFile | undefined;
  #unlock: (() => void) | undefined;
  readonly #withTransactions: boolean;

  private constructor(dir: string, withTransactions: boolean) {
    this.dir = dir;
    this.#withTransactions = withTransactions;
    this.#results = new AppendFile(join(dir, FILES.results));
    this.#errors = new AppendFile(join(dir, FILES.errors));
  }

  static async open(dir: string, manifest: Manifest, opts: { retryErrors: boolean; withTransactions: boolean }): Promise<RunOutput> {
    mkdirSync(join(dir, FILES.state), { recursive: true });
    const unlock = lockOutput(dir);
    try {
      const output = await RunOutput.#open(dir, manifest, opts);
      output.#unlock = unlock;
      return output;
    } catch (err) {
      unlock();
      throw err;
    }
  }

  static async #open(dir: string, manifest: Manifest, opts: { retryErrors: boolean; withTransactions: boolean }): Promise<RunOutput> {
    const old = readManifest(dir);
    if (old) checkSameRun(dir, old, manifest);
    else {
      if (existsSync(join(dir, FILES.results)) || existsSync(join(dir, FILES.errors))) {
        throw new BreError('OUTPUT_MISMATCH', `refusing to write into ${dir}: it holds results but no manifest.json (not a bre-batch output folder, or damaged)`);
      }
      writeManifest(dir, manifest);
    }
    if (opts.retryErrors && !old) {
      throw new BreError('USAGE', `--retry-errors needs the --out folder of an earlier run; ${dir} has none`);
    }
    const retryingPath = join(dir, FILES.retrying);
    const errorsPath = join(dir, FILES.errors);
    if (opts.retryErrors && existsSync(errorsPath)) {
      // Rows failing now join those of an interrupted retry, all to be run again.
      const merged = `${retryingPath}.new`;
      rmSync(merged, { force: true }); // left by a run killed while merging
      const out = new AppendFile(merged);
      if (existsSync(retryingPath)) for await (const l of readLines(createReadStream(retryingPath), 256 * 1024 * 1024)) if (l.text) out.append(l.text);
      for await (const l of readLines(createReadStream(errorsPath), 256 * 1024 * 1024)) if (l.text) out.append(l.text);
      out.close();
      renameSync(merged, retryingPath);
      rmSync(errorsPath);
    }
    const output = new RunOutput(dir, opts.withTransactions);
    output.earlierLimit = old?.limit ?? null;
    const succeeded = new RowSet();
    const failed = new RowSet();
    const dupes = { n: 0 };
    await rowsOf(join(dir, FILES.results), [succeeded, output.done], dupes);
    await rowsOf(errorsPath, [failed, output.done], dupes);
    if (existsSync(retryingPath)) await rowsOf(retryingPath, [output.retry], { n: 0 });
    if (dupes.n > 0) {
      await output.#dropErrorsOf(succeeded);
      const recount = new RowSet();
      await rowsOf(errorsPath, [recount], { n: 0 });
      output.failedBefore = recount.size;
    } else output.failedBefore = failed.size;
    output.succeededBefore = succeeded.size;
    await output.#pruneJournal(succeeded);
    return output;
  }

  /** A row in results must not stay in errors (the invariant): can only follow a damaged folder. */
  async #dropErrorsOf(succeeded: RowSet): Promise<void> {
    const path = join(this.dir, FILES.errors);
    const tmp = `${path}.tmp`;
    rmSync(tmp, { force: true }); // left by a run killed while rewriting
    const out = new AppendFile(tmp);
    for await (const l of readLines(createReadStream(path), 256 * 1024 * 1024)) {
      const row = rowOfLine(l.text);
      if (l.text && (row === undefined || !succeeded.has(row))) out.append(l.text);
    }
    out.close();
    renameSync(tmp, path);
  }

  /**
   * Transactions and secrets journalled for rows that never reached results.ndjson (in flight at a crash)
   * are dropped: those rows run again and journal them afresh.
   */
  async #pruneJournal(succeeded: RowSet): Promise<void> {
    const path = join(this.dir, FILES.txJournal);
    await keepRowsOf(path, succeeded, 0o644);
    await keepRowsOf(join(this.dir, FILES.secrets), succeeded, 0o600);
    if (this.#withTransactions) {
      this.#tx = new AppendFile(path);
      this.#results.before.push(this.#tx);
    }
  }

  /** `stages` is the stages object already serialised (and scrubbed) by the caller. */
  writeResult(row: number, key: string | null, stages: string, transactions: readonly NormalisedTransaction[], secrets: readonly { stage: string; name: string; value: string; expiresAt?: string }[]): void {
    if (this.#tx && transactions.length > 0) {
      this.#tx.append(JSON.stringify({ row, key, transactions }));
    }
    if (secrets.length > 0) {
      if (!this.#secrets) {
        this.#secrets = new AppendFile(join(this.dir, FILES.secrets), 0o600);
        chmodSync(join(this.dir, FILES.secrets), 0o600);
        this.#results.before.push(this.#secrets);
      }
      this.#secrets.append(JSON.stringify({ row, key, secrets }));
    }
    this.#results.append(`{"row":${row},"key":${JSON.stringify(key ?? null)},"stages":${stages}}`);
    this.done.add(row);
  }

  writeError(err: ErrorLine): void {
    this.#errors.append(JSON.stringify(err));
    this.done.add(err.row);
  }

  get resultsWritten(): number {
    return this.#results.lines;
  }

  get failedTotal(): number {
    return this.failedBefore + this.#errors.lines;
  }

  get errorsWritten(): number {
    return this.#errors.lines;
  }

  #closed = false;

  /** Closes the journals (flushed and synced); again is a no-op. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#results.close();
    this.#errors.close();
    this.#tx?.close();
    this.#secrets?.close();
  }

  /** Lets another run write to the folder (after the summary: results.csv and summary.json are ours too). */
  unlock(): void {
    this.#unlock?.();
    this.#unlock = undefined;
  }

  /** After a finished run: the aside file of a retry has served. */
  finishRetry(): void {
    rmSync(join(this.dir, FILES.retrying), { force: true });
  }

  async buildTransactionsCsv(): Promise<number> {
    const src = join(this.dir, FILES.txJournal);
    const dst = join(this.dir, FILES.transactions);
    const tmp = `${dst}.tmp`;
    const out = createWriteStream(tmp);
    const csv = stringify({ header: true, columns: [...TRANSACTION_COLUMNS] });
    csv.pipe(out);
    let n = 0;
    for await (const entry of readNdjson<{ key: unknown; transactions: NormalisedTransaction[] }>(src)) {
      if (!entry) continue;
      for (const t of entry.transactions) {
        const rec = [excelSafe(entry.key), t.source, excelSafe(t.account), excelSafe(t.txn_id), t.timestamp ?? '', t.value_date ?? '', t.type, String(t.amount), t.balance === null ? '' : String(t.balance), excelSafe(t.mode), excelSafe(t.narration)];
        if (!csv.write(rec)) await once(csv, 'drain');
        n += 1;
      }
    }
    csv.end();
    await once(out, 'finish');
    renameSync(tmp, dst);
    return n;
  }

  writeSummary(summary: RunSummary): void {
    writeSummary(this.dir, summary);
  }
}
