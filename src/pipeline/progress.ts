/**
 * The progress bar on stderr: rows done of total (when the input is a file), per-stage rate, retries, 429s,
 * errors and ETA. Off when stderr is not a terminal or with --no-progress.
 */
import { createRequire } from 'node:module';
import type cliProgress from 'cli-progress';
import { estimateRows } from '@bre-batch/formats/input/read';
import { boundHoldingShort } from '../limits/in-flight.js';
import { describeRate, limitPerMinute } from '@bre-batch/core/rates';
import type { InFlightView } from '../limits/limiter.js';
import { SERVICES, type ServiceName } from '@bre-batch/core/types';
import type { ServiceClient } from '../http/chain.js';
import type { Lane } from './egress.js';
import type { RunCounters } from './build-summary.js';
import type { StageRuntime } from './row.js';
import type { RunSettings, WatchSettings } from './settings.js';
import { formatAmount, type SpendMeter } from '../limits/spend.js';

/** A duration for the bar, whole and well formed: `42s`, `4m05s`, `2h05m`, `3d04h` (never `2m60s`). */
export function formatEta(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const pad = (n: number) => String(n).padStart(2, '0');
  if (s < 3600) return `${Math.floor(s / 60)}m${pad(s % 60)}s`;
  const min = Math.round(s / 60);
  if (min < 1440) return `${Math.floor(min / 60)}h${pad(min % 60)}m`;
  const h = Math.round(min / 60);
  return `${Math.floor(h / 24)}d${pad(h % 24)}h`;
}

/**
 * The time the rows left need at the rate this session has measured: rows done since the first was
 * started, over the time since. Rows done by earlier sessions (a resume) count as done, never as speed: they
 * took no time now. Undefined until a rate is measured (the bar shows `...`) or when the total is unknown.
 */
export function etaMs(x: {
  readonly total: number;
  readonly done: number;
  readonly doneThisSession: number;
  readonly msSinceFirstStart: number;
}): number | undefined {
  if (x.total <= 0) return undefined;
  const left = Math.max(0, x.total - x.done);
  if (left === 0) return 0;
  if (x.doneThisSession < 2 || x.msSinceFirstStart <= 0) return undefined;
  return left / (x.doneThisSession / x.msSinceFirstStart);
}

/** `spent 12.30 EUR of 40.00 EUR` (the folder's, earlier sessions included). */
function spentText(m: SpendMeter): string {
  const cur = m.prices.currency;
  const cap = m.capMicros === undefined ? '' : ` of ${formatAmount(m.capMicros, cur)}`;
  return `spent ${formatAmount(m.totalMicros, cur)}${cap}`;
}

/**
 * Per service called, the rate the limiter is held to, measured as it measures it (attempts less one over the
 * time from the first start to the last: a count of rows over the time since the bar started reads high), and
 * the limit, both a minute: `workflow 1194.7/min of 1200/min`.
 */
export function ratesText(stats: ServiceClient['stats'], rates: RunSettings['rates']): string {
  return (
    SERVICES.filter((svc) => stats[svc].attempts > 0)
      .map(
        (svc) => `${svc} ${stats[svc].achievedPerMinute() ?? '-'}/min of ${limitPerMinute(describeRate(rates[svc]))}`,
      )
      .join(' ') || 'starting'
  );
}

export class Progress {
  readonly #enabled: boolean;
  #bar: cliProgress.SingleBar | undefined;
  #timer: NodeJS.Timeout | undefined;
  #total = 0;

  constructor(
    private readonly s: WatchSettings & Pick<RunSettings, 'inputFormat' | 'limit' | 'rates'>,
    // The bar shows services, not stages (the rate a limiter holds is per service).
    _stages: readonly StageRuntime[],
    private readonly client: Pick<ServiceClient, 'stats'>,
    private readonly counters: RunCounters,
    input: string,
    /** With several source addresses: calls, 429s and rate per address on the line too. */
    private readonly lanes: readonly Lane[] = [],
    /** The input's rows (a file's lines, a database's count); undefined when unknown (stdin). */
    private readonly estimate: () => Promise<number> | undefined = () =>
      input === '-' ? undefined : estimateRows(input, s.inputFormat),
    /** --price: the spend goes on the line ("spent 12.30 EUR of 40.00 EUR"). */
    private readonly spend?: SpendMeter,
  ) {
    this.#enabled = s.progress && process.stderr.isTTY === true;
  }

  /** Services whose --concurrency held the rate back, said once in the log (a line for cron's mail too). */
  readonly #said = new Set<ServiceName>();
  #watch: NodeJS.Timeout | undefined;

