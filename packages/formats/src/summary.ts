/**
 * summary.json: what happened in a run (written by src/pipeline/build-summary.ts) or in a merge of shards
 * (src/output/merge.ts). Objects are loose: a field a later version adds survives a merge that embeds it.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { BreError } from '@bre-batch/core/errors';
import { SERVICES } from '@bre-batch/core/types';
import { FILES } from './files.js';
import { sampleDesignSchema } from './manifest.js';
import { readJsonFile, writeJsonFile, type JsonFileRead } from './json-file.js';

const count = z.number();
const ms = z.number();

/** Attempts of one service or stage (src/metrics/service-stats.ts). */
const callStatsShape = {
  attempts: count,
  retries: count,
  throttled_429: count,
  /** HTTP status (or lower-case error code) -> attempts. */
  statuses: z.record(z.string(), count),
  latency_ms: z.object({ p50: ms.nullable(), p95: ms.nullable(), p99: ms.nullable() }),
  network_ms: ms,
  /** Attempts a minute between the first and the last start; null with fewer than two. */
  achieved_per_minute: z.number().nullable(),
};

const stageSummarySchema = z.looseObject({
  kind: z.string(),
  endpoint: z.string().optional(),
  rows_ran: count,
  rows_skipped: count,
  rows_failed: count,
  calls: count,
  ...callStatsShape,
});

const serviceSummarySchema = z.looseObject({
  /** As `--rate` takes it (`500/min`), or `off`. */
  rate_limit: z.string(),
  concurrency: count,
  ...callStatsShape,
  /** Summed over attempts: queued for the rate limit, and sleeping before a retry. */
  limiter_wait_ms: ms,
  retry_wait_ms: ms,
  limiter_final_per_minute: z.number().nullable(),
  /**
   * At the end, ms, both widened by 429s (absent with --redis or no rate): how late an unanswered call was
   * taken to reach the server (--rate-slack), and the margin kept beyond each rate window (2 ms + 0.05% of it).
   */
  rate_slack_ms: ms.optional(),
  rate_margin_ms: z.number().nonnegative().optional(),
  /**
   * In-process limiters (absent with --redis and in older folders): the calls in flight follow the latency up to
   * `concurrency` (--concurrency). The mean latency they were sized for at the end, ms; how long `concurrency`
   * rather than the rate limit held the starts back, ms; when that was long enough to matter, the calls in
   * flight the limit needed and a sentence that says so and names the option.
   */
  latency_mean_ms: ms.optional(),
  concurrency_held_ms: ms.optional(),
  concurrency_needed: count.optional(),
  concurrency_note: z.string().optional(),
});

/** One source address of a run with several (--local-address; src/pipeline/egress.ts). */
const addressSummarySchema = z.looseObject({
  /** Rows started from it (rows moved in included), rows moved to another address after failing here. */
  rows: count,
  rows_moved_away: count,
  /** Rows whose stage failed here after all retries (moved away or written to errors). */
  failures: count,
  /** Why its circuit opened (it took no more rows), else null. */
  circuit_open: z.string().nullable(),
  /** Attempts and 429s over every service. */
  calls: count,
  throttled_429: count,
  services: z.partialRecord(
    z.enum(SERVICES),
    z.looseObject({
      attempts: count,
      retries: count,
      throttled_429: count,
      achieved_per_minute: z.number().nullable(),
    }),
  ),
});

/** Stage id -> decision label -> rows (src/stages/decisions.ts). */
const decisionCountsSchema = z.record(z.string(), z.record(z.string(), count));

const serviceName = z.enum(SERVICES);

/**
 * Stage id -> the strategy versions its answers carried (src/pipeline/versions.ts): the rows and decisions of
 * each version over the folder's results, each version's first answer (written or not: an answer refused by
 * --expect-version is one), and whether the results mix versions.
 */
export const versionsSummarySchema = z.record(
  z.string(),
  z.looseObject({
    by_version: z.record(
      z.string(),
      z.looseObject({ workflow: z.string().nullable(), rows: count, decisions: z.record(z.string(), count) }),
    ),
    first_answers: z.array(
      z.looseObject({
        version: z.string().nullable(),
        workflow: z.string().nullable(),
        at: z.string(),
        row: count,
        session: count,
      }),
    ),
    mixed: z.boolean(),
  }),
);
export type VersionsSummary = z.infer<typeof versionsSummarySchema>;

