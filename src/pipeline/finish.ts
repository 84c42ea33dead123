/**
 * The end of a run, once no row is in flight: the journals are closed, the results files completed from
 * the run's spool (and, for rows of earlier sessions, from the journal, where their decisions are counted),
 * errors.parquet and the transactions files written, the time series and metrics closed, summary.json
 * written with the files and the wait after the last answer, and the folder unlocked. A dry run writes
 * dry-run-errors.ndjson instead. A run stopped by a full disk writes nothing more: it throws its DISK_FULL
 * (exit 3), and the re-run resumes and does the end.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { exitCodeOf, type BreError } from '../errors.js';
import { FILES, type RunSummary } from '../output/format/index.js';
import { remainingEstimate } from './plan.js';
import type { Run } from './run.js';
import type { RunSettings } from './settings.js';
import { buildSummary, type SummaryInput } from './build-summary.js';

export interface RunResult {
  /**
   * 0 every row succeeded, 1 some rows in errors, 3 stopped early (README: Exit codes); 2 stopped by what a
   * re-run cannot mend (a database input that changed behind the run, a statement it refuses).
   */
  readonly exitCode: 0 | 1 | 2 | 3;
  readonly summary: RunSummary;
  /** Why the run stopped early, for the person reading the terminal. */
  readonly stopped?: BreError;
}

export async function finish(run: Run): Promise<RunResult> {
  await finishSink(run);
  const { s, stopped } = run;
  const common: Omit<SummaryInput, 'totals' | 'decisions'> = {
    s,
    counters: run.counters,
    stages: run.stages,
    stageStats: run.stageStats,
    client: run.client,
    limiterStats: run.limiterStats,
    started: run.started,
    stopped,
    lanes: run.egress?.lanes,
    sample: run.sample,
    source: run.source?.stats,
    sink: sinkSummary(run),
    inputEmpty: run.inputEmpty,
  };
  const stoppedExit = stopped ? exitCodeOf(stopped) : 0;
  // When the last answer came (epoch ms): the wait from there to the end goes in the summary (issue 16).
  const lastAnswerAt = Date.now() - (run.counters.lastSettle > 0 ? performance.now() - run.counters.lastSettle : 0);
  const monitor = run.monitor;
  run.monitor = undefined;
  if (!run.output) {
    const path = resolve(s.outDir, FILES.dryRunErrors);
    const errors = run.recorder.dryErrors;
    // Written only when a row would fail: a clean dry run leaves nothing behind (and no stale file of an
    // earlier dry run into the same --out that would say otherwise).
    if (errors.length > 0) {
      mkdirSync(s.outDir, { recursive: true });
      writeFileSync(path, errors.map((l) => `${l}\n`).join(''));
    } else rmSync(path, { force: true });
    const summary = buildSummary({
      ...common,
      totals: { succeeded: 0, failed: errors.length },
      decisions: {},
      ...(errors.length > 0 ? { dryRunErrorsPath: path } : {}),
    });
    await monitor?.finish(stopped ? 'stopped' : 'finished');
    return { exitCode: stopped ? stoppedExit : errors.length > 0 ? 1 : 0, summary, stopped };
  }
  const out = run.output;
  if (stopped?.code === 'DISK_FULL') {
    // Nothing more is written to a full disk: no end files, no summary (they would fail, or take the room a
    // resume needs). The journals hold whole lines; the re-run the message asks for does the end.
    try {
      out.close();
    } catch {
      /* the stop already says why */
    }
    await monitor?.finish('stopped').catch(() => undefined);
    throw stopped;
  }
  try {
    try {
      out.close();
    } catch (err) {
      // The journal's write failure that stopped the run (kept and thrown again by close) is told already;
      // the end files are made from the whole lines on disk. Any other failure here is news: thrown.
      if (stopped?.cause !== err) throw err;
    }
    // The journals are closed and on disk: the resume point goes after them.
    await run.saveFrontier();
    if (!stopped && out.retry.size > 0) out.finishRetry();
    const rebuilt = await out.rebuild((line) => run.decisions.add(line.stages));
    const csv = rebuilt.results;
    const totals = { succeeded: csv.rows, failed: out.failedTotal };
    const estimate = stopped ? run.rowEstimate() : undefined;
    const remaining = estimate ? await remainingAfterStop(s, totals.succeeded + totals.failed, estimate) : undefined;
    const summary = buildSummary({
      ...common,
      totals,
      decisions: run.decisions.counts,
      csv,
      transactions: rebuilt.transactions,
      remaining,
    });
    summary.files = [...rebuilt.files];
    summary.end_of_run = {
      last_answer_at: new Date(lastAnswerAt).toISOString(),
      files_seconds: Math.round((Date.now() - lastAnswerAt) / 100) / 10,
    };
    await monitor?.finish(stopped ? 'stopped' : 'finished');
    out.writeSummary(summary);
    out.unlock();
    return { exitCode: stopped ? stoppedExit : totals.failed > 0 ? 1 : 0, summary, stopped };
  } catch (err) {
    await monitor?.finish('failed').catch(() => undefined);
    throw err;
  }
}

/** For a stopped run: about how many rows are left (of the sample, for a sampled run) and how long they need at the configured limits. */
async function remainingAfterStop(
  s: RunSettings,
  done: number,
  estimate: Promise<number>,
): Promise<RunSummary['remaining']> {
  const dataRows = Math.min(s.limit ?? Infinity, await estimate.catch(() => 0));
  const rows = Math.max(0, Math.round(dataRows / (s.shard?.count ?? 1)) - done);
  const eta = remainingEstimate(rows, s);
  return { rows_estimate: rows, time_estimate: eta.text, time_estimate_ms: eta.ms };
}

/**
 * --sink: the journals are closed, and the sink writes them to their end before the end files (a sink that
 * fails for good now stops the run as it would have mid-run: exit 3, the folder whole, the re-run catching up).
 */
async function finishSink(run: Run): Promise<void> {
  const follower = run.sink?.follower;
  if (!follower || !run.output || run.stopped?.code === 'DISK_FULL') return;
  try {
    run.output.close();
  } catch {
    /* the journals hold whole lines; finish reports the failure */
  }
  try {
    const st = await follower.finish();
    run.log(
      `sink: ${st.results} result${st.results === 1 ? '' : 's'} and ${st.errors} error${st.errors === 1 ? '' : 's'} written this session (${st.batches} batch${st.batches === 1 ? '' : 'es'}) to ${run.sink!.writer.describe()}`,
    );
  } catch (err) {
    run.stop.request(err as BreError);
  }
}

/** summary.json's `sink`: what this session wrote into the tables. */
function sinkSummary(run: Run): RunSummary['sink'] {
  const sink = run.sink;
  if (!sink?.follower) return undefined;
  const st = sink.follower.stats;
  return {
    url: sink.writer.target.url.display,
    tables: sink.writer.tables(),
    results_written: st.results,
    errors_written: st.errors,
    batches: st.batches,
    reconnects: sink.follower.reconnects,
  };
}
