/**
 * The progress bar on stderr: rows done of total (when the input is a file), per-stage rate, retries, 429s,
 * errors and ETA. Off when stderr is not a terminal or with --no-progress.
 */
import cliProgress from 'cli-progress';
import { estimateRows } from '../input/read.js';
import { boundHoldingShort } from '../limits/in-flight.js';
import type { InFlightView } from '../limits/limiter.js';
import { SERVICES, type ServiceName } from '../types.js';
import type { ServiceClient } from '../http/chain.js';
import type { Lane } from './egress.js';
import type { RunCounters } from './summary.js';
import type { StageRuntime } from './row.js';
import type { RunSettings } from './settings.js';

export class Progress {
  readonly #enabled: boolean;
  #bar: cliProgress.SingleBar | undefined;
  #timer: NodeJS.Timeout | undefined;
  #total = 0;

  constructor(
    private readonly s: RunSettings,
    private readonly stages: readonly StageRuntime[],
    private readonly client: Pick<ServiceClient, 'stats'>,
    private readonly counters: RunCounters,
    input: string,
    /** With several source addresses: calls, 429s and rate per address on the line too. */
    private readonly lanes: readonly Lane[] = [],
    /** The input's rows (a file's lines, a database's count); undefined when unknown (stdin). */
    private readonly estimate: () => Promise<number> | undefined = () => (input === '-' ? undefined : estimateRows(input, s.inputFormat)),
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
    this.#bar = new cliProgress.SingleBar({
      stream: process.stderr,
      // From stdin the total is unknown: no bar and no ETA rather than a wrong one.
      format: estimate === undefined
        ? `{value} rows done | {rates} | retries {retries} | 429s {throttled} | errors {errors}${perAddress}{held}`
        : `{bar} {value}/{total} rows | {rates} | retries {retries} | 429s {throttled} | errors {errors} | ETA {eta_formatted}${perAddress}{held}`,
      hideCursor: true,
      etaBuffer: 200,
      fps: 4,
    }, cliProgress.Presets.shades_classic);
    this.#bar.start(0, 0, this.#payload());
    if (estimate !== undefined) {
      void estimate.then((n) => {
        this.#total = n;
        if (this.s.limit !== undefined) this.#total = Math.min(this.#total, this.s.limit);
      }).catch(() => undefined);
    }
    this.#timer = setInterval(() => this.#update(), 250);
    this.#timer.unref();
  }

  readonly #startedAt = Date.now();

  #payload(): Record<string, unknown> {
    // Per-stage rate over the run so far, in rows a minute (the unit the limits are documented in).
    const minutes = Math.max((Date.now() - this.#startedAt) / 60_000, 1 / 600);
    const rates = this.stages.map((st) => `${st.config.id} ${Math.round((st.counters.ran + st.counters.failed) / minutes)}/min`).join(' ');
    const svc = Object.values(this.client.stats);
    return {
      rates,
      retries: svc.reduce((n, x) => n + x.retries, 0),
      throttled: svc.reduce((n, x) => n + x.throttled, 0),
      errors: this.counters.failed,
      held: this.#held().map(([svc, v]) => ` | ${boundHoldingShort(svc, { bound: v.bound, wantedAtHold: v.wanted })}`).join(''),
      // Per address: calls a minute so far and 429s; `down` once its circuit opened.
      addresses: this.lanes.map((l) => {
        const st = Object.values(l.client.stats);
        const calls = st.reduce((n, x) => n + x.attempts, 0);
        return `${l.address} ${Math.round(calls / minutes)}/min ${st.reduce((n, x) => n + x.throttled, 0)}x429${l.down ? ' down' : ''}`;
      }).join(' '),
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
      this.s.log(`${svc}: --concurrency ${v.bound} holds the rate below the limit: answers take about ${Math.round(v.latencyMs / 100) / 10} s and the limit needs about ${v.wanted} calls in flight; raise --concurrency to ${v.wanted} or more`, { level: 'warn' });
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
