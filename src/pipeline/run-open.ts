/**
 * `Run.open`'s work (src/pipeline/run.ts): the parts of a run acquired in order, each registering how it is
 * given back on the run's disposal stack (src/pipeline/disposal.ts) as soon as it is held, so that a step
 * failing half-way leaves nothing held but what the stack gives back. The order, and what each step gives
 * back, is ARCHITECTURE.md's table (The path of a row); the code below follows it. Two parts end earlier,
 * through the function the stack returns for their step: the services (`letGoOfServices`, once no row is in
 * flight) and the journals (`closeJournals`, before the end files).
 */
import { mkdirSync } from 'node:fs';
import { checkLocalAddresses } from '../http/egress-check.js';
import { preflight } from '../http/preflight.js';
import type { DbSource } from '../input/db/index.js';
import type { LimiterFactory } from '../limits/factory.js';
import { localLimiter } from '../limits/factory.js';
import type { Log } from '../log/logger.js';
import type { RunState } from '../metrics/prometheus.js';
import { CallStats } from '../metrics/service-stats.js';
import type { Redactor } from '../output/redact.js';
import { ROOM_SAMPLE_ROWS } from '../output/room.js';
import { RunOutput } from '../output/run-output.js';
import { effectiveOptions } from './effective-options.js';
import type { SinkThread } from '../output/sink/index.js';
import { DecisionCounter, declaredFields, kindOf } from '../stages/index.js';
import type { StageContext } from '../stages/types.js';
import type { InputRow } from '@bre-batch/core/types';
import { newCounters, type RunCounters } from './build-summary.js';
import { Circuit } from './circuit.js';
import type { Disposer } from './disposal.js';
import { Egress } from './egress.js';
import { FrontierSaver } from './frontier-saver.js';
import { FrontierTracker } from './frontier-tracker.js';
import { openInput } from './input.js';
import type { RunJob } from './job.js';
import { RunMonitor } from './monitor.js';
import { runProbe } from './probe.js';
import { Progress } from './progress.js';
import { ProgressLines } from './progress-lines.js';
import { OutcomeRecorder } from './recorder.js';
import { checkRoom } from './room-check.js';
import type { StageRuntime } from './row.js';
import { rowEstimator, rowWindow, runManifest, stageContext, sumLimits } from './run-parts.js';
import type { DrawnSample } from './sample.js';
import type { RunSettings } from './settings.js';
import { followSink, openSink, type RunSink } from './sink.js';
import { openSpend } from './spend.js';
import type { SpendMeter } from '../limits/spend.js';
import { RunStop, writeFailureStop } from './stop.js';
import type { RowWindow } from './window.js';
import { RowFloor } from './row-floor.js';
import { expectedVersions, VersionWatch } from './versions.js';

export interface RunHooks {
  readonly limiterFactory?: LimiterFactory;
  /**
   * Where the services are, asked once the input has been checked and before anything is called (the
   * built-in sandbox starts here: a missing input file is said before any sandbox is), and not asked when
   * nothing will be (a dry run, an empty input with --allow-empty). Default: the settings'.
   */
  readonly connect?: () => Promise<Pick<RunSettings, 'baseUrls' | 'clientId' | 'authToken'>>;
  /** Test hook: the run's clock. */
  readonly now?: () => Date;
  /** The command's redactor (app/execute-run.ts), which the run adds its secrets to; default: one of its own. */
  readonly redactor?: Redactor;
}

/** How a run ended, as the time series and the metrics say it. */
export type RunEnd = Exclude<RunState, 'running'>;

