/** summary.json of a run, built from the run's counters, stages, client and limiters (the format: src/output/format). */
import type { BreError } from '@bre-batch/core/errors';
import type { ServiceClient } from '../http/chain.js';
import { boundNote } from '../limits/in-flight.js';
import type { InFlightView, LimiterStats } from '../limits/limiter.js';
import { describeRate } from '@bre-batch/core/rates';
import type { CallStats } from '../metrics/service-stats.js';
import type { Lane } from './egress.js';
import type { DrawnSample } from './sample.js';
import type { StageRuntime } from './row.js';
import { sourceIdentity, type SourceStats } from '../input/db/index.js';
import type { RunSettings } from './settings.js';
import type { RunSummary } from '@bre-batch/formats';
import type { ErrorGroup } from '../output/error-groups.js';
import type { DecisionCounts } from '../stages/types.js';
import { SERVICES, type ServiceName } from '@bre-batch/core/types';

export interface RunCounters {
  read: number;
  processed: number;
  succeeded: number;
  failed: number;
  invalid: number;
  resumed: number;
  outOfShard: number;
  /** Rows a sampled run read but did not choose (neither results nor errors). */
  notInSample: number;
  warnings: number;
  retriedRows: number;
  dryRunValid: number;
  /** Answers of another strategy version than --expect-version expects: not written, sent again by the resume. */
  unexpectedVersion: number;
  /** A job's worker: rows of chunks another worker took over, not sent (src/http/layers/sendable.ts), not written. */
  notSent: number;
  /** performance.now() when the first row was dispatched and when the last one was done. */
  firstDispatch: number;
  lastDone: number;
}

export function newCounters(): RunCounters {
  return {
    read: 0,
    processed: 0,
    succeeded: 0,
    failed: 0,
    invalid: 0,
    resumed: 0,
    outOfShard: 0,
    notInSample: 0,
    warnings: 0,
    retriedRows: 0,
    dryRunValid: 0,
    unexpectedVersion: 0,
    notSent: 0,
    firstDispatch: 0,
    lastDone: 0,
  };
}

export interface SummaryInput {
  readonly s: RunSettings;
  readonly counters: RunCounters;
  readonly stages: readonly StageRuntime[];
  readonly stageStats: ReadonlyMap<string, CallStats>;
  readonly client: Pick<ServiceClient, 'stats' | 'retryWaitMs'>;
  readonly limiterStats: Partial<Record<ServiceName, LimiterStats>>;
  readonly started: number;
  readonly stopped?: BreError;
  readonly totals: { succeeded: number; failed: number };
  readonly decisions: DecisionCounts;
  /** Stages whose answers carry a strategy version: per version, over the folder (src/output/versions-summary.ts). */
  readonly versions?: RunSummary['versions'];
  /** --expect-version: the answers of the expected workflows checked this session. */
  readonly expectChecked?: number;
  /** A stopped run: about how much is left (see remainingAfterStop). */
  readonly remaining?: RunSummary['remaining'];
  readonly csv?: { rows: number; columns: number };
  readonly transactions?: number;
  readonly dryRunErrorsPath?: string;
  /** The error lines by field and code (src/output/error-groups.ts): the folder's, or a dry run's. */
  readonly errorGroups?: readonly ErrorGroup[];
  /** The lanes of a run with several source addresses (one lane: no `addresses` in the summary). */
  readonly lanes?: readonly Lane[];
  /** A sampled run's draw. */
  readonly sample?: DrawnSample;
  /** A database input: what it read this session. */
  readonly source?: SourceStats;
  /** --sink: what this session wrote into the tables. */
  readonly sink?: NonNullable<RunSummary['sink']>;
  /** --allow-empty and an input with no data rows: what it held. */
  readonly inputEmpty?: string;
  /** --price: what the calls cost. */
  readonly spend?: NonNullable<RunSummary['spend']>;
}

