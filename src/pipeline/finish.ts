/**
 * The end of a run, once no row is in flight: the journals are closed, results.csv and transactions.csv
 * rebuilt from them (decisions counted on the way), summary.json written, and the folder unlocked.
 * A dry run writes dry-run-errors.ndjson instead.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { BreError } from '../errors.js';
import { FILES, type RunSummary } from '../output/format/index.js';
import { buildResultsCsv } from '../output/results-csv.js';
import { DecisionCounter, kindOf } from '../stages/index.js';
import { remainingEstimate } from './plan.js';
import { countLines } from './progress.js';
import type { Run } from './run.js';
import type { RunSettings } from './settings.js';
import { buildSummary, type SummaryInput } from './summary.js';

export interface RunResult {
  /** 0 every row succeeded, 1 some rows in errors, 3 stopped early (README: Exit codes). */
  readonly exitCode: 0 | 1 | 3;
  readonly summary: RunSummary;
  /** Why the run stopped early, for the person reading the terminal. */
  readonly stopped?: BreError;
}

export async function finish(run: Run): Promise<RunResult> {
  const { s, stopped } = run;
  const common: Omit<SummaryInput, 'totals' | 'decisions'> = {
    s, counters: run.counters, stages: run.stages, stageStats: run.stageStats, client: run.client, limiterStats: run.limiterStats, started: run.started, stopped,
  };
  if (!run.output) {
    const path = resolve(s.outDir, FILES.dryRunErrors);
    const errors = run.recorder.dryErrors;
    writeFileSync(path, errors.map((l) => `${l}\n`).join(''));
    const summary = buildSummary({ ...common, totals: { succeeded: 0, failed: errors.length }, decisions: {}, dryRunErrorsPath: path });
    return { exitCode: stopped ? 3 : errors.length > 0 ? 1 : 0, summary, stopped };
  }
  const out = run.output;
  out.close();
  if (!stopped && out.retry.size > 0) out.finishRetry();
  const decisions = new DecisionCounter(s.pipeline.stages);
  const csv = await buildResultsCsv(resolve(s.outDir, FILES.results), resolve(s.outDir, FILES.resultsCsv),
    s.pipeline.stages.map((st) => ({ id: st.id, known: kindOf(st).resultColumns?.(st) ?? [] })),
    (line) => decisions.add(line.stages));
  const transactions = s.pipeline.stages.some((st) => kindOf(st).producesTransactions === true) ? await out.buildTransactionsCsv() : undefined;
  const totals = { succeeded: csv.rows, failed: out.failedTotal };
  const remaining = stopped && s.input !== '-' ? await remainingAfterStop(s, totals.succeeded + totals.failed) : undefined;
  const summary = buildSummary({ ...common, totals, decisions: decisions.counts, csv, transactions, remaining });
  out.writeSummary(summary);
  out.unlock();
  return { exitCode: stopped ? 3 : totals.failed > 0 ? 1 : 0, summary, stopped };
}

/** For a stopped run: about how many rows are left and how long they need at the configured limits. */
async function remainingAfterStop(s: RunSettings, done: number): Promise<RunSummary['remaining']> {
  const lines = await countLines(s.input);
  const dataRows = Math.min(s.limit ?? Infinity, Math.max(0, lines - (s.inputFormat === 'csv' ? 1 : 0)));
  const rows = Math.max(0, Math.round(dataRows / (s.shard?.count ?? 1)) - done);
  const eta = remainingEstimate(rows, s);
  return { rows_estimate: rows, time_estimate: eta.text, time_estimate_ms: eta.ms };
}
