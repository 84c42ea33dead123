/**
 * Metrics for the scheduler, in Prometheus' text exposition format (prom-client renders it):
 * - `--metrics-file PATH`: for node exporter's textfile collector, the usual way to watch batch jobs. The
 *   file is replaced atomically (a temporary file in the same folder, renamed: the collector never reads a
 *   half-written file, and ignores the temporary name, which does not end in .prom) every few seconds and
 *   at the end. `bre_batch_last_success_timestamp_seconds` is carried over from the file a previous run
 *   left, so "the nightly run did not finish" is an alert on its age.
 * - `--metrics-port P`: the same text served on 127.0.0.1:P/metrics while the run goes.
 * - `--pushgateway URL`: the same pushed to a Pushgateway each time the file would be written
 *   (src/metrics/pushgateway.ts), beside the run.
 * Series are labelled by pipeline and shard, and per service; a run with several source addresses
 * (--local-address) labels the per-service series with `address` too (one series per service and address).
 */
import { chmodSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { dirname } from 'node:path';
import { Counter, Gauge, Registry } from 'prom-client';
import { BreError, diskFullCode } from '@bre-batch/core/errors';
import { MetricsPusher } from './pushgateway.js';
import type { RunSnapshot } from './sampler.js';

export type RunState = 'running' | 'finished' | 'stopped' | 'failed';

/** A metric as declared: its name, type, help and label names. */
export interface MetricDefinition {
  readonly name: string;
  readonly type: 'counter' | 'gauge';
  readonly help: string;
  readonly labels: readonly string[];
}
const STATES: readonly RunState[] = ['running', 'finished', 'stopped', 'failed'];

export interface MetricsOptions {
  /** File for the textfile collector (e.g. /var/lib/node_exporter/textfile/bre_batch.prom). */
  readonly file?: string;
  /** Port on 127.0.0.1 to serve /metrics on. */
  readonly port?: number;
  readonly pipeline: string;
  /** `K/N` of a sharded run, else empty. */
  readonly shard: string;
  /** A Pushgateway to push to (checked by parsePushgatewayUrl). */
  readonly pushgateway?: URL;
  /** Where a failed push is said (once); the run goes on. */
  readonly warn?: (message: string) => void;
}

/** The value of a sample with these labels in a text exposition, or undefined (a small reader: our own file). */
function previousValue(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    const v = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(v)) return v;
  }
  return undefined;
}

export class RunMetrics {
  readonly #o: MetricsOptions;
  readonly #reg = new Registry();
  readonly #base: Record<string, string>;
  readonly #rows: Counter;
  readonly #calls: Counter;
  readonly #retries: Counter;
  readonly #throttled: Counter;
  readonly #wait: Counter;
  readonly #rate: Gauge;
  readonly #limit: Gauge;
  readonly #done: Gauge;
  readonly #total: Gauge;
  readonly #eta: Gauge;
  readonly #state: Gauge;
  readonly #started: Gauge;
  readonly #updated: Gauge;
  readonly #lastSuccess: Gauge;
  readonly #spend: Counter;
  readonly #spendCap: Gauge;
  #last: RunSnapshot | undefined;
  #server: Server | undefined;
  readonly #pusher: MetricsPusher | undefined;