/** What `Run.open` acquired and made, handed to the run once (and readable on it: pipeline/run.ts). */
export interface RunParts {
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
  readonly sinkThread: SinkThread | undefined;
  /** Undefined in a dry run: nothing is written but dry-run-errors.ndjson. */
  readonly output: RunOutput | undefined;
  /** What the calls cost, when they have a price (./spend.ts); undefined: nothing priced, or a dry run. */
  readonly spend: SpendMeter | undefined;
  /** The lanes calls leave by: one, or one per --local-address (./egress.ts); every lane's calls together. */
  readonly egress: Egress;
  readonly stages: StageRuntime[];
  readonly stageStats: Map<string, CallStats>;
  readonly ctx: StageContext;
  /** Decisions per workflow stage: this session's rows as they are written, earlier ones at the end. */
  readonly decisions: DecisionCounter;
  /** The strategy versions answered: their first answers, and --expect-version (./versions.ts). */
  readonly versions: VersionWatch;
  readonly recorder: OutcomeRecorder;
  /** The time series and the scheduler's metrics, every few seconds (./monitor.ts). */
  readonly monitor: RunMonitor;
  readonly window: RowWindow;
  /** The lowest row still to be written: the spool writes the rows below it at once (./row-floor.ts). */
  readonly floor: RowFloor;
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
  /** The run's disposal stack: what was acquired, given back in reverse by `Run.close`. */
  readonly disposer: Disposer<RunEnd>;
}

