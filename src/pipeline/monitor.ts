/**
 * Every few seconds while a run goes: a snapshot of the run (src/metrics/sampler.ts) goes to the folder's time
 * series (src/output/timeline.ts, for report.html) and to the scheduler's metrics (src/metrics/prometheus.ts), and once more
 * at the end. The timer never keeps the process alive.
 */
import { RunMetrics, type RunState } from '../metrics/prometheus.js';
import { RunSampler, type RunProbe } from '../metrics/sampler.js';
import { TimelineWriter } from '../output/timeline.js';

export interface MonitorOptions {
  /** The output folder (its time series); none for a dry run. */
  readonly dir?: string;
  readonly metrics?: RunMetrics;
  /** Limits per service, per minute (null: none), recorded with the session. */
  readonly limits: Readonly<Record<string, number | null>>;
  readonly intervalMs?: number;
  readonly now?: () => number;
  /** A failure to write the metrics file mid-run (a full disk): said once, the run goes on. */
  readonly warn?: (message: string) => void;
}

export const MONITOR_INTERVAL_MS = 5_000;

export class RunMonitor {
  readonly #sampler: RunSampler;
  readonly #timeline: TimelineWriter | undefined;
  readonly #metrics: RunMetrics | undefined;
  readonly #now: () => number;
  readonly #warn: (message: string) => void;
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> = Promise.resolve();
  #warned = false;

  private constructor(sampler: RunSampler, timeline: TimelineWriter | undefined, o: MonitorOptions) {
    this.#sampler = sampler;
    this.#timeline = timeline;
    this.#metrics = o.metrics;
    this.#now = o.now ?? Date.now;
    this.#warn = o.warn ?? (() => undefined);
  }

  static async start(probe: RunProbe, o: MonitorOptions): Promise<RunMonitor> {
    const now = o.now ?? Date.now;
    const timeline = o.dir ? await TimelineWriter.open(o.dir, { t: now(), pid: process.pid, limits: o.limits }) : undefined;
    const m = new RunMonitor(new RunSampler(probe, now), timeline, o);
    m.#timer = setInterval(() => m.tick(), o.intervalMs ?? MONITOR_INTERVAL_MS);
    m.#timer.unref();
    return m;
  }

  /** Takes a snapshot now (the timer's work; also callable by tests with an injected clock). */
  tick(): Promise<void> {
    const { snapshot, sample } = this.#sampler.take();
    this.#timeline?.sample(sample);
    const metrics = this.#metrics;
    if (!metrics) return this.#writing;
    metrics.update(snapshot);
    this.#writing = this.#writing.then(() => metrics.write(this.#now())).catch((err: unknown) => {
      if (!this.#warned) this.#warn(`warning: cannot write the metrics file: ${(err as Error).message}; the run goes on`);
      this.#warned = true;
    });
    return this.#writing;
  }

  /** The last snapshot, the session's end, and the final metrics. */
  async finish(state: Exclude<RunState, 'running'>): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    const metrics = this.#metrics;
    const { snapshot, sample } = this.#sampler.take();
    this.#timeline?.sample(sample);
    if (state !== 'failed') this.#timeline?.end(this.#now(), state);
    this.#timeline?.close();
    if (metrics) {
      metrics.update(snapshot);
      metrics.finish(state, this.#now());
      await this.#writing;
      await metrics.write(this.#now()).catch((err: unknown) => this.#warn(`warning: cannot write the metrics file: ${(err as Error).message}`));
      await metrics.close();
    }
  }
}
