/**
 * The output folder of a run, and the bookkeeping that makes resuming safe: results.ndjson and errors.ndjson
 * are the journal (a row is done once its line is written); `RunOutput` says what else is kept, and how a crash
 * at any moment is repaired by the next session.
 */
import { existsSync, mkdirSync, renameSync, rmSync, chmodSync } from 'node:fs';
import { outputFileMode } from './modes.js';
import { join } from 'node:path';
import { BreError } from '@bre-batch/core/errors';
import type { NormalisedTransaction } from '@bre-batch/core/types';
import { RowSet } from './journal/bitset.js';
import { AppendFile, rowOfLine } from '@bre-batch/formats/ndjson-file';
import {
  FILES,
  readManifest,
  writeManifest,
  writeSummary,
  type ErrorLine,
  type Manifest,
  type RunSummary,
} from '@bre-batch/formats';
import { startSession, type RowProvenance } from './audit.js';
import { checkSameRun, resumedManifest } from './folder-identity.js';
import { lockOutput } from './lock.js';
import { journalExists, journalLines } from '@bre-batch/formats/journal-file';
import { expandFolder } from './journal/compact.js';
import { ColumnJournal } from './journal/column-journal.js';
import type { ResultStages, StageColumns } from './journal/columns.js';
import type { DecisionCounter } from '../stages/index.js';
import { rebuildOnThread } from './spool/rebuild-thread.js';
import type { RebuildResult } from './spool/rebuild.js';
import { OUTPUT_FORMATS, type OutputFormat } from './spool/output-formats.js';
import { newSpoolId, ResultSpool } from './spool/spool.js';
import { SpoolThread } from './spool/spool-thread.js';