  private constructor(o: MetricsOptions) {
    this.#o = o;
    this.#base = { pipeline: o.pipeline, shard: o.shard };
    const reg = [this.#reg];
    const base = ['pipeline', 'shard'];
    const svc = [...base, 'service', 'address'];
    this.#rows = new Counter({
      name: 'bre_batch_rows_total',
      help: 'Rows of this run session, by outcome (read, succeeded, failed)',
      labelNames: [...base, 'outcome'],
      registers: reg,
    });
    this.#calls = new Counter({
      name: 'bre_batch_calls_total',
      help: 'Attempts sent, retries included',
      labelNames: svc,
      registers: reg,
    });
    this.#retries = new Counter({
      name: 'bre_batch_retries_total',
      help: 'Attempts that were retries',
      labelNames: svc,
      registers: reg,
    });
    this.#throttled = new Counter({
      name: 'bre_batch_throttled_total',
      help: 'Answers 429 Too Many Requests',
      labelNames: svc,
      registers: reg,
    });
    this.#wait = new Counter({
      name: 'bre_batch_limiter_wait_seconds_total',
      help: 'Time attempts waited in the rate limiter, summed',
      labelNames: svc,
      registers: reg,
    });
    this.#rate = new Gauge({
      name: 'bre_batch_rate_per_minute',
      help: 'Attempts per minute over the last minute',
      labelNames: svc,
      registers: reg,
    });
    this.#limit = new Gauge({
      name: 'bre_batch_rate_limit_per_minute',
      help: 'The configured (or adapted) limit per minute; absent without a limit',
      labelNames: svc,
      registers: reg,
    });
    this.#done = new Gauge({
      name: 'bre_batch_rows_done',
      help: 'Rows in results or errors, over every session of the output folder',
      labelNames: base,
      registers: reg,
    });
    this.#total = new Gauge({
      name: 'bre_batch_rows_expected',
      help: 'Data rows of the input (absent when unknown, e.g. stdin)',
      labelNames: base,
      registers: reg,
    });
    this.#eta = new Gauge({
      name: 'bre_batch_eta_seconds',
      help: 'Time left at the rate of the last minute (absent when unknown)',
      labelNames: base,
      registers: reg,
    });
    this.#state = new Gauge({
      name: 'bre_batch_run_state',
      help: 'State of the run: 1 for the current state (running, finished, stopped, failed)',
      labelNames: [...base, 'state'],
      registers: reg,
    });
    this.#started = new Gauge({
      name: 'bre_batch_run_start_timestamp_seconds',
      help: 'When this run session started',
      labelNames: base,
      registers: reg,
    });
    this.#updated = new Gauge({
      name: 'bre_batch_last_update_timestamp_seconds',
      help: 'When these metrics were written',
      labelNames: base,
      registers: reg,
    });
    this.#spend = new Counter({
      name: 'bre_batch_spend_total',
      help: "What the folder's billed calls cost so far (--price), every session, in the currency's unit",
      labelNames: [...base, 'service', 'currency'],
      registers: reg,
    });
    this.#spendCap = new Gauge({
      name: 'bre_batch_spend_cap',
      help: "--max-spend, in the currency's unit",
      labelNames: [...base, 'currency'],
      registers: reg,
    });
    this.#lastSuccess = new Gauge({
      name: 'bre_batch_last_success_timestamp_seconds',
      help: 'When a run of this pipeline last finished (every row in results or errors)',
      labelNames: base,
      registers: reg,
    });
    // The shard is in the group too: push-add replaces a metric by name within its group, so the shards of
    // one run grouped together would wipe each other's series.
    this.#pusher = o.pushgateway
      ? new MetricsPusher(this.#reg, {
          url: o.pushgateway,
          groupings: { pipeline: o.pipeline, ...(o.shard ? { shard: o.shard } : {}) },
          warn: o.warn ?? (() => undefined),
        })
      : undefined;
  }

  /**
   * Checks the file can be written and the port served (exit 2 before any call otherwise) and writes the
   * first file (state running).
   */
  static async start(o: MetricsOptions, now = Date.now()): Promise<RunMetrics> {
    if (o.port !== undefined && !(Number.isInteger(o.port) && o.port >= 0 && o.port <= 65535)) {
      throw new BreError('USAGE', `Expected --metrics-port to be a port number from 0 to 65535, got '${o.port}'`);
    }
    const m = new RunMetrics(o);
    if (o.file) {
      if (!existsSync(dirname(o.file)))
        throw new BreError(
          'USAGE',
          `cannot write --metrics-file ${o.file}: Expected an existing folder, got no folder ${dirname(o.file)} (create it, or point at node exporter's textfile directory)`,
        );
      if (existsSync(o.file)) {
        try {
          const before = previousValue(
            readFileSync(o.file, 'utf8'),
            'bre_batch_last_success_timestamp_seconds',
            m.#base,
          );
          if (before !== undefined) m.#lastSuccess.set(m.#base, before);
        } catch {
          /* unreadable: written over below, or refused there */
        }
      }
    }
    m.#started.set(m.#base, now / 1000);
    m.#setState('running');
    try {
      await m.write(now);
    } catch (err) {
      // A full disk is no usage error: it is reported as one (exit 3) by the command, like any other.
      if (diskFullCode(err)) throw err;
      throw new BreError(
        'USAGE',
        `cannot write --metrics-file ${o.file}: ${(err as Error).message}; Expected a file in a folder this user can write`,
      );
    }
    if (o.port !== undefined) {
      const server = createServer((req, res) => {
        if (req.url !== '/metrics') {
          res.writeHead(404).end('see /metrics\n');
          return;
        }
        void m.#reg.metrics().then(
          (text) => res.writeHead(200, { 'content-type': m.#reg.contentType }).end(text),
          () => res.writeHead(500).end(),
        );
      });
      await new Promise<void>((resolve, reject) => {
        server.once('error', (err) =>
          reject(
            new BreError(
              'USAGE',
              `cannot serve --metrics-port ${o.port} on 127.0.0.1: ${(err as NodeJS.ErrnoException).code ?? err.message}; Expected a free port`,
            ),
          ),
        );
        server.listen(o.port, '127.0.0.1', () => resolve());
      });
      server.unref();
      m.#server = server;
    }
    return m;
  }

  /** The port actually served (when --metrics-port 0 asked for any free one). */
  get port(): number | undefined {
    const a = this.#server?.address();
    return a && typeof a === 'object' ? a.port : undefined;
  }

  #setState(state: RunState): void {
    for (const s of STATES) this.#state.set({ ...this.#base, state: s }, s === state ? 1 : 0);
  }

  /** Counters and gauges from a snapshot (counters move by what changed since the previous one). */
  update(s: RunSnapshot): void {
    const prev = this.#last;
    const b = this.#base;
    for (const outcome of ['read', 'succeeded', 'failed'] as const)
      this.#rows.inc({ ...b, outcome }, s.rows[outcome] - (prev?.rows[outcome] ?? 0));
    for (const x of s.series) {
      const labels = { ...b, ...x.labels };
      const p = prev?.series.find((y) => Object.entries(x.labels).every(([k, v]) => y.labels[k] === v));
      this.#calls.inc(labels, x.calls - (p?.calls ?? 0));
      this.#retries.inc(labels, x.retries - (p?.retries ?? 0));
      this.#throttled.inc(labels, x.throttled - (p?.throttled ?? 0));
      this.#wait.inc(labels, (x.waitMs - (p?.waitMs ?? 0)) / 1000);
      this.#rate.set(labels, Math.round(x.perMinute * 10) / 10);
      if (x.limitPerMin !== null) this.#limit.set(labels, x.limitPerMin);
    }
    if (s.spend) {
      const cur = s.spend.currency;
      for (const [svc, v] of Object.entries(s.spend.services)) {
        const before = prev?.spend?.services[svc] ?? 0;
        if (v > before) this.#spend.inc({ ...b, service: svc, currency: cur }, v - before);
      }
      if (s.spend.cap !== null) this.#spendCap.set({ ...b, currency: cur }, s.spend.cap);
    }
    this.#done.set(b, s.done);
    if (s.total !== null) this.#total.set(b, s.total);
    if (s.etaSeconds !== null) this.#eta.set(b, Math.round(s.etaSeconds));
    this.#last = s;
  }

  /** The end of the run: its state, and the success time when it finished. */
  finish(state: Exclude<RunState, 'running'>, now = Date.now()): void {
    this.#setState(state);
    if (state === 'finished') {
      this.#lastSuccess.set(this.#base, now / 1000);
      this.#eta.set(this.#base, 0);
    }
  }

  text(): Promise<string> {
    return this.#reg.metrics();
  }

  /** Every metric as it is declared, for the generated reference (docs/reference/metrics.md). */
  static definitions(): MetricDefinition[] {
    const m = new RunMetrics({ pipeline: '', shard: '' });
    return m.#reg.getMetricsAsArray().map((x) => {
      const declared = x as unknown as { name: string; help: string; labelNames: readonly string[] };
      return {
        name: declared.name,
        type: x instanceof Counter ? 'counter' : 'gauge',
        help: declared.help,
        labels: [...declared.labelNames],
      };
    });
  }

  /** Replaces the metrics file (atomically), and pushes to the Pushgateway without waiting for it. */
  async write(now = Date.now()): Promise<void> {
    this.#updated.set(this.#base, now / 1000);
    this.#pusher?.push();
    if (!this.#o.file) return;
    const tmp = `${this.#o.file}.tmp.${process.pid}`;
    try {
      writeFileSync(tmp, await this.#reg.metrics());
      // Counts, rates and states only, no row's data: node exporter (another user) must read it, whatever
      // the owner-only mode of the output (--output-mode).
      chmodSync(tmp, 0o644);
      renameSync(tmp, this.#o.file);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw err;
    }
  }

  /** Ends the pushes (the last one, bounded in time: a gateway that is down never holds the run's end) and the server. */
  async close(): Promise<void> {
    await this.#pusher?.finish();
    const s = this.#server;
    this.#server = undefined;
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}
