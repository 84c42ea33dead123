/**
 * The row loop: rows come from the reader a batch at a time (one chunk of the file: a step of the reader
 * costs promises), pass the row gates (./gates.ts: which rows are sent, and when), and start in the window of
 * rows in flight; each row runs its stages on its own, so the stages overlap across rows. Returns when the
 * input is read, a gate ends it (the --limit, a stop, the spend cap); rows may still be running then (the
 * runner waits for them).
 */
import { BreError, isBreError } from '@bre-batch/core/errors';
import { lineKey } from '../input/shard.js';
import type { InputRow } from '@bre-batch/core/types';
import { RowGates, rowGates } from './gates.js';
import type { Run } from './run.js';
import { writeFailureStop } from './stop.js';

/** The run's row gates (./gates.ts), each given its part of the run. */
function gatesOf(run: Run): RowGates {
  const { s, counters, frontier, sinkThread } = run;
  const gates = rowGates({
    selection: s,
    keyField: s.pipeline.key,
    counters,
    stop: run.stop,
    frontier,
    sink: run.sink,
    job: run.job !== undefined,
    sample: run.sample,
    output: run.output,
    sinkRoom: sinkThread ? (ends) => sinkThread.room(ends) : undefined,
    window: run.window,
    spend: run.spend,
  });
  return new RowGates(gates, (row, counter) => {
    counters[counter] += 1;
    frontier?.done(row.row);
  });
}

export async function feed(run: Run): Promise<void> {
  const { s, counters } = run;
  const gates = gatesOf(run);
  try {
    batches: for (let next = run.firstBatch; !next.done; next = await run.reader.next())
      for (const row of next.value) {
        const c = { row, key: lineKey(row, s.pipeline.key) };
        let admission = gates.admit(c);
        while (typeof admission !== 'string') admission = gates.resume(admission, c, await admission.until);
        if (admission === 'end') break batches;
        if (admission === 'not sent') continue;
        counters.processed += 1;
        if (counters.firstDispatch === 0) counters.firstDispatch = performance.now();
        run.window.started();
        void processRow(run, c.row, c.key, run.floor.start(c.row.row));
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

/** One row, from its stages to its line in results or errors; never rejects. `ticket`: its place in the floor. */
async function processRow(run: Run, row: InputRow, key: string | null, ticket: number): Promise<void> {
  try {
    if (row.readError) {
      run.recorder.unreadable(row, key);
      return;
    }
    if (run.sample && key === null) {
      run.recorder.withoutSampleKey(row);
      return;
    }
    // A job's row is sent only while this worker holds its chunk (src/job/member.ts `sendable`).
    const member = run.job?.member;
    run.recorder.record(row, key, await run.egress.run(row, run.ctx, member && (() => member.sendable(row))));
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
    run.counters.lastDone = performance.now();
    if (run.spend) run.spend.rowsInFlight -= 1;
    run.floor.end(ticket);
    run.window.ended();
  }
}

/** A failure of the output folder itself (disk full, I/O error), as opposed to a problem with one row. */
function isWriteFailure(err: unknown): boolean {
  return typeof (err as { syscall?: unknown } | null)?.syscall === 'string';
}