/**
 * A sampled run's design (as manifest.json's `sample`) and the rows outside it: those without a key
 * (SAMPLE_NO_KEY) and those that could not be read (MALFORMED_ROW) are errors of the run, in no stratum.
 * Counted over the whole input (up to --limit) by the counting pass, in every session and every shard.
 */
const sampleSummarySchema = sampleDesignSchema.extend({
  rows_without_key: count,
  rows_unreadable: count,
});

/** What the calls cost (--price), per service: the whole folder's and this session's; amounts in the currency's unit. */
const spendSummarySchema = z.looseObject({
  currency: z.string(),
  /** The billing rule: the outcomes a call is billed for. */
  billed_outcomes: z.array(z.string()),
  /** SERVICE or workflow:NAME -> the price of one call. */
  prices: z.record(z.string(), z.number()),
  total: z.number(),
  this_session: z.number(),
  max_spend: z.number().nullable(),
  /** What the cap leaves (null without one). */
  left: z.number().nullable(),
  services: z.partialRecord(
    serviceName,
    z.object({
      calls_billed: count,
      calls_billed_this_session: count,
      attempts_this_session: count,
      spend: z.number(),
      spend_this_session: z.number(),
    }),
  ),
});

const errorGroupsSchema = z.array(
  z.object({ field: z.string().nullable(), stage: z.string().nullable(), code: z.string(), rows: count }),
);

export const runSummarySchema = z.looseObject({
  pipeline: z.string(),
  input: z.string(),
  out: z.string(),
  dry_run: z.boolean(),
  finished: z.boolean(),
  stopped: z
    .object({ code: z.string(), message: z.string(), service: z.string().nullable(), status: z.number().nullable() })
    .nullable(),
  shard: z.string().nullable(),
  rows: z.looseObject({
    /** Totals over the folder (every session of this run). */
    succeeded: count,
    failed: count,
    /** This session: data rows read (a finished shard worker reads the whole input). */
    read: count,
    processed_this_session: count,
    succeeded_this_session: count,
    failed_this_session: count,
    invalid_this_session: count,
    resumed: count,
    retried_from_errors: count,
    out_of_shard: count,
    /** A sampled run: rows read this session that are not in the sample (neither results nor errors). */
    not_in_sample: count.optional(),
    /** This session: rows whose answer was of another version than --expect-version expects (not written). */
    unexpected_version_not_written: count.optional(),
    /**
     * A job's worker, this session: rows it had in hand of chunks another worker took over (its lease lapsed: a
     * stall), not sent and not written: the other worker sends them. Absent when none.
     */
    taken_over_not_sent: count.optional(),
    /** Dry runs: rows that would be sent. */
    valid: count.optional(),
    /**
     * This session's rows read that are in neither file (absent in older folders): started but in flight when
     * the run stopped, and read but not started. A resume sends them. With the counts above they add up to `read`.
     */
    in_flight_at_stop: count.optional(),
    not_started: count.optional(),
  }),
  warnings: count,
  seconds: z.number(),
  /** While rows were flowing (first dispatched to last done); null when none was. */
  rows_per_second: z.number().nullable(),
  stages: z.record(z.string(), stageSummarySchema),
  services: z.partialRecord(serviceName, serviceSummarySchema),
  decisions: decisionCountsSchema,
  /** Stages whose answers carry a strategy version (workflows); absent in older folders. */
  versions: versionsSummarySchema.optional(),
  /**
   * --expect-version (or the pipeline file's expect_version), this session: what was expected, the answers of
   * those workflows checked, and those of another version, which were not written (a resume sends them again).
   */
  expect_version: z
    .object({ expected: z.record(z.string(), z.string()), answers_checked: count, unexpected_not_written: count })
    .optional(),
  /** Runs with several --local-address: address -> what it did; absent otherwise. */
  addresses: z.record(z.string(), addressSummarySchema).optional(),
  results_csv: z.object({ rows: count, columns: count }).optional(),
  transactions: count.optional(),
  dry_run_errors: z.string().optional(),
  /**
   * The error lines (over the folder; a dry run's own) counted by field and code, or by stage and code for a
   * row whose call failed; a row with several bad fields counts under each. Most rows first; absent in older
   * folders and when nothing failed.
   */
  errors_by_field: errorGroupsSchema.optional(),
  /** An input with no data rows run with --allow-empty: what it held (`a header only (5 columns: ...)`). */
  input_empty: z.string().optional(),
  /** A sampled run (`--sample`): the design and the rows outside it. */
  sample: sampleSummarySchema.optional(),
  /** --price: what the calls cost (absent when nothing is priced). */
  spend: spendSummarySchema.optional(),
  /** A stopped run: about how much is left at the configured limits. */
  remaining: z.object({ rows_estimate: count, time_estimate: z.string(), time_estimate_ms: ms.nullable() }).optional(),
  /** The files rebuilt at the end (docs/output.md), and when the last answer came and how long the end took. */
  files: z.array(z.string()).optional(),
  /** `rows_copied`: rows of the results files used as spooled or as an earlier end wrote them, not encoded again. */
  end_of_run: z
    .object({ last_answer_at: z.string(), files_seconds: z.number(), rows_copied: count.optional() })
    .optional(),
  /**
   * A database input, this session: where it was read from (as the manifest says), the row it started after
   * (a resume's frontier; 0 from the start), the rows handed to the run, the rows the database sent (a page's
   * look-ahead row and a key's group read again included), the statements run and the connections opened again.
   */
  source: z
    .looseObject({
      url: z.string(),
      table: z.string().nullable(),
      query: z.string().nullable(),
      key: z.string(),
      started_after_row: count,
      rows_read: count,
      rows_fetched: count,
      queries: count,
      reconnects: count,
    })
    .optional(),
  /**
   * --sink, this session: the database (without its password) and tables, the result and error lines written
   * into them (a resume's catch-up included), the batches (one transaction each), the connections opened again,
   * and the columns added for fields no stage declared or widened (absent when none).
   */
  sink: z
    .looseObject({
      url: z.string(),
      tables: z.array(z.string()),
      results_written: count,
      errors_written: count,
      batches: count,
      reconnects: count,
      column_changes: z.array(z.string()).optional(),
    })
    .optional(),
});
export type RunSummary = z.infer<typeof runSummarySchema>;

