/**
 * The row scheduler. Rows stream from the reader into a bounded window of rows in flight; each row runs its
 * stages in order, and since many rows are in flight at once the stages overlap across rows (row 1 in its
 * workflow call while rows 2..n are in their bureau calls), so a pipeline takes about as long as its slowest
 * stage. Every call goes through the service's limiter (src/http/chain.ts), which is what keeps the run at
 * the per-IP limit; the window only has to be wide enough to keep every limiter busy.
 */
import { setMaxListeners } from 'node:events';
import { dirname, resolve } from 'node:path';
import { mkdirSync, writeFileSync } from 'node:fs';
import { BreError, toBreError } from '../errors.js';
import { createClient, type ServiceClient } from '../http/chain.js';
import { maskText } from '../input/mask.js';
import { readRowBatches } from '../input/read.js';
import type { ServiceLimiter } from '../limits/limiter.js';
import { CallStats } from '../metrics/service-stats.js';
import { inputFingerprint, type Manifest } from '../output/manifest.js';
import { Redactor } from '../output/redact.js';
import { buildResultsCsv } from '../output/results-csv.js';
import { FILES, RunOutput } from '../output/run-output.js';
import { buildSummary, type RunCounters } from './summary.js';
import { getStageKind } from '../stages/index.js';
import type { StageContext } from '../stages/types.js';
import type { InputRow, ServiceName } from '../types.js';
import { Circuit } from './circuit.js';
import { OutcomeRecorder } from './recorder.js';
import { localLimiter, type LimiterFactory } from '../limits/factory.js';
import { createLimiters } from './limiters.js';
import { Progress, countLines as countInputLines } from './progress.js';
import { remainingEstimate } from './plan.js';
import { runRow, type StageRuntime } from './row.js';
import { Semaphore } from './semaphore.js';
import type { RunSettings } from './settings.js';
import { rowKey, shardOf } from '../input/shard.js';

export interface RunResult {
  readonly exitCode: 0 | 1 | 3;
  readonly summary: Record<string, unknown>;
  /** Why the run stopped early, for the person reading the terminal. */
  readonly stopped?: BreError;
}

export interface RunHooks {
  readonly limiterFactory?: LimiterFactory;
  /** Test hook: the run's clock. */
  readonly now?: () => Date;
}

/** A failure of the output folder itself (disk full, I/O error), as opposed to a problem with one row. */
function isWriteFailure(err: unknown): boolean {
  return typeof (err as { syscall?: unknown } | null)?.syscall === 'string';
}