export function buildSummary(x: SummaryInput): RunSummary {
  const seconds = (Date.now() - x.started) / 1000;
  const c = x.counters;
  return {
    pipeline: x.s.pipeline.name,
    input: x.s.input,
    out: x.s.outDir,
    dry_run: x.s.dryRun,
    finished: !x.stopped,
    stopped: x.stopped
      ? {
          code: x.stopped.code,
          message: x.stopped.message,
          service: x.stopped.service ?? null,
          status: x.stopped.status,
        }
      : null,
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
      ...(x.s.sample ? { not_in_sample: c.notInSample } : {}),
      // Every row read this session is accounted for: done before, another shard's, outside the sample,
      // succeeded or failed now, or neither (sent again by the resume): started but still in flight when the
      // run stopped, or not started (the stop came first; for --retry-errors, past the earlier run's --limit).
      ...(c.unexpectedVersion > 0 ? { unexpected_version_not_written: c.unexpectedVersion } : {}),
      ...(c.notSent > 0 ? { taken_over_not_sent: c.notSent } : {}),
      in_flight_at_stop: Math.max(
        0,
        c.processed - c.succeeded - c.failed - c.dryRunValid - c.unexpectedVersion - c.notSent,
      ),
      not_started: Math.max(0, c.read - c.resumed - c.outOfShard - c.notInSample - c.processed),
      ...(x.s.dryRun ? { valid: c.dryRunValid } : {}),
    },
    warnings: c.warnings,
    seconds: Math.round(seconds * 10) / 10,
    // Rows a second while rows were flowing (first dispatched to last done): start-up, hashing the
    // input and rebuilding results.csv are in `seconds` but not here.
    rows_per_second:
      c.lastDone > c.firstDispatch
        ? Math.round((c.processed / ((c.lastDone - c.firstDispatch) / 1000)) * 100) / 100
        : null,
    stages: Object.fromEntries(
      x.stages.map((st) => [
        st.config.id,
        {
          kind: st.config.kind,
          ...(st.config.endpoint ? { endpoint: st.config.endpoint } : {}),
          rows_ran: st.counters.ran,
          rows_skipped: st.counters.skipped,
          rows_failed: st.counters.failed,
          calls: st.counters.calls,
          ...x.stageStats.get(st.config.id)!.toJSON(),
        },
      ]),
    ),
    services: servicesOf(x),
    decisions: x.decisions,
    ...(x.versions ? { versions: x.versions } : {}),
    ...(x.s.expectVersion
      ? {
          expect_version: {
            expected: { ...x.s.expectVersion },
            answers_checked: x.expectChecked ?? 0,
            unexpected_not_written: c.unexpectedVersion,
          },
        }
      : {}),
    ...(x.lanes && x.lanes.length > 1 ? { addresses: addressesOf(x.lanes) } : {}),
    ...(x.csv ? { results_csv: x.csv } : {}),
    ...(x.transactions !== undefined ? { transactions: x.transactions } : {}),
    ...(x.dryRunErrorsPath ? { dry_run_errors: x.dryRunErrorsPath } : {}),
    ...(x.errorGroups && x.errorGroups.length > 0 ? { errors_by_field: [...x.errorGroups] } : {}),
    ...(x.inputEmpty ? { input_empty: x.inputEmpty } : {}),
    ...(x.spend ? { spend: x.spend } : {}),
    ...(x.remaining ? { remaining: x.remaining } : {}),
    ...(x.sample
      ? { sample: { ...x.sample.design, rows_without_key: x.sample.withoutKey, rows_unreadable: x.sample.unreadable } }
      : {}),
    ...(x.source && x.s.source ? { source: sourceSummary(x.s.source, x.source, x.s.pipeline.key) } : {}),
    ...(x.sink ? { sink: x.sink } : {}),
  };
}

/** summary.json's `source`: what a database input read this session, and from where it started. */
function sourceSummary(
  db: NonNullable<RunSettings['source']>,
  st: SourceStats,
  key: string,
): NonNullable<RunSummary['source']> {
  return {
    ...sourceIdentity(db.url, db.relation),
    key,
    started_after_row: st.startedAfterRow,
    rows_read: st.rowsRead,
    rows_fetched: st.rowsFetched,
    queries: st.queries,
    reconnects: st.reconnects,
  };
}

/** Every service that was called: its limit, its attempts, and where the time went. */
function servicesOf(x: SummaryInput): RunSummary['services'] {
  const out: RunSummary['services'] = {};
  for (const svc of SERVICES) {
    if (x.client.stats[svc].attempts === 0) continue;
    out[svc] = {
      rate_limit: describeRate(x.s.rates[svc]),
      concurrency: x.s.concurrency[svc],
      ...x.client.stats[svc].toJSON(),
      // Each summed over attempts: queued for the rate limit, sleeping before a retry (backoff or
      // Retry-After); the time on the network is network_ms.
      limiter_wait_ms: x.limiterStats[svc]?.waitMs ?? 0,
      retry_wait_ms: Math.round(x.client.retryWaitMs[svc] ?? 0),
      limiter_final_per_minute: x.limiterStats[svc]?.currentPerMinute ?? null,
      ...(x.limiterStats[svc]?.slackMs !== undefined ? { rate_slack_ms: x.limiterStats[svc]!.slackMs } : {}),
      ...(x.limiterStats[svc]?.marginMs !== undefined ? { rate_margin_ms: x.limiterStats[svc]!.marginMs } : {}),
      ...inFlightOf(svc, x.limiterStats[svc]?.inFlight),
    };
  }
  return out;
}

/** How the calls in flight followed the latency, and whether --concurrency held the rate back (and by how much). */
function inFlightOf(
  svc: ServiceName,
  v: InFlightView | undefined,
): Partial<NonNullable<RunSummary['services'][ServiceName]>> {
  if (!v) return {};
  const note = boundNote(svc, v);
  return {
    latency_mean_ms: v.latencyMs,
    concurrency_held_ms: v.boundHeldMs,
    ...(note ? { concurrency_needed: v.wantedAtHold, concurrency_note: note } : {}),
  };
}

/** Per source address: its rows, the rows it passed on, and its calls per service. */
function addressesOf(lanes: readonly Lane[]): NonNullable<RunSummary['addresses']> {
  return Object.fromEntries(
    lanes.map((lane) => {
      const services: NonNullable<RunSummary['addresses']>[string]['services'] = {};
      let calls = 0;
      let throttled = 0;
      for (const svc of SERVICES) {
        const st = lane.client.stats[svc];
        if (st.attempts === 0) continue;
        calls += st.attempts;
        throttled += st.throttled;
        services[svc] = {
          attempts: st.attempts,
          retries: st.retries,
          throttled_429: st.throttled,
          achieved_per_minute: st.achievedPerMinute(),
        };
      }
      return [
        lane.address!,
        {
          rows: lane.rows,
          rows_moved_away: lane.movedAway,
          failures: lane.failures,
          circuit_open: lane.down ?? null,
          calls,
          throttled_429: throttled,
          services,
        },
      ];
    }),
  );
}
