/**
 * Follows an output folder's journals into the sink: results.ndjson and errors.ndjson are read from where the
 * commit table says this folder was written up to, a batch at a time, each written in one transaction with
 * its new position (./writer.ts). The journal stays the truth: a kill at any moment loses nothing the next
 * session does not write again, and an upsert written twice changes nothing.
 *
 * The same code serves a run (following the journals while they grow, off the rows' path) and `bre-batch
 * load` (one pass to the end). A journal replaced since its position was recorded (--retry-errors moves
 * errors.ndjson aside) is read again from its start.
 *
 * An account pipeline's transactions are journalled per row in .state/transactions.ndjson before the row's
 * results line: the results' read end is taken before the transactions are read, so every result read has
 * its transactions at hand.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import { realpathSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { BreError, isBreError } from '@bre-batch/core/errors';
import type { NormalisedTransaction } from '@bre-batch/core/types';
import { RowSet } from '../journal/bitset.js';
import { rowOfLine } from '@bre-batch/formats/ndjson-file';
import { FILES, isErrorLine, isResultLine, type ErrorLine, type Manifest } from '@bre-batch/formats';
import { fileIdentity, fileSize, JournalTail } from './tail.js';
import type { BatchFence, FolderId, FolderProgress, ResultItem, SinkWriter } from './writer.js';
import { Nap } from '../../retry/sleep.js';

/** Journal bytes read for one batch (about 5,000 results lines of a typical pipeline). */
const BATCH_BYTES = 4 * 1024 * 1024;
/** How often a run's journals are looked at when the last look found nothing new. */
const POLL_MS = 200;
/** How long after writing what a run's journals held the next look waits (unless a batch filled). */
const FOLLOW_MS = POLL_MS;

/** The commit table's name of a folder: where it is (host and path) and when it was made (a new folder at the same path is another). */
export function folderId(dir: string, manifest: Manifest): FolderId {
  const path = realpathSync(dir);
  const host = hostname();
  const id = createHash('sha256').update(`${host}\0${path}\0${manifest.created_at}`).digest('hex').slice(0, 32);
  return { id, host, path, runId: manifest.run_id ?? null };
}

/** The lines read for one write, and the positions after them. */
interface Batch {
  readonly results: ResultItem[];
  readonly errors: ErrorLine[];
  readonly next: { readonly results: number; readonly errors: number };
  /** Journal bytes the batch holds. */
  readonly bytes: number;
  /** The read began after finish(): an empty one means everything is written. */
  readonly final: boolean;
  readonly empty: boolean;
}

export interface FollowerStats {
  results: number;
  errors: number;
  batches: number;
  /** Columns added for fields none declared, or widened, this session (./schema.ts `changes`), in order. */
  columns: string[];
}

export class SinkFollower {
  readonly stats: FollowerStats = { results: 0, errors: 0, batches: 0, columns: [] };
  readonly #results: JournalTail;
  readonly #errors: JournalTail;
  readonly #tx: JournalTail | undefined;
  /** Transactions of rows whose results line has not been written to the sink yet, by row (the last line wins). */
  readonly #pending = new Map<number, readonly NormalisedTransaction[]>();
  #marks: { results: string | null; errors: string | null };
  #batches: number;
  #loop: Promise<void> | undefined;
  #stopping = false;
  #finalSizes: { results: number; errors: number } | undefined;
  #failure: BreError | undefined;
  readonly #nap = new Nap();

  /** Told once when writing failed for good (SINK_UNAVAILABLE, SINK_REJECTED). */
  onFailure: ((err: BreError) => void) | undefined;
  /** A job's worker: the fence each batch passes in its transaction (src/job/fence.ts). */
  fence: BatchFence | undefined;
  /** Told after each batch's transaction committed, before onProgress. */
  onBatch: (() => void) | undefined;
  /** Told after each batch written (the positions and stats moved). */
  onProgress: (() => void) | undefined;

  private constructor(
    readonly dir: string,
    readonly folder: FolderId,
    private readonly writer: SinkWriter,
    progress: FolderProgress | undefined,
    private readonly log: (line: string) => void,
  ) {
    const resultsPath = join(dir, FILES.results);
    const errorsPath = join(dir, FILES.errors);
    this.#marks = { results: fileIdentity(resultsPath), errors: fileIdentity(errorsPath) };
    // A position is kept only for the same file, no longer than it is now.
    const at = (mark: { file: string | null; bytes: number } | undefined, file: string | null, path: string) =>
      mark && mark.file !== null && mark.file === file && mark.bytes <= fileSize(path) ? mark.bytes : 0;
    this.#results = new JournalTail(resultsPath, at(progress?.results, this.#marks.results, resultsPath));
    this.#errors = new JournalTail(errorsPath, at(progress?.errors, this.#marks.errors, errorsPath));
    this.#batches = progress?.batches ?? 0;
    this.#tx = writer.shape.transactions ? new JournalTail(join(dir, FILES.txJournal), 0) : undefined;
  }