  start(): void {
    this.#watch = setInterval(() => this.#sayHeld(), 1000);
    this.#watch.unref();
    if (!this.#enabled) return;
    const perAddress = this.lanes.length > 1 ? ' | {addresses}' : '';
    const estimate = this.estimate();
    // Loaded only for a bar on a terminal (a run under cron, --no-progress or a test has none), as
    // src/log/logger.ts loads pino.
    const bars = createRequire(import.meta.url)('cli-progress') as typeof cliProgress;
    this.#bar = new bars.SingleBar(
      {
        stream: process.stderr,
        // From stdin the total is unknown: no bar and no ETA rather than a wrong one.
        format:
          estimate === undefined
            ? `{value} rows done | {rates} | retries {retries} | 429s {throttled} | errors {errors}{spend}${perAddress}{held}`
            : `{bar} {value}/{total} rows | {rates} | retries {retries} | 429s {throttled} | errors {errors} | ETA {eta}{spend}${perAddress}{held}`,
        hideCursor: true,
        etaBuffer: 200,
        fps: 4,
      },
      bars.Presets.shades_classic,
    );
    this.#bar.start(0, 0, this.#payload());
    if (estimate !== undefined) {
      void estimate
        .then((n) => {
          this.#total = n;
          if (this.s.limit !== undefined) this.#total = Math.min(this.#total, this.s.limit);
        })
        .catch(() => undefined);
    }
    this.#timer = setInterval(() => this.#update(), 250);
    this.#timer.unref();
  }

  readonly #startedAt = Date.now();

  #payload(): Record<string, unknown> {
    const minutes = Math.max((Date.now() - this.#startedAt) / 60_000, 1 / 600);
    const rates = ratesText(this.client.stats, this.s.rates);
    const svc = Object.values(this.client.stats);
    const c = this.counters;
    const eta = etaMs({
      total: this.#total,
      done: c.succeeded + c.failed + c.resumed,
      doneThisSession: c.succeeded + c.failed,
      msSinceFirstStart: c.firstDispatch > 0 ? performance.now() - c.firstDispatch : 0,
    });
    return {
      rates,
      eta: eta === undefined ? '...' : formatEta(eta),
      retries: svc.reduce((n, x) => n + x.retries, 0),
      throttled: svc.reduce((n, x) => n + x.throttled, 0),
      errors: this.counters.failed,
      spend: this.spend ? ` | ${spentText(this.spend)}` : '',
      held: this.#held()
        .map(([svc, v]) => ` | ${boundHoldingShort(svc, { bound: v.bound, wantedAtHold: v.wanted })}`)
        .join(''),
      // Per address: calls a minute so far and 429s; `down` once its circuit opened.
      addresses: this.lanes
        .map((l) => {
          const st = Object.values(l.client.stats);
          const calls = st.reduce((n, x) => n + x.attempts, 0);
          return `${l.address} ${Math.round(calls / minutes)}/min ${st.reduce((n, x) => n + x.throttled, 0)}x429${l.down ? ' down' : ''}`;
        })
        .join(' '),
    };
  }

  /** Services whose bound on calls in flight (--concurrency) holds starts back now, with a lane's view. */
  #held(): [ServiceName, InFlightView][] {
    const out: [ServiceName, InFlightView][] = [];
    for (const svc of SERVICES) {
      for (const lane of this.lanes) {
        const v = lane.limiters[svc].inFlight?.();
        if (v?.boundHolding) {
          out.push([svc, v]);
          break;
        }
      }
    }
    return out;
  }

  #sayHeld(): void {
    for (const [svc, v] of this.#held()) {
      // Said once answers have come: before them the latency is only the age of the calls in flight.
      if (this.#said.has(svc) || v.meanLatencyMs === 0) continue;
      this.#said.add(svc);
      this.s.log(
        `${svc}: --concurrency ${v.bound} holds the rate below the limit: answers take about ${Math.round(v.latencyMs / 100) / 10} s and the limit needs about ${v.wanted} calls in flight; raise --concurrency to ${v.wanted} or more`,
        { level: 'warn' },
      );
    }
  }

  #update(): void {
    if (!this.#bar) return;
    const done = this.counters.succeeded + this.counters.failed + this.counters.resumed;
    if (this.#total > 0) this.#bar.setTotal(Math.max(this.#total, done));
    this.#bar.update(done, this.#payload());
  }

  stop(): void {
    if (this.#watch) clearInterval(this.#watch);
    if (this.#timer) clearInterval(this.#timer);
    if (this.#bar) {
      this.#update();
      this.#bar.stop();
    }
  }
}
