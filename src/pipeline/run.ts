/**
 * What a run holds between its steps (src/pipeline/runner.ts): the input, the output folder and its lock,
 * the limiters and the client, the signal handlers and the progress bar. `open` takes them in order;
 * `letGoOfServices` and `close` give back whatever is still held, whichever step failed.
 */
import { resolve } from 'node:path';
import { mkdirSync } from 'node:fs';
import type { BreError } from '../errors.js';
import type { ServiceClient } from '../http/chain.js';
import { checkLocalAddresses } from '../http/egress-check.js';
import { networkSecrets } from '../http/network.js';
import { preflight } from '../http/preflight.js';
import { maskText } from '../input/mask.js';
import { localLimiter, type LimiterFactory } from '../limits/factory.js';
import type { LimiterStats } from '../limits/limiter.js';
import { CallStats } from '../metrics/service-stats.js';
import type { Manifest } from '../output/format/index.js';
import { inputFingerprint } from '../output/folder-identity.js';
import { FILES, writeFrontier } from '../output/format/index.js';
import { sourceIdentity, type DbSource } from '../input/db/index.js';
import { Redactor } from '../output/redact.js';
import { RunOutput } from '../output/run-output.js';
import { DecisionCounter, kindOf } from '../stages/index.js';
import type { Log } from '../log/logger.js';
import type { StageContext } from '../stages/types.js';
import { perService, type InputRow, type NumberStyle, type ServiceName } from '../types.js';
import { Circuit } from './circuit.js';
import { Egress } from './egress.js';
import { estimateInputRows, openInput, type InputReading } from './input.js';
import { FrontierTracker, type FrontierPoint } from './frontier-tracker.js';
import { Progress } from './progress.js';
import { OutcomeRecorder } from './recorder.js';
import type { StageRuntime } from './row.js';
import type { RunSettings } from './settings.js';
import { RunStop, writeFailureStop } from './stop.js';
import { newCounters, type RunCounters } from './build-summary.js';
import { RowWindow, windowSize } from './window.js';
import { RunMonitor } from './monitor.js';
import { runProbe } from './probe.js';
import type { DrawnSample } from './sample.js';
import { checkRoom } from './room-check.js';
import { ROOM_SAMPLE_ROWS } from '../output/room.js';
import { followSink, openSink, type RunSink } from './sink.js';
import type { RunJob } from './job.js';

export interface RunHooks {
  readonly limiterFactory?: LimiterFactory;
  /**
   * Where the services are, asked once the input has been checked and before anything is called (the
   * built-in sandbox starts here: a missing input file is said before any sandbox is). Default: the settings'.
   */
  readonly connect?: () => Promise<Pick<RunSettings, 'baseUrls' | 'clientId' | 'authToken'>>;
  /** Test hook: the run's clock. */
  readonly now?: () => Date;
}

/** How often a database input's resume point is written while it moves. */
const FRONTIER_EVERY_MS = 1000;

/** Warnings about rows printed in full; the rest are only counted. */
const WARNINGS_SHOWN = 20;

/** A service's limit per minute over every lane (null: no limit). */
function sumLimits(egress: Egress, svc: ServiceName): number | null {
  let sum = 0;
  for (const lane of egress.lanes) {
    const perMinute = lane.limiters[svc].stats().currentPerMinute;
    if (perMinute === null) return null;
    sum += perMinute;
  }
  return sum;
}

export class Run {
  readonly started = Date.now();
  readonly redactor = new Redactor();
  readonly stop: RunStop;
  readonly counters: RunCounters = newCounters();
  readonly stageStats = new Map<string, CallStats>();
  reader!: AsyncGenerator<InputRow[]>;
  firstBatch!: IteratorResult<InputRow[]>;
  /** Undefined in a dry run: nothing is written but dry-run-errors.ndjson. */
  output: RunOutput | undefined;
  /** A sampled run's draw (--sample): the rows it sends, each row's stratum and weight. */
  sample: DrawnSample | undefined;
  /** The lanes calls leave by: one, or one per --local-address (./egress.ts). */
  egress: Egress | undefined;
  /** Every lane's calls together, for the summary, the progress bar and the monitor. */
  client!: Pick<ServiceClient, 'stats' | 'retryWaitMs'>;
  stages!: StageRuntime[];
  ctx!: StageContext;
  recorder!: OutcomeRecorder;
  window!: RowWindow;
  /** Limiter figures, taken when the services are let go of. */
  limiterStats: Partial<Record<ServiceName, LimiterStats>> = {};
  /** A database input: its source, and (for a run into a folder) the resume point as rows are done. */
  source: DbSource | undefined;
  frontier: FrontierTracker | undefined;
  /** --sink: the tables the journals are followed into (./sink.ts). */
  sink: RunSink | undefined;
  /** --job: this run is one worker of a job; its rows come from the chunks it claims (./job.ts). */
  job: RunJob | undefined;
  /** --allow-empty, and the input had no data rows: what it held. */
  inputEmpty: string | undefined;
  #frontierSaved: FrontierPoint | undefined;
  #frontierSave: Promise<void> = Promise.resolve();
  #frontierPending = 0;
  #frontierTimer: NodeJS.Timeout | undefined;
  #rowEstimate: Promise<number> | undefined;
  #numberStyle: NumberStyle | undefined;
  #progress: Progress | undefined;
  #unlisten: (() => void) | undefined;
  #readerDone = false;
  #servicesReleased = false;