export async function runPipeline(s: RunSettings, hooks: RunHooks = {}): Promise<RunResult> {
  const started = Date.now();
  const redactor = new Redactor();
  redactor.add(s.authToken);
  const log = (line: string) => s.log(redactor.scrub(line));
  const stop = new AbortController();
  const hard = new AbortController();
  // Every call in flight listens on these two signals: hundreds of listeners is expected, not a leak.
  setMaxListeners(0, stop.signal, hard.signal);
  let stopped: BreError | undefined;
  const requestStop = (why: BreError) => {
    if (stopped) return;
    stopped = why;
    stop.abort(why);
    setTimeout(() => hard.abort(why), s.stopGraceMs).unref();
  };

  const manifest: Manifest = {
    version: 1,
    tool: 'bre-batch',
    pipeline: { name: s.pipeline.name, path: s.pipeline.path, sha256: s.pipeline.sha256 },
    input: { path: s.input === '-' ? '-' : resolve(s.input), format: s.inputFormat, ...(await inputFingerprint(s.input)) },
    key: s.pipeline.key,
    shard: s.shard ? `${s.shard.index}/${s.shard.count}` : null,
    limit: s.limit ?? null,
    created_at: new Date().toISOString(),
  };
  const services = [...new Set(s.pipeline.stages.map((st) => getStageKind(st.kind)!.service))];
  const withTransactions = s.pipeline.stages.some((st) => ['aa_fetch', 'bsa_fetch'].includes(st.kind));
  // The first row is read before anything is written: an input whose header cannot be read is a usage
  // error (exit 2, nothing called), not a stopped run, and leaves no manifest that would then refuse the
  // corrected input under the same --out.
  const reader = readRowBatches(s.input, { format: s.inputFormat });
  let firstBatch: IteratorResult<InputRow[]>;
  try {
    firstBatch = await reader.next();
  } catch (err) {
    throw new BreError('INPUT_UNREADABLE', `cannot read the input ${s.input}: ${(err as Error).message}`);
  }
  mkdirSync(s.outDir, { recursive: true });
  const output = s.dryRun ? undefined : await RunOutput.open(s.outDir, manifest, { retryErrors: s.retryErrors, withTransactions });
  const retryOnly = s.retryErrors;

  const limiters = await createLimiters(s, hooks.limiterFactory ?? localLimiter);
  const client: ServiceClient = createClient({
    clientId: s.clientId,
    authToken: s.authToken,
    maxAttempts: s.maxAttempts,
    signal: stop.signal,
    hardSignal: hard.signal,
    targets: Object.fromEntries((['workflow', 'bureau', 'account'] as ServiceName[]).map((svc) => [svc, {
      baseUrl: s.baseUrls[svc], timeoutMs: s.timeoutsMs[svc], limiter: limiters[svc], connections: s.concurrency[svc],
    }])) as Record<ServiceName, { baseUrl: string; timeoutMs: number; limiter: ServiceLimiter; connections: number }>,
  });

  const stageStats = new Map<string, CallStats>();
  const stages: StageRuntime[] = s.pipeline.stages.map((config) => {
    const kind = getStageKind(config.kind)!;
    const stats = new CallStats();
    stageStats.set(config.id, stats);
    return { config, counters: { ran: 0, skipped: 0, failed: 0, calls: 0 }, call: (path, body, o) => client.call(kind.service, path, body, o, stats) };
  });

  const counters: RunCounters = { read: 0, processed: 0, succeeded: 0, failed: 0, invalid: 0, resumed: 0, outOfShard: 0, warnings: 0, retriedRows: 0, dryRunValid: 0, firstDispatch: 0, lastSettle: 0 };
  let warningsShown = 0;
  const ctx: StageContext = {
    inputDir: s.input === '-' ? process.cwd() : dirname(resolve(s.input)),
    clientId: s.clientId,
    now: hooks.now ?? (() => new Date()),
    signal: stop.signal,
    warn: (message, row) => {
      counters.warnings += 1;
      if (warningsShown < 20) {
        warningsShown += 1;
        log(`warning${row ? ` (row ${row.row}, line ${row.line})` : ''}: ${maskText(message)}`);
      }
    },
  };

  const recorder = new OutcomeRecorder(s, output, redactor, new Circuit(s.circuit), counters, requestStop);
  const progress = new Progress(s, stages, client, counters, s.input);

  const onSignal = (sig: string) => {
    if (stopped) {
      hard.abort();
      return;
    }
    log(`${sig} received: finishing the calls in flight (up to ${Math.round(s.stopGraceMs / 1000)} s), then stopping; re-run the same command to resume`);
    requestStop(new BreError('INTERRUPTED', `interrupted by ${sig}`));
  };
  const onSigint = () => onSignal('SIGINT');
  const onSigterm = () => onSignal('SIGTERM');
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigterm);

  // Rows in flight: every call slot of every service, plus 15% prepared and waiting so that a slot never
  // idles. Not more: each row held costs the garbage collector (the window was 1.5x; at 1.15x an unlimited
  // one-stage run did 7-8% more rows a second, two interleaved series of 6 runs).
  const windowSize = Math.max(16, Math.ceil(services.reduce((n, svc) => n + s.concurrency[svc], 0) * 1.15));
  const slots = new Semaphore(windowSize);
  // Rows in flight are counted, not kept: the last one to settle wakes the wait at the end.
  let inflight = 0;
  let allSettled: (() => void) | undefined;
  progress.start();
  let fatalWrite: unknown;
  let readFailed = false;
  try {
    // Rows come a batch at a time (one chunk of the file): a step of the reader costs promises.
    batches: for (let next = firstBatch; !next.done; next = await reader.next()) for (const row of next.value) {
      if (stopped) break batches;
      if (s.limit !== undefined && row.row > s.limit) break batches;
      counters.read += 1;
      const key = row.readError ? null : rowKey(row, s.pipeline.key);
      if (s.shard && shardOf(key, row.row, s.shard.count) !== s.shard.index) {
        counters.outOfShard += 1;
        continue;
      }
      if (output) {
        if (output.done.has(row.row)) {
          counters.resumed += 1;
          continue;
        }
        // --retry-errors runs the rows of the errors file, and also the rows an earlier stopped or killed
        // session never reached (else they would be in neither file), within that run's --limit.
        if (retryOnly && !output.retry.has(row.row) && output.earlierLimit !== null && row.row > output.earlierLimit) continue;
        if (output.retry.has(row.row)) counters.retriedRows += 1;
      }
      if (!slots.tryAcquire()) await slots.acquire();
      if (stopped) {
        slots.release();
        break batches;
      }
      counters.processed += 1;
      if (counters.firstDispatch === 0) counters.firstDispatch = performance.now();
      inflight += 1;
      void (async () => {
        try {
          if (row.readError) {
            recorder.unreadable(row);
            return;
          }
          recorder.settle(row, key, await runRow(row, stages, ctx, s.dryRun));
        } catch (err) {
          // Anything else that goes wrong with one row (a value nested too deeply to handle, say) is that
          // row's error, never a stop: a resume would meet the same row again.
          if (!isWriteFailure(err) && !output?.done.has(row.row)) {
            try {
              recorder.unexpected(row, key, err);
              return;
            } catch (again) {
              err = again;
            }
          }
          // A write failure (disk full) stops the run: the row is not done and will be re-sent on resume.
          fatalWrite ??= err;
          requestStop(new BreError('INTERRUPTED', `cannot write to ${s.outDir}: ${(err as Error).message}`));
        } finally {
          counters.lastSettle = performance.now();
          slots.release();
          inflight -= 1;
          if (inflight === 0) allSettled?.();
        }
      })();
    }
  } catch (err) {
    readFailed = true;
    requestStop(toBreError(err, 'INPUT_UNREADABLE').code === 'INPUT_UNREADABLE'
      ? new BreError('INPUT_UNREADABLE', `cannot read the input ${s.input}: ${(err as Error).message}`)
      : toBreError(err));
  }
  if (!readFailed) await reader.return(undefined);
  if (inflight > 0) await new Promise<void>((resolve) => (allSettled = resolve));
  progress.stop();
  process.off('SIGINT', onSigint);
  process.off('SIGTERM', onSigterm);
  await client.close();
  for (const l of Object.values(limiters)) await l.stop();

  const limiterStats = Object.fromEntries(Object.entries(limiters).map(([k, l]) => [k, l.stats()]));
  if (s.dryRun) {
    const path = resolve(s.outDir, 'dry-run-errors.ndjson');
    writeFileSync(path, recorder.dryErrors.map((l) => `${l}\n`).join(''));
    const summary = buildSummary({ s, counters, stages, stageStats, client, limiterStats, started, stopped, totals: { succeeded: 0, failed: recorder.dryErrors.length }, decisions: {}, csv: undefined, transactions: undefined, dryRunErrorsPath: path });
    return { exitCode: stopped ? 3 : recorder.dryErrors.length > 0 ? 1 : 0, summary, stopped };
  }
  const out = output!;
  out.close();
  if (!stopped && out.retry.size > 0) out.finishRetry();
  const workflowStages = s.pipeline.stages.filter((st) => st.kind === 'workflow').map((st) => st.id);
  const decisions: Record<string, Record<string, number>> = Object.fromEntries(workflowStages.map((id) => [id, {}]));
  const csv = await buildResultsCsv(resolve(s.outDir, FILES.results), resolve(s.outDir, FILES.resultsCsv),
    s.pipeline.stages.map((st) => ({ id: st.id, known: getStageKind(st.kind)!.resultColumns?.(st) ?? [] })),
    (line) => countDecision(decisions, workflowStages, line.stages));
  const transactions = withTransactions ? await out.buildTransactionsCsv() : undefined;
  const totals = { succeeded: csv.rows, failed: out.failedTotal };
  const summary = buildSummary({ s, counters, stages, stageStats, client, limiterStats, started, stopped, totals, decisions, csv, transactions });
  if (stopped && s.input !== '-') summary.remaining = await remainingAfterStop(s, totals.succeeded + totals.failed);
  out.writeSummary(summary);
  out.unlock();
  const exitCode = stopped ? 3 : totals.failed > 0 ? 1 : 0;
  return { exitCode, summary, stopped };
}

/** For a stopped run: about how many rows are left and how long they need at the configured limits. */
async function remainingAfterStop(s: RunSettings, done: number): Promise<Record<string, unknown>> {
  const lines = await countInputLines(s.input);
  const dataRows = Math.min(s.limit ?? Infinity, Math.max(0, lines - (s.inputFormat === 'csv' ? 1 : 0)));
  const rows = Math.max(0, Math.round(dataRows / (s.shard?.count ?? 1)) - done);
  const eta = remainingEstimate(rows, s);
  return { rows_estimate: rows, time_estimate: eta.text, time_estimate_ms: eta.ms };
}

function countDecision(into: Record<string, Record<string, number>>, stageIds: readonly string[], stages: Record<string, Record<string, unknown>>): void {
  for (const id of stageIds) {
    const st = stages[id];
    if (!st) continue;
    const d = st.skipped === true ? '(skipped)' : String(st.decision ?? st.emi_decision ?? '(none)');
    into[id][d] = (into[id][d] ?? 0) + 1;
  }
}