const mergedSummarySchema = z.looseObject({
  merged: z.literal(true),
  pipeline: z.string(),
  input: z.string(),
  out: z.string(),
  finished: z.boolean(),
  shards: z.object({
    count,
    merged: z.array(z.string()),
    missing: z.array(z.string()),
    unfinished: z.array(z.string()),
  }),
  rows: z.object({ succeeded: count, failed: count, missing: count.optional() }),
  /** Sampled shards: their (one) design and the rows outside it. */
  sample: sampleSummarySchema.optional(),
  /** The slowest shard's: workers run side by side. */
  seconds: z.number(),
  services: z.partialRecord(serviceName, z.object({ attempts: count, retries: count, throttled_429: count })),
  /**
   * --price: every shard's spend summed, per service (absent when no shard priced its calls, or when they priced
   * them in different currencies); the merge made no call, so `this_session` is 0 and `max_spend` null (each
   * shard's cap was its own).
   */
  spend: spendSummarySchema.optional(),
  decisions: decisionCountsSchema,
  versions: versionsSummarySchema.optional(),
  results_csv: z.object({ rows: count, columns: count }),
  transactions: count.optional(),
  /** The merged errors file's lines by field and code, as a run's. */
  errors_by_field: errorGroupsSchema.optional(),
  files: z.array(z.string()).optional(),
  shard_summaries: z.record(z.string(), runSummarySchema.nullable()),
});
export type MergedSummary = z.infer<typeof mergedSummarySchema>;

/** A shard worker's or any single run's summary.json. */
export function readRunSummary(dir: string): JsonFileRead<RunSummary> {
  return readJsonFile(join(dir, FILES.summary), runSummarySchema);
}

/** A run's summary.json, or a BreError saying why it cannot be read (the bench reads its figures here). */
export function loadRunSummary(dir: string): RunSummary {
  const read = readRunSummary(dir);
  if (read.state !== 'ok')
    throw new BreError(
      'OUTPUT_MISMATCH',
      `${join(dir, FILES.summary)}: ${read.state === 'absent' ? 'no such file' : read.problem}`,
    );
  return read.value;
}

export function writeSummary(dir: string, summary: RunSummary | MergedSummary): void {
  writeJsonFile(join(dir, FILES.summary), summary);
}
