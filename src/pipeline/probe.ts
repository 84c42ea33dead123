/**
 * What the run's monitor (./monitor.ts) reads every few seconds: the live counters of the run, the
 * folder's rows done before this session, and the input's row count (counted once, in the background, as
 * the progress bar does; unknown for stdin).
 */
import type { RunProbe, SeriesProbe } from '../metrics/sampler.js';
import type { RunCounters } from './build-summary.js';
import type { ServiceName } from '@bre-batch/core/types';
import { estimateRows } from '@bre-batch/formats/input/read';
import type { Egress } from './egress.js';
import type { StageRuntime } from './row.js';
import type { RunSettings } from './settings.js';
import { toUnits, type SpendMeter } from '../limits/spend.js';
import { SERVICES } from '@bre-batch/core/types';

export interface ProbeSources {
  readonly s: RunSettings;
  readonly counters: RunCounters;
  readonly stages: readonly StageRuntime[];
  readonly egress: Egress;
  /** The services the pipeline calls. */
  readonly services: readonly ServiceName[];
  /** Rows in results or errors when the folder was opened. */
  readonly doneBefore: number;
  /** The input's rows (a file's lines, a database's count); undefined when unknown (stdin). Default: the file's. */
  readonly estimate?: () => Promise<number> | undefined;
  /** --price: the run's spend. */
  readonly spend?: SpendMeter;
}

export function runProbe(x: ProbeSources): RunProbe {
  let total: number | null = null;
  const estimate = x.estimate ? x.estimate() : x.s.input === '-' ? undefined : estimateRows(x.s.input, x.s.inputFormat);
  if (estimate !== undefined) {
    void estimate
      .then((rows) => {
        const limited = x.s.limit !== undefined ? Math.min(rows, x.s.limit) : rows;
        total = Math.round(limited / (x.s.shard?.count ?? 1));
      })
      .catch(() => undefined);
  }
  const c = x.counters;
  const meter = x.spend;
  return {
    ...(meter
      ? {
          spend: () => ({
            currency: meter.prices.currency,
            services: Object.fromEntries(
              SERVICES.filter((svc) => x.services.includes(svc)).map((svc) => [
                svc,
                toUnits(meter.before.micros[svc] + meter.session.micros[svc]),
              ]),
            ),
            total: toUnits(meter.totalMicros),
            cap: meter.capMicros === undefined ? null : toUnits(meter.capMicros),
          }),
        }
      : {}),
    rows: () => ({ read: c.read, succeeded: c.succeeded, failed: c.failed }),
    progress: () => {
      const done = x.doneBefore + c.succeeded + c.failed;
      return { done, total: total === null ? null : Math.max(total, done) };
    },
    stages: () =>
      Object.fromEntries(
        x.stages.map((st) => [
          st.config.id,
          { ran: st.counters.ran, skipped: st.counters.skipped, failed: st.counters.failed },
        ]),
      ),
    // One series per service, or per service and source address with several (label `address`).
    series: () =>
      x.egress.lanes.flatMap((lane) =>
        x.services.map((svc): SeriesProbe => {
          const st = lane.client.stats[svc];
          const lim = lane.limiters[svc].stats();
          return {
            labels: x.egress.several ? { service: svc, address: lane.address! } : { service: svc },
            calls: st.attempts,
            retries: st.retries,
            throttled: st.throttled,
            waitMs: lim.waitMs,
            limitPerMin: lim.currentPerMinute,
            takeLatency: () => st.takeRecent(),
          };
        }),
      ),
  };
}
