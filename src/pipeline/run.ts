/**
 * What a run holds between its steps (src/pipeline/runner.ts), each part a readonly field set once, and its
 * lifecycle: `Run.open` acquires the parts in order (src/pipeline/run-open.ts, where the order is written),
 * each registering its teardown as soon as it is held; `close` gives them back in reverse, once, whichever
 * step failed: every step runs, the first failure is thrown and the later ones are logged. The journals are
 * closed (`closeJournals`) and the monitor finished (`finishMonitor`, with how the run ended) from one place
 * each: at the end by finish (src/pipeline/finish.ts), else by `close`.
 */
import type { BreError } from '../errors.js';
import { networkSecrets } from '../http/network.js';
import type { DbSource } from '../input/db/index.js';
import type { LimiterStats } from '../limits/limiter.js';
import type { Log } from '../log/logger.js';
import type { CallStats } from '../metrics/service-stats.js';
import { Redactor } from '../output/redact.js';
import type { RunOutput } from '../output/run-output.js';
import type { SinkThread } from '../output/sink/index.js';
import type { DecisionCounter } from '../stages/index.js';
import type { StageContext } from '../stages/types.js';
import type { InputRow, ServiceName } from '../types.js';
import type { RunCounters } from './build-summary.js';
import { Disposer } from './disposal.js';
import type { Egress } from './egress.js';
import type { FrontierTracker } from './frontier-tracker.js';
import type { RunJob } from './job.js';
import type { RunMonitor } from './monitor.js';
import type { OutcomeRecorder } from './recorder.js';
import type { StageRuntime } from './row.js';
import { acquireRun, type RunEnd, type RunHooks, type RunParts } from './run-open.js';
import type { DrawnSample } from './sample.js';
import type { RunSettings } from './settings.js';
import type { RunSink } from './sink.js';
import type { RunStop } from './stop.js';
import type { RowWindow } from './window.js';

export type { RunEnd, RunHooks } from './run-open.js';

export class Run {
  /** When the run began (epoch ms), before anything was opened. */
  readonly started: number;
  /** The run's settings; the services' addresses and credentials are the connected ones (RunHooks.connect). */
  readonly s: RunSettings;
  readonly redactor: Redactor;
  /** Log lines on stderr (for people, or JSON with their fields), secrets scrubbed. */
  readonly log: Log;
  readonly stop: RunStop;
  readonly counters: RunCounters;
  /** --job: this run is one worker of a job; its rows come from the chunks it claims (./job.ts). */
  readonly job: RunJob | undefined;
  readonly reader: AsyncGenerator<InputRow[]>;
  readonly firstBatch: IteratorResult<InputRow[]>;
  /** --allow-empty, and the input had no data rows: what it held. */
  readonly inputEmpty: string | undefined;
  /** A database input: its source, and (for a run into a folder) the resume point as rows are done. */
  readonly source: DbSource | undefined;
  readonly frontier: FrontierTracker | undefined;
  /** A sampled run's draw (--sample): the rows it sends, each row's stratum and weight. */
  readonly sample: DrawnSample | undefined;
  /** --sink: the tables the journals are followed into (./sink.ts), and the thread that follows them. */
  readonly sink: RunSink | undefined;
  readonly follower: SinkThread | undefined;
  /** Undefined in a dry run: nothing is written but dry-run-errors.ndjson. */
  readonly output: RunOutput | undefined;
  /** The lanes calls leave by: one, or one per --local-address (./egress.ts); every lane's calls together. */
  readonly egress: Egress;
  readonly stages: StageRuntime[];
  readonly stageStats: Map<string, CallStats>;
  readonly ctx: StageContext;
  /** Decisions per workflow stage: this session's rows as they are written, earlier ones at the end. */
  readonly decisions: DecisionCounter;
  readonly recorder: OutcomeRecorder;
  /** The time series and the scheduler's metrics, every few seconds (./monitor.ts). */
  readonly monitor: RunMonitor;
  readonly window: RowWindow;
  /** About how many data rows the input holds (counted once, on first ask); undefined for stdin. */
  readonly rowEstimate: () => Promise<number> | undefined;
  /** The reader has been drained or has failed: it is given back (its file closed), once. */
  readonly closeReader: () => Promise<void>;
  /**
   * No row is in flight any more: the client and the limiters, then the progress bar, the signal handlers and
   * the stop's grace timer go (the end files are written without them; a signal then ends the process as usual).
   */
  readonly letGoOfServices: () => Promise<void>;
  /**
   * The journals closed (flushed and synced), then the last resume point of a database input after them; once,
   * at the end (finish) or on the way out (close). Resolves to the failure of the close (a full disk), if any.
   */
  readonly closeJournals: () => Promise<unknown>;
  readonly #disposer: Disposer<RunEnd>;