/** Adds the row of every line to each set; a row already in the first set counts as a duplicate. */
async function rowsOf(path: string, into: readonly RowSet[], dupes: { n: number }): Promise<void> {
  for await (const l of journalLines(path)) {
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
  for await (const l of journalLines(path)) {
    const row = rowOfLine(l.text);
    if (l.text && row !== undefined && rows.has(row)) out.append(l.text);
  }
  out.close();
  chmodSync(tmp, mode);
  renameSync(tmp, path);
}

/** Results this session writes before its spool's thread starts (a few hundred rows). */
const SPOOL_AFTER_BYTES = 256 * 1024;

export interface OpenOptions {
  readonly retryErrors: boolean;
  readonly withTransactions: boolean;
  /** The pipeline's stages and their known columns (the order of the results files' columns). */
  readonly stages?: readonly StageColumns[];
  /** The formats of the rebuilt files (--output-formats). */
  readonly formats?: ReadonlySet<OutputFormat>;
  /** A sampled run: the results files carry `stratum` and `weight` after `row,key`. */
  readonly sampled?: boolean;
  /** Rows a chunk of the results files holds, a row group (BRE_ROW_GROUP_ROWS; default ./spool/chunk-rows.ts CHUNK_ROWS). */
  readonly chunkRows?: number;
  /**
   * The stages whose decisions summary.json counts: the spool counts each chunk's, so that the end after a kill
   * uses the chunks without reading their lines (src/output/spool/records.ts).
   */
  readonly decisionStages?: readonly { readonly id: string; readonly kind: string }[];
  /**
   * Told at once when a journal's write fails (a full disk) or when the spool's thread fails on a full disk:
   * the run stops (src/pipeline/run.ts). Rows whose lines did not make it are not done; they run again.
   */
  readonly onWriteFailure?: (err: Error) => void;
  /**
   * A run's session (its options, never a secret): recorded in manifest.json once the folder's done rows are read
   * (./audit.ts), and every line it writes carries the run's id and its number. Without it (tests of the journal
   * alone) lines carry neither.
   */
  readonly session?: { readonly options: Record<string, unknown> };
  /**
   * The run's row floor (src/pipeline/row-floor.ts): told to the spool with each write of results, so that it
   * writes the rows below it at once. Undefined: the spool holds rows back by count alone.
   */
  readonly floor?: () => number;
}

/**
 * - results.ndjson and errors.ndjson are the journal: a row is done once its line is written (one write()
 *   per line, before anything else happens to the row); on open, torn tails are cut and the done rows are
 *   read back into a bit set;
 * - transactions and secrets are first journalled per row under .state/ and only rows that reached
 *   results.ndjson are kept when transactions.csv is rebuilt, so a crash never duplicates them;
 * - the columns of the results files are journalled as they appear (.state/columns.ndjson, before the
 *   results line that showed them), and the results files are spooled while the run goes and completed
 *   at the end (./spool/spool.ts, ./spool/rebuild.ts);
 * - --retry-errors moves errors.ndjson aside to errors.retrying.ndjson: those rows are not done any more
 *   and run again; they land in results or, failing again, back in errors; the aside file is removed at
 *   the end. A crash in between is repaired by the next run of either kind;
 * - a finished run's journals are compacted (./journal/compact.ts): opening the folder to write puts them back
 *   as plain files first.
 */
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
  #columns: ColumnJournal | undefined;
  #spool: SpoolThread | undefined;
  /** This session's spool's files are named by it (the next end uses a killed session's). */
  readonly #spoolId = newSpoolId();
  /** Length of results.ndjson when this session opened it: its own lines come after. */
  #sessionStart = 0;
  #stages: readonly StageColumns[] = [];
  #formats: ReadonlySet<OutputFormat> = new Set();
  #sampled = false;
  #chunkRows: number | undefined;
  /** The run's id and this session's number, stamped on every line (OpenOptions.session). */
  provenance: RowProvenance | undefined;
  /** `,"run_id":"...","run_session":N`: the part of a results line after its key, made once. */
  #stamp = '';

  /** OpenOptions.onWriteFailure. */
  readonly #onWriteFailure: (err: Error) => void;

  private constructor(dir: string, withTransactions: boolean, onWriteFailure: (err: Error) => void) {
    this.dir = dir;
    this.#withTransactions = withTransactions;
    this.#onWriteFailure = onWriteFailure;
    this.#results = this.#journal(new AppendFile(join(dir, FILES.results)));
    this.#errors = this.#journal(new AppendFile(join(dir, FILES.errors)));
  }

  /** A journal of the run: its write failures reach onWriteFailure. */
  #journal(file: AppendFile): AppendFile {
    file.onFailure = (err) => this.#onWriteFailure(err);
    return file;
  }

  /**
   * `stages` and `formats`: the results files are spooled while the run goes (src/output/spool/spool.ts); without
   * them (tests of the journal alone) they are rebuilt from the journal at the end.
   */
  static async open(dir: string, manifest: Manifest, opts: OpenOptions): Promise<RunOutput> {
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

  static async #open(dir: string, manifest: Manifest, opts: OpenOptions): Promise<RunOutput> {
    const old = readManifest(dir);
    if (old) {
      checkSameRun(dir, old, manifest);
      const kept = resumedManifest(old, manifest);
      if (kept) writeManifest(dir, kept);
    } else {
      if (journalExists(join(dir, FILES.results)) || journalExists(join(dir, FILES.errors))) {
        throw new BreError(
          'OUTPUT_MISMATCH',
          `refusing to write into ${dir}: it holds results but no manifest.json (not a bre-batch output folder, or damaged)`,
        );
      }
      writeManifest(dir, manifest);
    }
    if (opts.retryErrors && !old) {
      throw new BreError('USAGE', `--retry-errors needs the --out folder of an earlier run; ${dir} has none`);
    }
    // A finished folder's journals were compacted (./journal/compact.ts): plain again before any append.
    await expandFolder(dir);
    const retryingPath = join(dir, FILES.retrying);
    const errorsPath = join(dir, FILES.errors);
    if (opts.retryErrors && existsSync(errorsPath)) {
      // Rows failing now join those of an interrupted retry, all to be run again.
      const merged = `${retryingPath}.new`;
      rmSync(merged, { force: true }); // left by a run killed while merging
      const out = new AppendFile(merged);
      if (existsSync(retryingPath)) for await (const l of journalLines(retryingPath)) if (l.text) out.append(l.text);
      for await (const l of journalLines(errorsPath)) if (l.text) out.append(l.text);
      out.close();
      renameSync(merged, retryingPath);
      rmSync(errorsPath);
    }
    const output = new RunOutput(dir, opts.withTransactions, opts.onWriteFailure ?? (() => undefined));
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
    if (opts.session) {
      const p = startSession(dir, { options: opts.session.options, doneAtOpen: succeeded.size + output.failedBefore });
      if (p) {
        output.provenance = p;
        output.#stamp = `,"run_id":${JSON.stringify(p.runId)},"run_session":${p.session}`;
      }
    }
    await output.#pruneJournal(succeeded);
    output.#columns = await ColumnJournal.open(join(dir, FILES.columns), join(dir, FILES.results), succeeded);
    output.#results.before.push(output.#journal(output.#columns.file));
    output.#sessionStart = output.#results.bytes;
    output.#stages = opts.stages ?? [];
    output.#formats = opts.formats ?? new Set(OUTPUT_FORMATS);
    output.#sampled = opts.sampled === true;
    output.#chunkRows = opts.chunkRows;
    if (opts.stages) {
      // The spool's thread starts once this session has written SPOOL_AFTER_BYTES of results: a short run
      // (a test, a small batch) rebuilds its few rows from the journal in no time and never pays for a
      // thread starting up beside its first calls. The thread then reads this session's lines from the start.
      const start = output.#sessionStart;
      const stages = opts.stages;
      const floor = opts.floor ?? (() => 0);
      output.#results.onWrite = (bytes) => {
        if (output.#spool) output.#spool.notify(bytes, floor());
        else if (bytes - start >= SPOOL_AFTER_BYTES) {
          output.#spool = new SpoolThread({
            stateDir: join(dir, FILES.state),
            csv: output.#formats.has('csv'),
            parquet: output.#formats.has('parquet'),
            stages,
            sampled: output.#sampled,
            ...(opts.chunkRows ? { chunkRows: opts.chunkRows } : {}),
            union: output.#columns!.union,
            resultsPath: join(dir, FILES.results),
            start,
            id: output.#spoolId,
            ...(opts.decisionStages ? { decisions: opts.decisionStages.map(({ id, kind }) => ({ id, kind })) } : {}),
          });
          // A spool that fails otherwise is replaced by the journal at the end; on a full disk so would be
          // everything else the run writes: it stops now.
          output.#spool.onFailure = (err) => {
            if (err.code === 'DISK_FULL') output.#onWriteFailure(err);
          };
          output.#spool.notify(bytes, floor());
        }
      };
    }
    return output;
  }

  /** A row in results must not stay in errors (the invariant): can only follow a damaged folder. */
  async #dropErrorsOf(succeeded: RowSet): Promise<void> {
    const path = join(this.dir, FILES.errors);
    const tmp = `${path}.tmp`;
    rmSync(tmp, { force: true }); // left by a run killed while rewriting
    const out = new AppendFile(tmp);
    for await (const l of journalLines(path)) {
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
    await keepRowsOf(path, succeeded, outputFileMode());
    await keepRowsOf(join(this.dir, FILES.secrets), succeeded, 0o600);
    if (this.#withTransactions) {
      this.#tx = this.#journal(new AppendFile(path));
      this.#results.before.push(this.#tx);
    }
  }

  /**
   * `stages` is the stages object already serialised (and scrubbed) by the caller; `parsed`, when given,
   * is the same value as an object (what the spool and the column union read; JSON.parse of `stages` else).
   */
  writeResult(
    row: number,
    key: string | null,
    stages: string,
    transactions: readonly NormalisedTransaction[],
    secrets: readonly { stage: string; name: string; value: string; expiresAt?: string }[],
    parsed?: ResultStages,
    member?: { readonly stratum: string; readonly weight: number },
  ): void {
    // The column journal line goes before the results line that shows the column (a crash in between
    // leaves a column with no row, never a row without its column).
    if (this.#columns) this.#columns.observe(row, parsed ?? (JSON.parse(stages) as ResultStages));
    if (this.#tx && transactions.length > 0) {
      this.#tx.append(JSON.stringify({ row, key, transactions }));
    }
    if (secrets.length > 0) {
      if (!this.#secrets) {
        this.#secrets = this.#journal(new AppendFile(join(this.dir, FILES.secrets), 0o600));
        chmodSync(join(this.dir, FILES.secrets), 0o600);
        this.#results.before.push(this.#secrets);
      }
      this.#secrets.append(JSON.stringify({ row, key, secrets }));
    }
    const design = member
      ? `,"stratum":${JSON.stringify(member.stratum)},"weight":${JSON.stringify(member.weight)}`
      : '';
    this.#results.append(
      `{"row":${row},"key":${JSON.stringify(key ?? null)}${this.#stamp}${design},"stages":${stages}}`,
    );
    this.done.add(row);
    if (this.#watch) this.#written();
  }

  writeError(err: ErrorLine): void {
    const p = this.provenance;
    if (p) {
      // The run's id and session after the key, as in a results line (row, line and key keep their places).
      const { row, line, key, ...rest } = err;
      this.#errors.append(JSON.stringify({ row, line, key, run_id: p.runId, run_session: p.session, ...rest }));
    } else this.#errors.append(JSON.stringify(err));
    this.done.add(err.row);
    if (this.#watch) this.#written();
  }

  /** Bytes of the journals (results, errors, transactions, secrets, columns), lines not yet flushed included. */
  get journalBytes(): number {
    return (
      this.#results.size +
      this.#errors.size +
      (this.#tx?.size ?? 0) +
      (this.#secrets?.size ?? 0) +
      (this.#columns?.file.size ?? 0)
    );
  }

  /** Bytes of results.ndjson and errors.ndjson, lines not yet flushed included (how far a sink is behind). */
  get journalEnds(): { results: number; errors: number } {
    return { results: this.#results.size, errors: this.#errors.size };
  }

  /** Rows this session has written to results or errors. */
  get sessionRows(): number {
    return this.#results.lines + this.#errors.lines;
  }

  /** Calls `fn` once, when this session has written `rows` rows (a run's first measure of its own output). */
  whenWritten(rows: number, fn: () => void): void {
    this.#watch = { rows, fn };
  }

  #watch: { readonly rows: number; readonly fn: () => void } | undefined;

  #written(): void {
    const w = this.#watch;
    if (w && this.sessionRows >= w.rows) {
      this.#watch = undefined;
      w.fn();
    }
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

  /**
   * Hands every journal line written so far to the kernel, then to the disk, off the event loop: a database
   * input's resume point (src/pipeline/frontier-tracker.ts) is written only once the lines it covers are there.
   * Resolves at once when closed (close syncs).
   */
  async syncJournals(): Promise<void> {
    if (this.#closed) return;
    await Promise.all([this.#results.flushAndSync(), this.#errors.flushAndSync()]);
  }

  /**
   * Closes the journals (flushed and synced); again is a no-op. Every journal is closed; the first failure
   * (a full disk: lines that could not be written) is thrown after.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    let failure: unknown;
    for (const close of [
      () => this.#results.close(),
      () => this.#errors.close(),
      () => this.#tx?.close(),
      () => this.#secrets?.close(),
      () => this.#columns?.close(),
    ]) {
      try {
        close();
      } catch (err) {
        failure ??= err;
      }
    }
    if (failure !== undefined) throw failure;
  }

  /**
   * After close: results.csv/.parquet (from the spool and, for rows of earlier sessions, the journal),
   * errors.parquet and the transactions files, on a thread of their own (./spool/rebuild-thread.ts). `decisions`
   * counts the result lines of earlier sessions only (or takes their counts from the index of an earlier end's
   * files): this session's were counted as they were written, whether the spool held them or not (a short run
   * starts no spool and its rows are read back from the journal too).
   */
  async rebuild(decisions?: DecisionCounter): Promise<RebuildResult> {
    try {
      const spool = await this.#spool?.finish(this.#results.bytes);
      return await rebuildOnThread({
        dir: this.dir,
        stages: this.#stages,
        union: this.#columns?.union,
        spool,
        formats: this.#formats,
        sampled: this.#sampled,
        ...(this.#chunkRows ? { chunkRows: this.#chunkRows } : {}),
        transactionsJournal: this.#withTransactions ? join(this.dir, FILES.txJournal) : undefined,
        visitResultsBefore: this.#sessionStart,
        decisions,
        recorded: { except: this.#spoolId },
      });
    } finally {
      ResultSpool.clean(join(this.dir, FILES.state));
    }
  }

  /** Lets another run write to the folder (after the summary: results.csv and summary.json are ours too). */
  unlock(): void {
    // A run that failed before its end leaves the spool's thread running: it ends here (its files are
    // removed by the next session).
    this.#spool?.stop();
    this.#unlock?.();
    this.#unlock = undefined;
  }

  /** After a finished run: the aside file of a retry has served. */
  finishRetry(): void {
    rmSync(join(this.dir, FILES.retrying), { force: true });
  }

  writeSummary(summary: RunSummary): void {
    writeSummary(this.dir, summary);
  }
}
