/**
 * A run without a terminal (cron, a CI job, a container's log) has no progress bar: it says its plan when it
 * starts (rows, calls, the limits, the time they need) and a progress line every minute, as log lines, so that
 * a long night is not silent until its summary. The clock and the timer are given (a test drives them).
 */
import type { Log } from '../log/logger.js';
import { describeRate, limitPerMinute } from '@bre-batch/core/rates';
import { countText } from '@bre-batch/core/units';
import type { ServiceClient } from '../http/chain.js';
import { kindOf } from '../stages/index.js';
import { SERVICES } from '@bre-batch/core/types';
import type { RunCounters } from './build-summary.js';
import { computePlan, remainingEstimate } from './plan.js';
import { etaMs, formatEta, ratesText } from './progress.js';
import type { RunSettings } from './settings.js';

/** How often a line is written: every minute. */
export const PROGRESS_LINE_MS = 60_000;

/** A repeating timer: `every` calls `fn` each `ms` until the stop it returns is called. */
export interface Ticker {
  every(ms: number, fn: () => void): () => void;
}

const intervalTicker: Ticker = {
  every(ms, fn) {
    const t = setInterval(fn, ms);
    t.unref();
    return () => clearInterval(t);
  },
};

export interface ProgressLinesOptions {
  readonly s: Pick<RunSettings, 'pipeline' | 'rates' | 'limit' | 'shard' | 'localAddresses'>;
  readonly log: Log;
  readonly client: Pick<ServiceClient, 'stats'>;
  readonly counters: RunCounters;
  /** The input's rows; undefined when unknown (stdin, a job's worker). */
  readonly estimate: () => Promise<number> | undefined;
  /** Why the rows are not known ahead, when `estimate` gives none. */
  readonly unknownRows?: string;
  /** Rows in results or errors when the folder was opened (a resume). */
  readonly doneBefore: number;
  /** performance.now() or a test's clock: the counters' firstDispatch is on it. */
  readonly now?: () => number;
  readonly ticker?: Ticker;
}

const n = countText;

export class ProgressLines {
  readonly #o: ProgressLinesOptions;
  #total: number | undefined;
  #stop: (() => void) | undefined;
  #stopped = false;

  constructor(o: ProgressLinesOptions) {
    this.#o = o;
  }

  /** Says the plan once the input's rows are counted (at once when they are unknown), then a line a minute. */
  async start(): Promise<void> {
    const { s } = this.#o;
    const rows = await this.#o.estimate()?.catch(() => undefined);
    if (rows !== undefined) {
      const limited = s.limit !== undefined ? Math.min(rows, s.limit) : rows;
      this.#total = Math.round(limited / (s.shard?.count ?? 1));
    }
    // A run shorter than the count of its rows has ended already: nothing to say.
    if (this.#stopped) return;
    this.#o.log(this.planLine());
    this.#stop = (this.#o.ticker ?? intervalTicker).every(PROGRESS_LINE_MS, () => this.#o.log(this.progressLine()));
  }

  stop(): void {
    this.#stopped = true;
    this.#stop?.();
    this.#stop = undefined;
  }

  /** `plan: 1,500 rows to do, 3,000 calls (workflow 1,500 at 500/min, ...), about 3 min at these limits; ...`. */
  planLine(): string {
    const { s, doneBefore } = this.#o;
    const every = 'a progress line every minute (no terminal for a bar)';
    const called = new Set(s.pipeline.stages.map((st) => kindOf(st).service));
    const limits = SERVICES.filter((svc) => called.has(svc))
      .map((svc) => `${svc} ${limitPerMinute(describeRate(s.rates[svc]))}`)
      .join(', ');
    if (this.#total === undefined)
      return `plan: rows not known ahead (${this.#o.unknownRows ?? 'stdin'}); limits ${limits}; ${every}`;
    const left = Math.max(0, this.#total - doneBefore);
    const plan = computePlan(left, s.pipeline.stages, s.rates);
    const calls = plan.services.reduce((sum, x) => sum + x.calls, 0);
    const each = plan.services.map(
      (x) => `${x.service} ${n(x.calls)} ${x.rate ? `at ${limitPerMinute(describeRate(x.rate))}` : 'unlimited'}`,
    );
    const eta = remainingEstimate(left, s);
    const before = doneBefore > 0 ? ` (${n(doneBefore)} done before)` : '';
    return `plan: ${n(left)} rows to do${before}, ${n(calls)} calls (${each.join(', ')}), ${eta.ms === null ? 'as fast as the services answer (--rate off)' : `about ${eta.text} at the configured limits`}; ${every}`;
  }

  /** `progress: 412 of 1,500 rows done (27%), 3 in errors; workflow 499.6/min of 500/min; 2 retries, 0 x 429; ETA 2m10s`. */
  progressLine(): string {
    const { counters: c, client, s, doneBefore } = this.#o;
    const now = this.#o.now ?? (() => performance.now());
    const done = doneBefore + c.succeeded + c.failed;
    const stats = Object.values(client.stats);
    const retries = stats.reduce((sum, x) => sum + x.retries, 0);
    const throttled = stats.reduce((sum, x) => sum + x.throttled, 0);
    const total = this.#total === undefined ? undefined : Math.max(this.#total, done);
    const of = total === undefined ? '' : ` of ${n(total)}`;
    const share = total ? ` (${Math.floor((done / total) * 100)}%)` : '';
    const eta =
      total === undefined
        ? undefined
        : etaMs({
            total,
            done,
            doneThisSession: c.succeeded + c.failed,
            msSinceFirstStart: c.firstDispatch > 0 ? now() - c.firstDispatch : 0,
          });
    return `progress: ${n(done)}${of} rows done${share}, ${n(c.failed)} in errors this session; ${ratesText(client.stats, s.rates)}; ${n(retries)} retries, ${n(throttled)} x 429${total === undefined ? '' : `; ETA ${eta === undefined ? 'not known yet' : formatEta(eta)}`}`;
  }
}
