/**
 * Every few seconds while a run goes: a snapshot of the run (src/metrics/sampler.ts) goes to the folder's time
 * series (src/output/timeline-store.ts, for report.html) and to the scheduler's metrics (src/metrics/prometheus.ts), and once more
 * at the end. The timer never keeps the process alive.
 */
import { dirname } from 'node:path';
import { diskFullCode, diskFullError, type BreError } from '@bre-batch/core/errors';
import type { RunMetrics, RunState } from '../metrics/prometheus.js';
import { RunSampler, type RunProbe } from '../metrics/sampler.js';
import type { TimelineVersion } from '../metrics/timeline-lines.js';
import { TimelineWriter } from '../output/timeline-store.js';
import { writeFailureStop } from './stop.js';

export interface MonitorOptions {
  /** The output folder (its time series); none for a dry run. */
  readonly dir?: string;
  readonly metrics?: RunMetrics;
  /** Limits per service, per minute (null: none), recorded with the session. */
  readonly limits: Readonly<Record<string, number | null>>;
  readonly intervalMs?: number;
  readonly now?: () => number;
  /** A failure to write the metrics file mid-run (other than a full disk): said once, the run goes on. */
  readonly warn?: (message: string) => void;
  /**
   * Stops the run: the time series could not be written (DISK_FULL on a full disk, else INTERRUPTED), or
   * the metrics file's disk is full (DISK_FULL naming its folder).
   */
  readonly stop?: (why: BreError) => void;
}

const MONITOR_INTERVAL_MS = 5_000;

export class RunMonitor {
  readonly #sampler: RunSampler;
  readonly #timeline: TimelineWriter | undefined;
  readonly #metrics: RunMetrics | undefined;
  readonly #now: () => number;
  readonly #warn: (message: string) => void;
  readonly #stop: (why: BreError) => void;
  readonly #dir: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> = Promise.resolve();
  #warned = false;
  #finished = false;

  private constructor(sampler: RunSampler, timeline: TimelineWriter | undefined, o: MonitorOptions) {
    this.#sampler = sampler;
    this.#timeline = timeline;
    this.#metrics = o.metrics;
    this.#now = o.now ?? Date.now;
    this.#warn = o.warn ?? (() => undefined);
    this.#stop = o.stop ?? (() => undefined);
    this.#dir = o.dir;
  }

  static async start(probe: RunProbe, o: MonitorOptions): Promise<RunMonitor> {
    const now = o.now ?? Date.now;
    const timeline = o.dir
      ? await TimelineWriter.open(o.dir, { t: now(), pid: process.pid, limits: o.limits })
      : undefined;
    const m = new RunMonitor(new RunSampler(probe, now), timeline, o);
    if (timeline) timeline.onFailure = (err) => m.#timelineFailed(err);
    m.#timer = setInterval(() => m.tick(), o.intervalMs ?? MONITOR_INTERVAL_MS);
    m.#timer.unref();
    return m;
  }

  /** The session's number in the time series (0 without one: a dry run). */
  get session(): number {
    return this.#timeline?.session ?? 0;
  }

  /** The first answers of each strategy version the earlier sessions saw (src/pipeline/versions.ts). */
  get earlier(): readonly TimelineVersion[] {
    return this.#timeline?.earlierVersions ?? [];
  }

  /** A first answer of a version, in the time series (a failure to write it stops the run as a sample's would). */
  mark(line: TimelineVersion): void {
    try {
      this.#timeline?.version(line);
    } catch (err) {
      this.#timelineFailed(err);
    }
  }

  /** Takes a snapshot now (the timer's work; also callable by tests with an injected clock). */
  tick(): Promise<void> {
    const { snapshot, sample } = this.#sampler.take();
    try {
      this.#timeline?.sample(sample);
    } catch (err) {
      this.#timelineFailed(err);
    }
    const metrics = this.#metrics;
    if (!metrics) return this.#writing;
    metrics.update(snapshot);
    this.#writing = this.#writing
      .then(() => metrics.write(this.#now()))
      .catch((err: unknown) => this.#metricsFailed(err));
    return this.#writing;
  }

  /**
   * The last snapshot, the session's end, and the final metrics. Throws DISK_FULL when the disk of the
   * folder or of the metrics file is full (the run then exits 3 and a re-run does the end).
   */
  async finish(state: Exclude<RunState, 'running'>): Promise<void> {
    if (this.#finished) return;
    this.#finished = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    const metrics = this.#metrics;
    const { snapshot, sample } = this.#sampler.take();
    let full: BreError | undefined;
    if (this.#timeline) {
      try {
        this.#timeline.sample(sample);
        if (state !== 'failed') this.#timeline.end(this.#now(), state);
      } catch {
        /* the close below throws the same failure */
      }
      try {
        this.#timeline.close();
      } catch (err) {
        if (diskFullCode(err)) full = diskFullError(this.#dir ?? '.', err);
      }
    }
    if (metrics) {
      metrics.update(snapshot);
      metrics.finish(state, this.#now());
      await this.#writing;
      await metrics.write(this.#now()).catch((err: unknown) => {
        if (diskFullCode(err)) full ??= this.#metricsDiskFull(err);
        else this.#warn(`warning: cannot write the metrics file: ${(err as Error).message}`);
      });
      await metrics.close();
    }
    if (full) throw full;
  }

  /** The time series is part of the output folder: a failure to write it stops the run like a journal's. */
  #timelineFailed(err: unknown): void {
    this.#stop(writeFailureStop(this.#dir ?? '.', err));
  }

  #metricsFailed(err: unknown): void {
    if (diskFullCode(err)) {
      this.#stop(this.#metricsDiskFull(err));
      return;
    }
    if (!this.#warned) this.#warn(`warning: cannot write the metrics file: ${(err as Error).message}; the run goes on`);
    this.#warned = true;
  }

  /** The metrics file may live on another disk than the output folder: its own folder is named. */
  #metricsDiskFull(err: unknown): BreError {
    const path = (err as { path?: unknown }).path;
    return diskFullError(typeof path === 'string' ? dirname(path) : '.', err, "the metrics file's folder");
  }
}