export async function acquireRun(x: {
  readonly settings: RunSettings;
  readonly hooks: RunHooks;
  readonly started: number;
  readonly redactor: Redactor;
  readonly log: Log;
  readonly disposer: Disposer<RunEnd>;
}): Promise<RunParts> {
  const { hooks, redactor, log, disposer: d } = x;
  let s = x.settings;
  const stop = new RunStop(s.stopGraceMs);
  const releaseStopTimer = d.defer('stop timer', () => stop.dispose());
  // Before anything is held: a SIGTERM while the run opens (a job joined, a lock taken, a chunk claimed) is a
  // stop like any other (exit 3, everything given back), not the default death that would leave them held.
  const releaseSignals = d.defer('signal handlers', stop.listen(log));
  const counters = newCounters();
  const kinds = s.pipeline.stages.map((st) => kindOf(st));
  // A job's and a sample's modules are loaded by the runs that have one (start-up: docs/performance.md).
  const joined =
    s.job && !s.dryRun
      ? await (await import('./job.js')).openJob(s, log, {
          rowsDone: () => counters.succeeded + counters.failed,
          fail: (why) => stop.request(why),
        })
      : undefined;
  // After the sink's last batch: the chunks handed back are at the position it committed.
  if (joined) d.defer('job', () => joined.job.close(stop.reason !== undefined).catch(() => undefined));
  const input = joined ? joined.input : await openInput(s, log, { resume: !s.dryRun });
  const source = input.db?.source;
  if (source) d.defer('database input', () => source.close().catch(() => undefined));
  const closeReader = d.defer('input reader', () => input.reader.return(undefined));
  const frontier = input.db && !s.dryRun ? new FrontierTracker(input.db.start) : undefined;
  // The counting pass, before the folder exists: a --stratify-by column the input lacks is exit 2.
  const sample = s.sample ? await (await import('./sample.js')).drawSample(s, s.sample) : undefined;
  // An empty input run with --allow-empty calls nothing: no service is reached (not even checked), no sandbox
  // started, no shared limiter joined; the run only writes its folder (an empty night's files and summary).
  const empty = input.empty !== undefined;
  if (hooks.connect && !s.dryRun && !empty) {
    const endpoints = await hooks.connect();
    redactor.add(endpoints.authToken);
    s = { ...s, ...endpoints };
  }
  const manifest = await runManifest(s, input.reading, sample);
  // Before the folder is made: an address that cannot be used is a configuration error, nothing written.
  if (s.localAddresses && !s.dryRun && !empty)
    await checkLocalAddresses(s.localAddresses, [...new Set(kinds.map((k) => s.baseUrls[k.service]))]);
  // The user's services, before the folder exists: a host that does not resolve, a closed port or a TLS failure
  // is exit 2 naming them, not every row in errors (src/http/preflight.ts). The built-in sandbox needs none.
  if (s.network && !empty) await preflight([...new Set(kinds.map((k) => k.service))], s.baseUrls, s.network);
  const transactions = kinds.some((k) => k.producesTransactions === true);
  // So is a sink that cannot be reached, or a user's table that cannot take the rows.
  const sink = await openSink(s, sample !== undefined, transactions, (line) => log(line));
  // Closed already once its thread follows, unless a step threw before.
  if (sink) d.defer('sink connection', () => sink.writer.close().catch(() => undefined));
  const rowEstimate = rowEstimator(s, { sample, job: joined?.job, source });

  let output: RunOutput | undefined;
  const floor = new RowFloor();
  let spend: SpendMeter | undefined;
  let sinkThread: SinkThread | undefined;
  let closeJournals: () => Promise<unknown> = () => Promise.resolve(undefined);
  // A dry run makes its folder only if it has rows to report (./finish.ts).
  if (!s.dryRun) {
    const dir = s.outDir;
    mkdirSync(dir, { recursive: true });
    const out = await RunOutput.open(dir, manifest, {
      retryErrors: s.retryErrors,
      floor: () => floor.floor,
      withTransactions: transactions,
      formats: s.outputFormats,
      sampled: sample !== undefined,
      ...(s.rowGroupRows ? { chunkRows: s.rowGroupRows } : {}),
      stages: s.pipeline.stages.map(declaredFields),
      decisionStages: s.pipeline.stages.map((st) => ({ id: st.id, kind: st.kind })),
      // A journal write that fails at the end of an event-loop turn (a full disk) stops the run at once.
      onWriteFailure: (err) => stop.request(writeFailureStop(dir, err)),
      // The session in the folder's record (src/output/audit.ts): its options, never a secret (scrubbed once
      // more); its rows carry the run's id and its number.
      session: {
        options: JSON.parse(redactor.scrub(JSON.stringify(effectiveOptions(s)))) as Record<string, unknown>,
      },
    });
    output = out;
    // Before any call: the folder's earlier spend is read and this session's first reserve written.
    const spent = openSpend(s, dir, {
      rows: () => counters.succeeded + counters.failed,
      fail: (err) => stop.request(writeFailureStop(dir, err)),
      log,
    });
    if (spent) {
      spend = spent.meter;
      d.defer('spend file', () => spent.file.close());
      // A job's worker: the cap is the job's, in its database; this worker's spend is reported there.
      if (joined) {
        const share = joined.job.spend(spent.meter);
        await share.start(s.maxSpendMicros);
        d.defer('job spend', () => share.close().catch(() => undefined));
      }
    }
    const saver = frontier
      ? new FrontierSaver(frontier, out, input.db?.start, (l) => log(l, { level: 'warn' }))
      : undefined;
    let closing: Promise<unknown> | undefined;
    closeJournals = () => {
      closing ??= (async () => {
        let failure: unknown;
        try {
          out.close();
        } catch (err) {
          // Kept for the end to judge (a full disk that stopped the run is told already).
          failure = err;
        }
        // The journals are closed (flushed and synced) first: the last resume point goes after them.
        await saver?.save();
        return failure;
      })();
      return closing;
    };
    // A failure of the journals here (a full disk) is the step's that threw to report; the lock goes anyway.
    d.defer('output folder', async () => {
      try {
        await closeJournals();
      } finally {
        out.unlock();
      }
    });
    const bytesAtOpen = out.journalBytes;
    out.whenWritten(ROOM_SAMPLE_ROWS, () => {
      void checkRoom(s, out, bytesAtOpen, rowEstimate, (line) => log(line, { level: 'warn' })).catch(() => undefined);
    });
    // The sink catches up with what the folder holds, then follows it (a run that resumes writes the rest).
    if (sink) {
      const job = joined?.job;
      sinkThread = await followSink(
        sink,
        dir,
        (line) => log(line),
        (why) => stop.request(why),
        s.job && job ? { settings: s.job, onJob: (outcome) => job.member.outcome(outcome) } : undefined,
      );
      const thread = sinkThread;
      // Still following only when a step threw: what it has not written, the next session does.
      if (thread) d.defer('sink thread', () => thread.stop());
    }
    // A job's worker claims its first chunk only now: the sink's fence hears of every chunk before its rows.
    if (joined && sinkThread) {
      const member = joined.job.member;
      member.attach(sinkThread);
      // A signal may have come while the run opened: the listener would never hear of it.
      if (stop.signal.aborted) member.stop();
      else stop.signal.addEventListener('abort', () => member.stop(), { once: true });
      await member.start();
    }
    if (saver) {
      saver.startTimer();
      d.defer('frontier timer', () => saver.stopTimer());
    }
  }

  const stageStats = new Map<string, CallStats>();
  const shared = s.pipeline.stages.map((config) => {
    const stats = new CallStats();
    stageStats.set(config.id, stats);
    return { config, counters: { ran: 0, skipped: 0, failed: 0, calls: 0 }, stats };
  });
  const factory = empty ? localLimiter : (hooks.limiterFactory ?? localLimiter);
  const egress = await Egress.open(s, factory, shared, stop, (line) => log(line, { level: 'warn' }), spend);
  const releaseEgress = d.defer('egress', async () => {
    try {
      await egress.closeClients();
    } finally {
      await egress.stopLimiters();
    }
  });
  const stages = egress.lanes[0].stages as StageRuntime[];
  const ctx = stageContext(s, { now: hooks.now, signal: stop.signal, numberStyle: input.numberStyle, counters, log });
  const decisions = new DecisionCounter(s.pipeline.stages);
  const versions = new VersionWatch(s.pipeline.stages, {
    expected: expectedVersions(s.expectVersion),
    log,
    stop: (why) => stop.request(why),
  });
  const recorder = new OutcomeRecorder({
    s,
    output,
    redactor,
    circuit: new Circuit(s.circuit),
    counters,
    requestStop: (why) => stop.request(why),
    log,
    onResult: (st) => decisions.add(st),
    versions,
    ...(sample ? { membership: sample.of } : {}),
  });
  const services = [...new Set(kinds.map((k) => k.service))];
  const monitor = await RunMonitor.start(
    runProbe({
      s,
      counters,
      stages,
      egress,
      services,
      estimate: rowEstimate,
      doneBefore: output ? output.succeededBefore + output.failedBefore : 0,
      spend,
    }),
    {
      dir: output ? s.outDir : undefined,
      metrics: s.metrics,
      warn: (m) => log(m, { level: 'warn' }),
      stop: (why) => stop.request(why),
      limits: Object.fromEntries(services.map((svc) => [svc, sumLimits(egress, svc)])),
    },
  );
  // Still running here only when the end was not reached (finish ends it first): a failed or stopped run has
  // said why already, so a failure to write its last sample is not news.
  d.defer('monitor', (end) => monitor.finish(end ?? 'failed').catch(() => undefined));
  // Before the first row: the first answers the earlier sessions saw are not news.
  versions.attach(monitor);
  const window = rowWindow(s, egress, services);
  const progress = new Progress(s, stages, egress, counters, s.input, egress.lanes, rowEstimate, spend);
  progress.start();
  // Off a terminal there is no bar: the plan and a line a minute instead, whatever --no-progress says (a cron
  // job's log would otherwise be silent for hours); not for a dry run, which calls nothing.
  const lines =
    !s.dryRun && process.stderr.isTTY !== true
      ? new ProgressLines({
          s,
          log,
          client: egress,
          counters,
          estimate: s.job ? () => undefined : rowEstimate,
          ...(s.job ? { unknownRows: "a job's worker claims its rows chunk by chunk" } : {}),
          doneBefore: output ? output.succeededBefore + output.failedBefore : 0,
        })
      : undefined;
  void lines?.start();
  const releaseProgress = d.defer('progress bar', () => {
    lines?.stop();
    progress.stop();
  });

  let lettingGo: Promise<void> | undefined;
  const letGoOfServices = (): Promise<void> => {
    lettingGo ??= (async () => {
      try {
        await releaseEgress();
      } finally {
        await releaseProgress();
        await releaseSignals();
        await releaseStopTimer();
      }
    })();
    return lettingGo;
  };
  return {
    started: x.started,
    s,
    redactor,
    log,
    stop,
    counters,
    disposer: d,
    job: joined?.job,
    reader: input.reader,
    firstBatch: input.first,
    closeReader,
    inputEmpty: input.empty,
    source,
    frontier,
    sample,
    sink,
    output,
    spend,
    closeJournals,
    sinkThread,
    egress,
    stages,
    stageStats,
    ctx,
    decisions,
    versions,
    recorder,
    monitor,
    window,
    floor,
    letGoOfServices,
    rowEstimate,
  };
}