  #s: RunSettings;

  constructor(
    s: RunSettings,
    readonly hooks: RunHooks = {},
  ) {
    this.#s = s;
    this.redactor.add(s.authToken);
    for (const secret of networkSecrets(s.network)) this.redactor.add(secret);
    this.stop = new RunStop(s.stopGraceMs);
  }

  /** The run's settings; the services' addresses and credentials are the connected ones once `open` has asked. */
  get s(): RunSettings {
    return this.#s;
  }

  /** Log lines on stderr (for people, or JSON with their fields), secrets scrubbed. */
  readonly log: Log = (line, fields) => this.s.log(this.redactor.scrub(line), fields);
  /** Decisions per workflow stage: this session's rows as they are written, earlier ones at the end. */
  decisions!: DecisionCounter;
  /** The time series and the scheduler's metrics, every few seconds (./monitor.ts). */
  monitor: RunMonitor | undefined;

  /** Why the run stopped early; undefined while it goes on. */
  get stopped(): BreError | undefined {
    return this.stop.reason;
  }

  /**
   * Reads the first rows, then opens the output folder (taking its lock), the limiters and the client,
   * and starts listening for signals. The first rows are read before anything is written: an input whose
   * header cannot be read, or lacks a column the pipeline needs (the header check, ./input.ts), is a usage
   * error (exit 2, nothing called), not a stopped run, and leaves no manifest that would then refuse the
   * corrected input under the same --out.
   */
  async open(): Promise<void> {
    let s = this.s;
    const kinds = s.pipeline.stages.map((st) => kindOf(st));
    // A job's and a sample's modules are loaded by the runs that have one (start-up: README, Performance).
    const joined = s.job && !s.dryRun ? await (await import('./job.js')).openJob(s, this.log) : undefined;
    this.job = joined?.job;
    const input = joined ? joined.input : await openInput(s, this.log, { resume: !s.dryRun });
    this.reader = input.reader;
    this.firstBatch = input.first;
    this.#numberStyle = input.numberStyle;
    this.inputEmpty = input.empty;
    this.source = input.db?.source;
    if (input.db && !s.dryRun) {
      this.frontier = new FrontierTracker(input.db.start);
      this.#frontierSaved = input.db.start;
    }
    // The counting pass, before the folder exists: a --stratify-by column the input lacks is exit 2.
    if (s.sample) this.sample = await (await import('./sample.js')).drawSample(s, s.sample);
    if (this.hooks.connect && !s.dryRun) {
      const endpoints = await this.hooks.connect();
      this.redactor.add(endpoints.authToken);
      s = this.#s = { ...s, ...endpoints };
    }
    const manifest = await this.#manifest(input.reading);
    // Before the folder is made: an address that cannot be used is a configuration error, nothing written.
    if (s.localAddresses && !s.dryRun)
      await checkLocalAddresses(s.localAddresses, [...new Set(kinds.map((k) => s.baseUrls[k.service]))]);
    // The user's services, before the folder exists: a host that does not resolve, a closed port or a TLS failure
    // is exit 2 naming them, not every row in errors (src/http/preflight.ts). The built-in sandbox needs none.
    if (s.network) await preflight([...new Set(kinds.map((k) => k.service))], s.baseUrls, s.network);
    // So is a sink that cannot be reached, or a user's table that cannot take the rows.
    this.sink = await openSink(
      s,
      this.sample !== undefined,
      kinds.some((k) => k.producesTransactions === true),
      (line) => this.log(line),
    );
    // A dry run makes its folder only if it has rows to report (./finish.ts).
    if (!s.dryRun) {
      mkdirSync(s.outDir, { recursive: true });
      this.output = await RunOutput.open(s.outDir, manifest, {
        retryErrors: s.retryErrors,
        withTransactions: kinds.some((k) => k.producesTransactions === true),
        formats: s.outputFormats,
        sampled: this.sample !== undefined,
        stages: s.pipeline.stages.map((st, i) => ({ id: st.id, known: kinds[i].resultColumns?.(st) ?? [] })),
      });
      // A journal write that fails at the end of an event-loop turn (a full disk) stops the run at once.
      this.output.onWriteFailure = (err) => this.stop.request(writeFailureStop(s.outDir, err));
      const output = this.output;
      const bytesAtOpen = output.journalBytes;
      output.whenWritten(ROOM_SAMPLE_ROWS, () => {
        void checkRoom(
          s,
          output,
          bytesAtOpen,
          () => this.rowEstimate(),
          (line) => this.log(line, { level: 'warn' }),
        ).catch(() => undefined);
      });
      // The sink catches up with what the folder holds, then follows it (a run that resumes writes the rest).
      if (this.sink)
        await followSink(
          this.sink,
          s.outDir,
          (line) => this.log(line),
          (why) => this.stop.request(why),
          s.job,
        );
      // A job's worker claims its first chunk only now: the sink's fence hears of every chunk before its rows.
      if (this.job && this.sink?.follower) await this.#joinAsWorker(this.job, this.sink.follower);
      if (this.frontier) {
        // About once a second: a kill loses at most the last second's move of the resume point.
        this.#frontierTimer = setInterval(() => void this.saveFrontier(true), FRONTIER_EVERY_MS);
        this.#frontierTimer.unref();
      }
    }
    const stages = s.pipeline.stages.map((config) => {
      const stats = new CallStats();
      this.stageStats.set(config.id, stats);
      return { config, counters: { ran: 0, skipped: 0, failed: 0, calls: 0 }, stats };
    });
    const egress = await Egress.open(s, this.hooks.limiterFactory ?? localLimiter, stages, this.stop, (line) =>
      this.log(line, { level: 'warn' }),
    );
    this.egress = egress;
    this.client = egress;
    this.stages = egress.lanes[0].stages as StageRuntime[];
    this.ctx = this.#stageContext();
    this.recorder = new OutcomeRecorder(
      s,
      this.output,
      this.redactor,
      new Circuit(s.circuit),
      this.counters,
      (why) => this.stop.request(why),
      this.log,
    );
    this.decisions = new DecisionCounter(s.pipeline.stages);
    this.recorder.onResult = (stages) => this.decisions.add(stages);
    this.recorder.membership = this.sample?.of;
    const services = [...new Set(kinds.map((k) => k.service))];
    this.monitor = await RunMonitor.start(
      runProbe({
        s,
        counters: this.counters,
        stages: this.stages,
        egress,
        services,
        estimate: () => this.rowEstimate(),
        doneBefore: this.output ? this.output.succeededBefore + this.output.failedBefore : 0,
      }),
      {
        dir: this.output ? s.outDir : undefined,
        metrics: s.metrics,
        warn: (m) => this.log(m, { level: 'warn' }),
        stop: (why) => this.stop.request(why),
        limits: Object.fromEntries(services.map((svc) => [svc, sumLimits(egress, svc)])),
      },
    );
    // Every lane has its own limiters and connections to keep busy: as many rows as their calls in flight
    // (which follow the latency, ../limits/in-flight.ts), never more than their bounds allow.
    const used = new Set(services);
    const most = windowSize(s.concurrency, used) * egress.lanes.length;
    this.window = new RowWindow(() => {
      const caps = perService((svc) =>
        used.has(svc)
          ? egress.lanes.reduce((n, l) => n + (l.limiters[svc].inFlightCap?.() ?? s.concurrency[svc]), 0)
          : 0,
      );
      return Math.min(most, windowSize(caps, used));
    });
    this.#unlisten = this.stop.listen(this.log);
    this.#progress = new Progress(s, this.stages, egress, this.counters, s.input, egress.lanes, () =>
      this.rowEstimate(),
    );
    this.#progress.start();
  }

  async #joinAsWorker(job: RunJob, follower: NonNullable<RunSink['follower']>): Promise<void> {
    job.member.attach(follower);
    follower.onJob = (outcome) => job.member.outcome(outcome);
    job.bind(
      () => this.counters.succeeded + this.counters.failed,
      (why) => this.stop.request(why),
    );
    this.stop.signal.addEventListener('abort', () => job.member.stop(), { once: true });
    await job.member.start();
  }

  /** The reader has been drained or has failed: it holds no file any more. */
  readerDone(): void {
    this.#readerDone = true;
  }

  /** About how many data rows the input holds (counted once, on first ask); undefined for stdin. */
  rowEstimate(): Promise<number> | undefined {
    // A sampled run sends its sample's rows (and writes those without a key, or unreadable, to errors).
    const sampled = this.#sampleRows();
    this.#rowEstimate ??=
      sampled !== undefined
        ? Promise.resolve(sampled)
        : this.job
          ? Promise.resolve(this.job.rows)
          : estimateInputRows(this.s, this.source);
    return this.#rowEstimate;
  }

  /**
   * Writes the database input's resume point when it has moved, once the journal lines it covers are on the
   * disk (synced off the event loop while the run goes on; the point is taken before, so it covers no line
   * written after). Saves run one after another; the timer's skips a tick while one is under way. A folder
   * that cannot be written shows in the journal's next write, which stops the run.
   */
  saveFrontier(fromTimer = false): Promise<void> {
    if (fromTimer && this.#frontierPending > 0) return Promise.resolve();
    this.#frontierPending += 1;
    this.#frontierSave = this.#frontierSave
      .then(() => this.#writeFrontier())
      .finally(() => {
        this.#frontierPending -= 1;
      });
    return this.#frontierSave;
  }

  async #writeFrontier(): Promise<void> {
    const point = this.frontier?.point;
    const output = this.output;
    if (!point || !output || point.row <= (this.#frontierSaved?.row ?? 0)) return;
    try {
      await output.syncJournals();
      writeFrontier(this.s.outDir, point);
      this.#frontierSaved = point;
    } catch (err) {
      this.log(`warning: cannot write ${FILES.frontier} in ${this.s.outDir}: ${(err as Error).message}`, {
        level: 'warn',
      });
    }
  }

  /**
   * No row is in flight any more: the progress bar, the signal handlers, the client and the limiters go
   * (the end files are written without them; a signal then ends the process as usual).
   */
  async letGoOfServices(): Promise<void> {
    if (this.#servicesReleased) return;
    this.#servicesReleased = true;
    try {
      await this.egress?.closeClients();
    } finally {
      try {
        await this.egress?.stopLimiters();
      } finally {
        if (this.egress) this.limiterStats = this.egress.limiterStats();
        this.#progress?.stop();
        this.#unlisten?.();
        this.stop.dispose();
      }
    }
  }

  /** Gives back whatever is still held, whichever step failed: services, the reader, the journals and the lock. */
  async close(): Promise<void> {
    try {
      await this.letGoOfServices();
    } finally {
      // Still running here only when a step threw: the time series and the metrics say it failed.
      await this.monitor?.finish('failed').catch(() => undefined);
      this.monitor = undefined;
      if (!this.#readerDone) await this.reader?.return(undefined).catch(() => undefined);
      await this.source?.close().catch(() => undefined);
      // Still following only when a step threw: what it has not written, the next session does.
      await this.sink?.follower?.stop();
      await this.sink?.writer.close().catch(() => undefined);
      // After the sink: the chunks handed back are at the position its last batch committed.
      await this.job?.close(this.stopped !== undefined).catch(() => undefined);
      clearInterval(this.#frontierTimer);
      try {
        // Closed already unless a step threw; a failure here (a full disk) is that step's to report.
        this.output?.close();
        // The journals are closed (flushed and synced) first: the last resume point goes after them.
        await this.saveFrontier();
      } catch {
        /* the journals hold whole lines only (src/output/ndjson-file.ts) */
      } finally {
        this.output?.unlock();
      }
    }
  }

  async #manifest(reading: InputReading): Promise<Manifest> {
    const s = this.s;
    return {
      version: 1,
      tool: 'bre-batch',
      pipeline: { name: s.pipeline.name, path: s.pipeline.path, sha256: s.pipeline.sha256 },
      input: {
        ...(s.source
          ? {
              path: s.input,
              format: s.source.url.dialect,
              size: null,
              sha256: null,
              reading,
              source: sourceIdentity(s.source.url, s.source.relation),
            }
          : {
              path: s.input === '-' ? '-' : resolve(s.input),
              format: s.inputFormat,
              ...(await inputFingerprint(s.input)),
              reading,
            }),
        files_root:
          s.filesRoot.kind === 'folder'
            ? { path: s.filesRoot.real, given: s.filesRoot.given }
            : { path: null, given: false },
      },
      key: s.pipeline.key,
      shard: s.shard ? `${s.shard.index}/${s.shard.count}` : null,
      limit: s.limit ?? null,
      created_at: new Date().toISOString(),
      ...(this.sample ? { sample: this.sample.design } : {}),
    };
  }

  /** Rows a sampled run sends over all its shards: the sample, and the rows without a key or unreadable (errors). */
  #sampleRows(): number | undefined {
    const d = this.sample;
    return d ? d.design.sampled + d.withoutKey + d.unreadable : undefined;
  }

  #stageContext(): StageContext {
    const s = this.s;
    let shown = 0;
    return {
      filesRoot: s.filesRoot,
      clientId: s.clientId,
      now: this.hooks.now ?? (() => new Date()),
      signal: this.stop.signal,
      numberStyle: this.#numberStyle,
      warn: (message, row) => {
        this.counters.warnings += 1;
        if (shown >= WARNINGS_SHOWN) return;
        shown += 1;
        this.log(`warning${row ? ` (row ${row.row}, line ${row.line})` : ''}: ${maskText(message)}`, {
          level: 'warn',
          row: row?.row,
          line: row?.line,
        });
      },
    };
  }
}