  private constructor(p: RunParts) {
    this.started = p.started;
    this.s = p.s;
    this.redactor = p.redactor;
    this.log = p.log;
    this.stop = p.stop;
    this.counters = p.counters;
    this.job = p.job;
    this.reader = p.reader;
    this.firstBatch = p.firstBatch;
    this.closeReader = p.closeReader;
    this.inputEmpty = p.inputEmpty;
    this.source = p.source;
    this.frontier = p.frontier;
    this.sample = p.sample;
    this.sink = p.sink;
    this.follower = p.follower;
    this.output = p.output;
    this.closeJournals = p.closeJournals;
    this.egress = p.egress;
    this.stages = p.stages;
    this.stageStats = p.stageStats;
    this.ctx = p.ctx;
    this.decisions = p.decisions;
    this.recorder = p.recorder;
    this.monitor = p.monitor;
    this.window = p.window;
    this.letGoOfServices = p.letGoOfServices;
    this.rowEstimate = p.rowEstimate;
    this.#disposer = p.disposer;
  }

  /** Why the run stopped early; undefined while it goes on. */
  get stopped(): BreError | undefined {
    return this.stop.reason;
  }

  /** Limiter figures, taken when the services are let go of (empty before). */
  get limiterStats(): Partial<Record<ServiceName, LimiterStats>> {
    return this.egress.limiterStats();
  }

  /**
   * The time series' last sample and the session's end, and the final metrics, once (the close after it does
   * nothing more). Throws DISK_FULL when their disk is full.
   */
  finishMonitor(end: RunEnd): Promise<void> {
    return this.monitor.finish(end);
  }

  /**
   * Gives back everything still held, in reverse order of its acquisition, once (./disposal.ts). `failing`: the
   * caller throws a failure of its own, and the closing's are logged.
   */
  close(end: RunEnd, failing = false): Promise<void> {
    return this.#disposer.close(end, failing);
  }

  /**
   * Reads the first rows, then opens the output folder (taking its lock), the limiters and the client, and
   * starts listening for signals. The first rows are read before anything is written: an input whose header
   * cannot be read, or lacks a column the pipeline needs (the header check, ./input.ts), is a usage error
   * (exit 2, nothing called), not a stopped run, and leaves no manifest that would then refuse the corrected
   * input under the same --out. Whatever step fails, what was acquired before it is given back.
   */
  static async open(settings: RunSettings, hooks: RunHooks = {}): Promise<Run> {
    const started = Date.now();
    const redactor = new Redactor();
    redactor.add(settings.authToken);
    for (const secret of networkSecrets(settings.network)) redactor.add(secret);
    const log: Log = (line, fields) => settings.log(redactor.scrub(line), fields);
    // A failure met while giving back, after another one (the run's, or an earlier step's): logged, as the
    // first failure is the one the run ends with.
    const disposer = new Disposer<RunEnd>((err, step) =>
      log(`warning: while closing the run (${step}): ${(err as Error)?.message ?? String(err)}`, { level: 'warn' }),
    );
    try {
      return new Run(await acquireRun({ settings, hooks, started, redactor, log, disposer }));
    } catch (err) {
      // The failure that stopped the opening is the one thrown.
      await disposer.close('failed', true);
      throw err;
    }
  }
}
