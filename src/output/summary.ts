/** summary.json: what happened in the run, for people and for monitoring. */
import type { BreError } from '../errors.js';
import type { ServiceClient } from '../http/chain.js';
import type { LimiterStats } from '../limits/limiter.js';
import { describeRate } from '../limits/rates.js';
import type { CallStats } from '../metrics/service-stats.js';
import type { StageRuntime } from '../pipeline/row.js';
import type { RunSettings } from '../pipeline/settings.js';

export interface RunCounters {
  read: number;
  processed: number;
  succeeded: number;
  failed: number;
  invalid: number;
  resumed: number;
  outOfShard: number;
  warnings: number;
  retriedRows: number;
  dryRunValid: number;
  /** performance.now() when the first row was dispatched and when the last one settled. */
  firstDispatch: number;
  lastSettle: number;
}

export interface SummaryInput {
  readonly s: RunSettings;
  readonly counters: RunCounters;
  readonly stages: readonly StageRuntime[];
  readonly stageStats: ReadonlyMap<string, CallStats>;
  readonly client: ServiceClient;
  readonly limiterStats: Record<string, LimiterStats>;
  readonly started: number;
  readonly stopped?: BreError;
  readonly totals: { succeeded: number; failed: number };
  readonly decisions: Record<string, Record<string, number>>;
  readonly csv?: { rows: number; columns: number };
  readonly transactions?: number;
  readonly dryRunErrorsPath?: string;
}

export function buildSummary(x: SummaryInput): Record<string, unknown> {
  const seconds = (Date.now() - x.started) / 1000;
  const c = x.counters;
  return {
    pipeline: x.s.pipeline.name,
    input: x.s.input,
    out: x.s.outDir,
    dry_run: x.s.dryRun,
    finished: !x.stopped,
    stopped: x.stopped ? { code: x.stopped.code, message: x.stopped.message, service: x.stopped.service ?? null, status: x.stopped.status } : null,
    shard: x.s.shard ? `${x.s.shard.index}/${x.s.shard.count}` : null,
    rows: {
      // Totals over the folder (every session of this run); the rest counts this session only.
      succeeded: x.totals.succeeded,
      failed: x.totals.failed,
      read: c.read,
      processed_this_session: c.processed,
      succeeded_this_session: c.succeeded,
      failed_this_session: c.failed,
      invalid_this_session: c.invalid,
      resumed: c.resumed,
      retried_from_errors: c.retriedRows,
      out_of_shard: c.outOfShard,
      ...(x.s.dryRun ? { valid: c.dryRunValid } : {}),
    },
    warnings: c.warnings,
    seconds: Math.round(seconds * 10) / 10,
    // Rows a second while rows were flowing (first dispatched to last settled): start-up, hashing the
    // input and rebuilding results.csv are in `seconds` but not here.
    rows_per_second: c.lastSettle > c.firstDispatch ? Math.round((c.processed / ((c.lastSettle - c.firstDispatch) / 1000)) * 100) / 100 : null,
    stages: Object.fromEntries(x.stages.map((st) => [st.config.id, {
      kind: st.config.kind,
      ...(st.config.endpoint ? { endpoint: st.config.endpoint } : {}),
      rows_ran: st.counters.ran,
      rows_skipped: st.counters.skipped,
      rows_failed: st.counters.failed,
      calls: st.counters.calls,
      ...x.stageStats.get(st.config.id)!.toJSON(),
    }])),
    services: Object.fromEntries((['workflow', 'bureau', 'account'] as const)
      .filter((svc) => x.client.stats[svc].attempts > 0)
      .map((svc) => [svc, {
        rate_limit: describeRate(x.s.rates[svc]),
        concurrency: x.s.concurrency[svc],
        ...x.client.stats[svc].toJSON(),
        // Where the time went, each summed over attempts: queued for the rate limit, sleeping before a
        // retry (backoff or Retry-After), and on the network (network_ms above).
        limiter_wait_ms: x.limiterStats[svc]?.waitMs ?? 0,
        retry_wait_ms: Math.round(x.client.retryWaitMs?.[svc] ?? 0),
        limiter_final_per_minute: x.limiterStats[svc]?.currentPerMinute ?? null,
      }])),
    decisions: x.decisions,
    ...(x.csv ? { results_csv: x.csv } : {}),
    ...(x.transactions !== undefined ? { transactions: x.transactions } : {}),
    ...(x.dryRunErrorsPath ? { dry_run_errors: x.dryRunErrorsPath } : {}),
  };
}

/** The few lines printed on stdout at the end of a run. */
export function formatSummary(sum: Record<string, any>): string {
  const r = sum.rows;
  const lines: string[] = [];
  lines.push(`${sum.dry_run ? 'Dry run' : 'Run'} of pipeline '${sum.pipeline}' ${sum.finished ? 'finished' : 'STOPPED'} in ${sum.seconds} s`);
  if (sum.dry_run) lines.push(`  rows: ${r.read} read, ${r.valid} valid, ${r.failed_this_session} would fail (see ${sum.dry_run_errors})`);
  else lines.push(`  rows: ${r.succeeded} succeeded, ${r.failed} in errors${r.resumed ? `, ${r.resumed} already done before (resumed)` : ''}${r.out_of_shard ? `, ${r.out_of_shard} in other shards` : ''}`);
  for (const [svc, st] of Object.entries<any>(sum.services ?? {})) {
    lines.push(`  ${svc}: ${st.attempts} calls, ${st.retries} retries, ${st.throttled_429} x 429, achieved ${st.achieved_per_minute ?? '-'}/min (limit ${st.rate_limit}), p95 ${st.latency_ms.p95 ?? '-'} ms`);
  }
  for (const [stage, counts] of Object.entries<Record<string, number>>(sum.decisions ?? {})) {
    const parts = Object.entries(counts).sort((a, b) => b[1] - a[1]).map(([d, n]) => `${d} ${n}`);
    if (parts.length > 0) lines.push(`  decisions (stage ${stage}): ${parts.join(", ")}`);
  }
  if (sum.stopped) lines.push(`  stopped: ${sum.stopped.message}`);
  if (sum.remaining) lines.push(`  left: about ${sum.remaining.rows_estimate} rows, ${sum.remaining.time_estimate} at the configured limits`);
  if (!sum.dry_run) lines.push(`  output: ${sum.out}`);
  return lines.join('\n');
}
