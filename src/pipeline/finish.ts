/**
 * The end of a run, once no row is in flight: the journals are closed, the results files completed from
 * the run's spool (and, for rows of earlier sessions, from the journal, where their decisions are counted),
 * errors.parquet and the transactions files written, the time series and metrics closed, and summary.json
 * written with the files and the wait after the last answer; the run's close then unlocks the folder
 * (src/pipeline/run.ts, which closes the journals and ends the monitor, each from one place). A dry run writes
 * dry-run-errors.ndjson instead. A run stopped by a full disk writes nothing more: it throws its DISK_FULL
 * (exit 3), and the re-run resumes and does the end.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { exitCodeOf, type BreError } from '@bre-batch/core/errors';
import { FILES, type RunSummary } from '@bre-batch/formats';
import { ErrorGroups } from '../output/error-groups.js';
import { remainingEstimate } from './plan.js';
import type { RunOutput } from '../output/run-output.js';
import type { Run } from './run.js';
import type { RunSettings } from './settings.js';
import { buildSummary, type SummaryInput } from './build-summary.js';
import { versionsSummary } from '../output/versions-summary.js';
import { spendSummary } from './spend.js';

export interface RunResult {
  /**
   * 0 every row succeeded, 1 some rows in errors, 3 stopped early (docs/troubleshooting.md: By exit code); 2 stopped by what a
   * re-run cannot mend (a database input that changed behind the run, a statement it refuses).
   */
  readonly exitCode: 0 | 1 | 2 | 3;
  readonly summary: RunSummary;
  /** Why the run stopped early, for the person reading the terminal. */
  readonly stopped?: BreError;
}

export async function finish(run: Run): Promise<RunResult> {
  // No row is in flight: the journals are closed, once, by the run (./run.ts closeJournals), the database
  // input's last resume point after them; a failure of theirs is judged below.
  const closeFailure = await run.closeJournals();
  await finishSink(run);
  const { s, stopped } = run;
  // Nothing more is written to a full disk: no end files, no summary (they would fail, or take the room a
  // resume needs). The journals hold whole lines; the re-run the message asks for does the end. The run's
  // close ends the time series as stopped.
  if (run.output && stopped?.code === 'DISK_FULL') throw stopped;
  const common: Omit<SummaryInput, 'totals' | 'decisions'> = {
    s,
    counters: run.counters,
    stages: run.stages,
    stageStats: run.stageStats,
    client: run.egress,
    limiterStats: run.limiterStats,
    started: run.started,
    stopped,
    lanes: run.egress.lanes,
    sample: run.sample,
    source: run.source?.stats,
    sink: sinkSummary(run),
    inputEmpty: run.inputEmpty,
    expectChecked: run.versions.checked,
    ...(run.spend ? { spend: spendSummary(run.spend) } : {}),
  };
  const result = run.output
    ? await folderEnd(run, run.output, common, closeFailure)
    : dryRunEnd(run.s, run.recorder.dryErrors, common);
  // The time series and the metrics end before summary.json: a full disk there (DISK_FULL) leaves no summary.
  await run.finishMonitor(stopped ? 'stopped' : 'finished');
  run.output?.writeSummary(result.summary);
  return result;
}

/** The end of a run into a folder: the results files completed, errors.parquet, the transactions files. */
async function folderEnd(
  run: Run,
  out: RunOutput,
  common: Omit<SummaryInput, 'totals' | 'decisions'>,
  closeFailure: unknown,
): Promise<RunResult> {
  const { s, stopped } = run;
  // The journal's write failure that stopped the run (kept and thrown again by close) is told already; the end
  // files are made from the whole lines on disk. Any other failure of the close is news: thrown.
  if (closeFailure !== undefined && stopped?.cause !== closeFailure) throw closeFailure;
  // When the last answer came (epoch ms): the wait from there to the end goes in the summary.
  const lastAnswerAt = Date.now() - (run.counters.lastDone > 0 ? performance.now() - run.counters.lastDone : 0);
  if (!stopped && out.retry.size > 0) out.finishRetry();
  // The decisions of an earlier end's rows come from its index when its files are used again.
  const rebuilt = await out.rebuild(run.decisions);
  const csv = rebuilt.results;
  const totals = { succeeded: csv.rows, failed: out.failedTotal };
  const estimate = stopped ? run.rowEstimate() : undefined;
  const remaining = estimate ? await remainingAfterStop(s, totals.succeeded + totals.failed, estimate) : undefined;
  const summary = buildSummary({
    ...common,
    totals,
    decisions: run.decisions.counts,
    versions: versionsSummary(run.decisions.versions, run.versions.firstAnswers),
    csv,
    transactions: rebuilt.transactions,
    errorGroups: rebuilt.errorGroups,
    remaining,
  });
  summary.files = [...rebuilt.files];
  summary.end_of_run = {
    last_answer_at: new Date(lastAnswerAt).toISOString(),
    files_seconds: Math.round((Date.now() - lastAnswerAt) / 100) / 10,
    rows_copied: rebuilt.copied,
  };
  return { exitCode: stopped ? exitCodeOf(stopped) : totals.failed > 0 ? 1 : 0, summary, stopped };
}

/**
 * The end of a dry run: dry-run-errors.ndjson, written only when a row would fail (a clean dry run leaves
 * nothing behind, and no stale file of an earlier dry run into the same --out that would say otherwise).
 */
function dryRunEnd(
  s: RunSettings,
  errors: readonly string[],
  common: Omit<SummaryInput, 'totals' | 'decisions'>,
): RunResult {
  const path = resolve(s.outDir, FILES.dryRunErrors);
  if (errors.length > 0) {
    mkdirSync(s.outDir, { recursive: true });
    writeFileSync(path, errors.map((l) => `${l}\n`).join(''));
  } else rmSync(path, { force: true });
  const groups = new ErrorGroups();
  for (const line of errors) groups.add(JSON.parse(line) as Record<string, unknown>);
  const summary = buildSummary({
    ...common,
    totals: { succeeded: 0, failed: errors.length },
    decisions: {},
    ...(errors.length > 0 ? { dryRunErrorsPath: path } : {}),
    errorGroups: groups.result(),
  });
  const stopped = common.stopped;
  return { exitCode: stopped ? exitCodeOf(stopped) : errors.length > 0 ? 1 : 0, summary, stopped };
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
  const sinkThread = run.sinkThread;
  if (!sinkThread || !run.output || run.stopped?.code === 'DISK_FULL') return;
  try {
    const st = await sinkThread.finish();
    run.log(
      `sink: ${st.results} result${st.results === 1 ? '' : 's'} and ${st.errors} error${st.errors === 1 ? '' : 's'} written this session (${st.batches} batch${st.batches === 1 ? '' : 'es'}) to ${run.sink!.writer.describe()}`,
    );
  } catch (err) {
    run.stop.request(err as BreError);
  }
}

/** summary.json's `sink`: what this session wrote into the tables. */
function sinkSummary(run: Run): RunSummary['sink'] {
  const { sink, sinkThread } = run;
  if (!sink || !sinkThread) return undefined;
  const st = sinkThread.stats;
  return {
    url: sink.writer.target.url.display,
    tables: sink.writer.tables(),
    results_written: st.results,
    errors_written: st.errors,
    batches: st.batches,
    reconnects: sinkThread.reconnects,
    ...(st.columns.length > 0 ? { column_changes: st.columns } : {}),
  };
}