  /** Reads the folder's progress from the commit table; the transactions of rows not yet written are gathered. */
  static async open(
    dir: string,
    manifest: Manifest,
    writer: SinkWriter,
    log: (line: string) => void,
  ): Promise<SinkFollower> {
    const folder = folderId(dir, manifest);
    const f = new SinkFollower(dir, folder, writer, await writer.progress(folder), log);
    if (f.#tx) await f.#gatherTransactions();
    return f;
  }

  /** Where the journals have been written up to (results, errors). */
  get positions(): { results: number; errors: number } {
    return { results: this.#results.position, errors: this.#errors.position };
  }

  get failure(): BreError | undefined {
    return this.#failure;
  }

  /** Starts following the journals as the run appends to them. */
  follow(): void {
    this.#loop ??= this.#run();
  }

  /**
   * The journals are closed at these sizes: writes what is left, then stops. Throws the failure that stopped
   * the sink, if it did.
   */
  async finish(): Promise<FollowerStats> {
    this.#finalSizes = { results: fileSize(this.#results.path), errors: fileSize(this.#errors.path) };
    this.follow();
    this.#nap.wake();
    await this.#loop;
    await this.#close();
    if (this.#failure) throw this.#failure;
    return this.stats;
  }

  /** Stops following without writing what is left (the run failed otherwise; the next session catches up). */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#nap.wake();
    await this.#loop?.catch(() => undefined);
    await this.#close();
  }

  async #close(): Promise<void> {
    await Promise.all([this.#results.close(), this.#errors.close(), this.#tx?.close()]);
  }

  async #run(): Promise<void> {
    let next: Promise<Batch> | undefined;
    try {
      next = this.#read(this.positions);
      while (!this.#stopping) {
        const batch: Batch = await next;
        next = undefined;
        if (batch.empty) {
          // A look that began before finish() read to the sizes of then: only one that began after ends it.
          if (batch.final) return;
          if (!this.#finalSizes) await this.#nap.take(POLL_MS);
          if (this.#stopping) return;
          next = this.#read(this.positions);
          continue;
        }
        const writing = this.#write(batch);
        // More to write (a batch that filled, or the run's end): the next one is read and parsed while this one
        // is written, the database's work and ours overlapping. Else the journals were read to their end, and
        // the next look waits a while: a run's rows go in batches of a fifth of a second or so, not of a few
        // rows each (each batch costs its statements and a commit, here and on the database).
        const more: boolean = batch.bytes >= BATCH_BYTES / 2 || this.#finalSizes !== undefined;
        next = more ? this.#read(batch.next) : undefined;
        await writing;
        if (next) continue;
        if (!this.#finalSizes) await this.#nap.take(FOLLOW_MS);
        if (this.#stopping) return;
        next = this.#read(this.positions);
      }
    } catch (err) {
      this.#failure = isBreError(err)
        ? err
        : new BreError('SINK_REJECTED', `the sink failed: ${(err as Error).message}`, { cause: err });
      this.onFailure?.(this.#failure);
    } finally {
      await next?.catch(() => undefined);
    }
  }

  /** The lines of one batch from `from` (the positions written, or the end of the batch being written). */
  async #read(from: { results: number; errors: number }): Promise<Batch> {
    const final = this.#finalSizes !== undefined;
    // The read ends first, then the transactions: a results line read has its transactions journalled before it.
    const ends = this.#finalSizes ?? { results: fileSize(this.#results.path), errors: fileSize(this.#errors.path) };
    if (this.#tx) await this.#gatherTransactions();
    const r = await this.#results.read(ends.results, BATCH_BYTES, from.results);
    const e = await this.#errors.read(
      ends.errors,
      Math.max(64 * 1024, BATCH_BYTES - (r.next - from.results)),
      from.errors,
    );
    const next = { results: r.next, errors: e.next };
    const bytes = r.next - from.results + (e.next - from.errors);
    if (bytes === 0) return { results: [], errors: [], next, bytes, final, empty: true };
    const results: ResultItem[] = [];
    for (const text of r.lines) {
      const line = parse(text);
      if (!isResultLine(line)) {
        this.log(`sink: skipped a line of ${FILES.results} that is not a result line (at byte ${from.results})`);
        continue;
      }
      if (line.key === null) {
        // Only a folder written before its run had a sink can hold one: no key, no row to upsert.
        this.log(`sink: row ${line.row} has no key and cannot be written to ${this.writer.names.results}`);
        continue;
      }
      const tx = this.#pending.get(line.row);
      results.push({
        row: line.row,
        key: line.key,
        stratum: line.stratum,
        weight: line.weight,
        runId: line.run_id,
        runSession: line.run_session,
        stages: line.stages,
        stagesText: stagesTextOf(text, line),
        ...(this.#tx ? { transactions: tx ?? [] } : {}),
      });
    }
    const errors: ErrorLine[] = [];
    for (const text of e.lines) {
      const line = parse(text);
      if (isErrorLine(line)) errors.push(line);
    }
    return { results, errors, next, bytes, final, empty: false };
  }

  /** One batch in one transaction with the positions after it; then they are the follower's. */
  async #write(batch: Batch): Promise<void> {
    const { results, errors, next } = batch;
    const progress: FolderProgress = {
      results: { file: this.#marks.results, bytes: next.results },
      errors: { file: this.#marks.errors, bytes: next.errors },
      batches: this.#batches + 1,
    };
    const written = await this.writer.write(this.folder, { results, errors, progress }, this.fence);
    this.#batches += 1;
    this.#results.advance(next.results);
    this.#errors.advance(next.errors);
    for (const x of results) this.#pending.delete(x.row);
    for (const x of errors) this.#pending.delete(x.row);
    this.stats.results += written.results;
    this.stats.errors += written.errors;
    this.stats.batches += 1;
    this.stats.columns = [...this.writer.columnChanges];
    this.onBatch?.();
    this.onProgress?.();
  }

  /**
   * Reads the transactions journal on from where it was: at the start, every row's, but those of rows already
   * written to the sink (before the results position) are not kept.
   */
  async #gatherTransactions(): Promise<void> {
    const tail = this.#tx!;
    let written: RowSet | undefined;
    if (tail.position === 0 && this.#results.position > 0) {
      written = new RowSet();
      const prefix = new JournalTail(this.#results.path, 0);
      for (
        let chunk = await prefix.read(this.#results.position, BATCH_BYTES);
        chunk.lines.length > 0;
        chunk = await prefix.read(this.#results.position, BATCH_BYTES)
      ) {
        for (const l of chunk.lines) {
          const row = rowOfLine(l);
          if (row !== undefined) written.add(row);
        }
        prefix.advance(chunk.next);
      }
      await prefix.close();
    }
    const end = fileSize(tail.path);
    for (
      let chunk = await tail.read(end, BATCH_BYTES);
      chunk.lines.length > 0 || chunk.next > tail.position;
      chunk = await tail.read(end, BATCH_BYTES)
    ) {
      for (const l of chunk.lines) {
        const v = parse(l) as { row?: unknown; transactions?: unknown } | undefined;
        if (!v || typeof v.row !== 'number' || !Array.isArray(v.transactions)) continue;
        if (written?.has(v.row)) continue;
        this.#pending.set(v.row, v.transactions as NormalisedTransaction[]);
      }
      tail.advance(chunk.next);
    }
  }
}

/**
 * The text of a results line's `stages`, cut from the line when that is exact: the line's last member, after
 * scalar members only (row, key, a sample's stratum and weight), as a run and merge write it. The `result`
 * column takes it as it is instead of the object made into JSON again.
 */
function stagesTextOf(text: string, line: object): string | undefined {
  if (text.charCodeAt(text.length - 1) !== 0x7d) return undefined;
  let last: string | undefined;
  for (const k in line) {
    const v = (line as Record<string, unknown>)[k];
    // An integer-like name comes first whatever its place in the text: its order cannot be told.
    if ((k !== 'stages' && typeof v === 'object' && v !== null) || (k.charCodeAt(0) >= 0x30 && k.charCodeAt(0) <= 0x39))
      return undefined;
    last = k;
  }
  if (last !== 'stages') return undefined;
  // A member name's quote cannot be inside a string (there it is escaped) and nothing before is nested: the first is the one.
  const at = text.indexOf(',"stages":');
  return at < 0 ? undefined : text.slice(at + ',"stages":'.length, -1);
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
