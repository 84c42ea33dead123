/**
 * Snapshots of a running run, taken every few seconds for the time series (./timeline-lines.ts) and the
 * scheduler's metrics (./prometheus.ts). The runner hands over a probe (live counters, read here only);
 * the sampler turns them into totals and into what happened since the last snapshot.
 */
import type { Histogram } from './histogram.js';
import type { SeriesLabels, SeriesSample, TimelineSample } from './timeline-lines.js';

export interface SeriesProbe {
  readonly labels: SeriesLabels;
  readonly calls: number;
  readonly retries: number;
  readonly throttled: number;
  readonly waitMs: number;
  readonly limitPerMin: number | null;
  /** The latencies since the last call (taken: the next call starts afresh). */
  takeLatency(): Histogram;
}

export interface RunProbe {
  /** This session's rows so far. */
  rows(): { readonly read: number; readonly succeeded: number; readonly failed: number };
  /** Rows done in the folder (all sessions) and how many there are (null: unknown, e.g. stdin). */
  progress(): { readonly done: number; readonly total: number | null };
  /** This session's stage counters. */
  stages(): Readonly<Record<string, { readonly ran: number; readonly skipped: number; readonly failed: number }>>;
  series(): readonly SeriesProbe[];
  /** What the calls cost so far (--price): the folder's spend per service and its cap, in the currency's unit. */
  spend?(): SpendProbe;
}

interface SpendProbe {
  readonly currency: string;
  readonly services: Readonly<Record<string, number>>;
  readonly total: number;
  readonly cap: number | null;
}

/** Totals of this session at one moment, and the figures derived from the last minute. */
export interface RunSnapshot {
  readonly t: number;
  readonly rows: { readonly read: number; readonly succeeded: number; readonly failed: number };
  readonly done: number;
  readonly total: number | null;
  readonly rowsPerSecond: number;
  readonly etaSeconds: number | null;
  readonly series: readonly (Omit<SeriesProbe, 'takeLatency'> & { readonly perMinute: number })[];
  readonly spend?: SpendProbe;
}

const key = (l: SeriesLabels) =>
  Object.keys(l)
    .sort()
    .map((k) => `${k}=${l[k]}`)
    .join(',');
const WINDOW_MS = 60_000;

export class RunSampler {
  readonly #probe: RunProbe;
  readonly #now: () => number;
  #last: {
    t: number;
    succeeded: number;
    failed: number;
    stages: Record<string, { ran: number; skipped: number; failed: number }>;
    series: Map<string, { calls: number; retries: number; throttled: number; waitMs: number }>;
    /** The folder's spend at the previous take (undefined before the first). */
    spend?: number;
  };
  /** (time, rows done, calls per series) over the last minute, for rates. */
  readonly #recent: { t: number; done: number; calls: Map<string, number> }[] = [];

  constructor(probe: RunProbe, now: () => number = Date.now) {
    this.#probe = probe;
    this.#now = now;
    const t = now();
    const spent = probe.spend?.().total;
    this.#last = {
      t,
      succeeded: 0,
      failed: 0,
      stages: {},
      series: new Map(),
      ...(spent !== undefined ? { spend: spent } : {}),
    };
    this.#recent.push({ t, done: probe.progress().done, calls: new Map() });
  }

  /** The totals now, and the interval since the previous take as a timeline sample. */
  take(): { snapshot: RunSnapshot; sample: Omit<TimelineSample, 'kind' | 'session'> } {
    const t = this.#now();
    const p = this.#probe;
    const rows = p.rows();
    const { done, total } = p.progress();
    const stagesNow = p.stages();
    const seriesNow = p.series();
    const calls = new Map(seriesNow.map((s) => [key(s.labels), s.calls]));
    this.#recent.push({ t, done, calls });
    while (this.#recent.length > 2 && t - this.#recent[1].t >= WINDOW_MS) this.#recent.shift();
    const first = this.#recent[0];
    const span = Math.max(1, t - first.t) / 1000;
    const rowsPerSecond = Math.max(0, done - first.done) / span;
    const etaSeconds = total !== null && rowsPerSecond > 0 ? Math.max(0, total - done) / rowsPerSecond : null;

    const last = this.#last;
    const spend = p.spend?.();
    const spentBefore = last.spend;
    const stages: Record<string, { ran: number; skipped: number; failed: number }> = {};
    for (const [id, c] of Object.entries(stagesNow)) {
      const b = last.stages[id] ?? { ran: 0, skipped: 0, failed: 0 };
      stages[id] = { ran: c.ran - b.ran, skipped: c.skipped - b.skipped, failed: c.failed - b.failed };
    }
    const series: SeriesSample[] = seriesNow.map((s) => {
      const b = last.series.get(key(s.labels)) ?? { calls: 0, retries: 0, throttled: 0, waitMs: 0 };
      const lat = s.takeLatency();
      return {
        labels: s.labels,
        calls: s.calls - b.calls,
        retries: s.retries - b.retries,
        throttled: s.throttled - b.throttled,
        wait_ms: Math.round(s.waitMs - b.waitMs),
        p50: lat.quantile(0.5),
        p95: lat.quantile(0.95),
        p99: lat.quantile(0.99),
        limit_per_min: s.limitPerMin,
      };
    });
    this.#last = {
      t,
      ...(spend ? { spend: spend.total } : {}),
      succeeded: rows.succeeded,
      failed: rows.failed,
      stages: Object.fromEntries(Object.entries(stagesNow).map(([id, c]) => [id, { ...c }])),
      series: new Map(
        seriesNow.map((s) => [
          key(s.labels),
          { calls: s.calls, retries: s.retries, throttled: s.throttled, waitMs: s.waitMs },
        ]),
      ),
    };
    const sample = {
      t,
      dt: t - last.t,
      rows: { succeeded: rows.succeeded - last.succeeded, failed: rows.failed - last.failed },
      stages,
      series,
      done,
      total,
      rows_per_s: Math.round(rowsPerSecond * 100) / 100,
      eta_s: etaSeconds === null ? null : Math.round(etaSeconds),
      ...(spend
        ? {
            spend: {
              currency: spend.currency,
              total: spend.total,
              interval: Math.round((spend.total - (spentBefore ?? spend.total)) * 1e6) / 1e6,
              cap: spend.cap,
            },
          }
        : {}),
    };
    const snapshot: RunSnapshot = {
      t,
      rows,
      done,
      total,
      rowsPerSecond,
      etaSeconds,
      ...(spend ? { spend } : {}),
      series: seriesNow.map((s) => ({
        labels: s.labels,
        calls: s.calls,
        retries: s.retries,
        throttled: s.throttled,
        waitMs: s.waitMs,
        limitPerMin: s.limitPerMin,
        perMinute: (Math.max(0, s.calls - (first.calls.get(key(s.labels)) ?? 0)) / span) * 60,
      })),
    };
    return { snapshot, sample };
  }
}
