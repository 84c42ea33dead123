/**
 * The row loop: rows come from the reader a batch at a time (one chunk of the file: a step of the reader
 * costs promises) into the window of rows in flight; each row runs its stages on its own, so the stages
 * overlap across rows. Returns when the input is read, the --limit reached or the run stopping; rows may
 * still be running then (the runner waits for them).
 */
import { BreError, isBreError } from '../errors.js';
import { lineKey, shardOf } from '../input/shard.js';
import type { InputRow } from '../types.js';
import type { Run } from './run.js';
import { writeFailureStop } from './stop.js';
import { sinkKeyProblem } from './sink.js';
import { spendCapStop } from './spend.js';

export async function feed(run: Run): Promise<void> {
  const { s, counters, output, follower } = run;
  try {
    batches: for (let next = run.firstBatch; !next.done; next = await run.reader.next())
      for (let row of next.value) {
        if (run.stopped) break batches;
        if (s.limit !== undefined && row.row > s.limit) break batches;
        counters.read += 1;
        // A database input's resume point moves over the rows as they are done (./frontier-tracker.ts): a row skipped
        // here is done at once; a row that runs, once its line is written.
        run.frontier?.read(row);
        const key = lineKey(row, s.pipeline.key);
        // With a sink a row needs a key of its own (checked over every row read, done ones included).
        if (run.sink) row = sinkKeyProblem(run.sink, row, key, s.pipeline.key);
        // Not in the sample: neither a result nor an error, counted (rows without a key or unreadable are
        // errors of the run: they could not be ranked).
        if (run.sample && key !== null && !row.readError && !run.sample.chosen.has(row.row)) {
          counters.notInSample += 1;
          run.frontier?.done(row.row);
          continue;
        }
        if (s.shard && shardOf(key, row.row, s.shard.count) !== s.shard.index) {
          counters.outOfShard += 1;
          run.frontier?.done(row.row);
          continue;
        }
        if (output) {
          if (output.done.has(row.row)) {
            counters.resumed += 1;
            run.frontier?.done(row.row);
            continue;
          }
          // --retry-errors runs the rows of the errors file, and also the rows an earlier stopped or killed
          // session never reached (else they would be in neither file), within that run's --limit.
          if (
            s.retryErrors &&
            !output.retry.has(row.row) &&
            output.earlierLimit !== null &&
            row.row > output.earlierLimit
          )
            continue;
          if (output.retry.has(row.row)) counters.retriedRows += 1;
        }
        // A sink far behind holds the rows back (its journal lag is bounded, not the memory).
        const behind = follower && output ? follower.room(output.journalEnds) : undefined;
        if (behind) await behind;
        const waiting = run.window.enter();
        if (waiting) await waiting;
        if (run.stopped) {
          run.window.giveBack();
          break batches;
        }
        // --max-spend: a row starts only when its calls fit under the cap with those of the rows in flight.
        if (run.spend) {
          const fits = run.spend.admits() || (await run.spend.admitsAfterTopUp());
          if (!fits || run.stopped) {
            run.window.giveBack();
            if (!fits) run.stop.request(spendCapStop(run.spend));
            break batches;
          }
          run.spend.rowsInFlight += 1;
        }
        counters.processed += 1;
        if (counters.firstDispatch === 0) counters.firstDispatch = performance.now();
        run.window.started();
        void settleRow(run, row, key);
      }
  } catch (err) {
    // The reader failed: it holds nothing more (giving it back only marks it so).
    await run.closeReader().catch(() => undefined);
    const unreadable = !isBreError(err) || err.code === 'INPUT_UNREADABLE';
    run.stop.request(
      unreadable
        ? new BreError('INPUT_UNREADABLE', `cannot read the input ${s.input}: ${(err as Error).message}`)
        : err,
    );
    return;
  }
  await run.closeReader();
}

/** One row, from its stages to its line in results or errors; never rejects. */
async function settleRow(run: Run, row: InputRow, key: string | null): Promise<void> {
  try {
    if (row.readError) {
      run.recorder.unreadable(row, key);
      return;
    }
    if (run.sample && key === null) {
      run.recorder.withoutSampleKey(row);
      return;
    }
    run.recorder.record(row, key, await run.egress.run(row, run.ctx));
  } catch (thrown) {
    let err = thrown;
    // Anything else that goes wrong with one row (a value nested too deeply to handle, say) is that
    // row's error, never a stop: a resume would meet the same row again.
    if (!isWriteFailure(err) && !run.output?.done.has(row.row)) {
      try {
        run.recorder.unexpected(row, key, err);
        return;
      } catch (again) {
        err = again;
      }
    }
    // A write failure (disk full) stops the run: the row is not done and will be re-sent on resume.
    run.stop.request(writeFailureStop(run.s.outDir, err));
  } finally {
    // Not written (the run stopped while it was in flight): it holds the resume point where it is.
    if (run.output?.done.has(row.row)) run.frontier?.done(row.row);
    run.counters.lastSettle = performance.now();
    if (run.spend) run.spend.rowsInFlight -= 1;
    run.window.ended();
  }
}

/** A failure of the output folder itself (disk full, I/O error), as opposed to a problem with one row. */
function isWriteFailure(err: unknown): boolean {
  return typeof (err as { syscall?: unknown } | null)?.syscall === 'string';
}
