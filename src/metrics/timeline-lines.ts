/**
 * The run's time series, as lines of .state/timeline.ndjson (the store is src/output/timeline-store.ts): one line
 * per interval holding what happened in it (deltas, so that sessions, shards and later other series add
 * up). Each session starts with a `session` line (when, the limits) and ends with an `end` line when it
 * ends normally; a session killed has no `end`, and its last sample says how far it got.
 *
 * Series are labelled (`service` today; another label such as an egress address can be added to `labels`
 * without changing the format: readers group by the labels they know and add up the rest).
 */
export interface SeriesLabels {
  readonly service: string;
  readonly [label: string]: string;
}

/** One service (one label set) during one interval. */
export interface SeriesSample {
  readonly labels: SeriesLabels;
  readonly calls: number;
  readonly retries: number;
  readonly throttled: number;
  /** Time attempts spent queued in the limiter, summed (ms). */
  readonly wait_ms: number;
  /** Latency percentiles of the interval's attempts (ms); null without attempts. */
  readonly p50: number | null;
  readonly p95: number | null;
  readonly p99: number | null;
  /** The limiter's rate at the end of the interval, per minute (null: no limit). */
  readonly limit_per_min: number | null;
}

export interface TimelineSample {
  readonly kind: 'sample';
  readonly session: number;
  /** End of the interval (epoch ms) and its length (ms). */
  readonly t: number;
  readonly dt: number;
  readonly rows: { readonly succeeded: number; readonly failed: number };
  readonly stages: Readonly<
    Record<string, { readonly ran: number; readonly skipped: number; readonly failed: number }>
  >;
  readonly series: readonly SeriesSample[];
  /** Rows done in the folder so far, of how many (null when unknown: stdin). */
  readonly done: number;
  readonly total: number | null;
  /** Rows a second over the last minute, and the ETA that gives (s; null when unknown). */
  readonly rows_per_s: number;
  readonly eta_s: number | null;
  /** Set by merge: the shard the line came from. */
  readonly shard?: string;
  /**
   * --price: the folder's spend at the end of the interval (earlier sessions' included), what the interval
   * added and the cap, in the currency's unit.
   */
  readonly spend?: {
    readonly currency: string;
    readonly total: number;
    readonly interval: number;
    readonly cap: number | null;
  };
}

/** @public */
export interface TimelineSession {
  readonly kind: 'session';
  readonly session: number;
  readonly t: number;
  readonly pid: number;
  /** Limits per service, per minute (null: none). */
  readonly limits: Readonly<Record<string, number | null>>;
  readonly shard?: string;
}

/** @public */
export interface TimelineEnd {
  readonly kind: 'end';
  readonly session: number;
  readonly t: number;
  readonly state: 'finished' | 'stopped';
  readonly shard?: string;
}

/**
 * The first answer of a version of a stage's strategy (src/pipeline/versions.ts): the first of the run, and
 * each new one after it (a vendor deploying new rules mid-run).
 */
export interface TimelineVersion {
  readonly kind: 'version';
  readonly session: number;
  readonly t: number;
  readonly stage: string;
  readonly workflow: string | null;
  readonly version: string | null;
  /** The input row whose answer it was. */
  readonly row: number;
  readonly shard?: string;
}

/** @public */
export type TimelineLine = TimelineSample | TimelineSession | TimelineEnd | TimelineVersion;

export interface Timeline {
  readonly sessions: readonly TimelineSession[];
  readonly ends: readonly TimelineEnd[];
  readonly samples: readonly TimelineSample[];
  /** Absent in folders written before versions were watched. */
  readonly versions: readonly TimelineVersion[];
}
