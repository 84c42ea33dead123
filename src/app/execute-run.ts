/**
 * `bre-batch run`, below the option parsing: starts what the run needs besides itself (the metrics, the
 * built-in sandbox when no base URL is set, the shared Redis limiter), says the plan instead with --plan,
 * runs the pipeline (src/pipeline/runner.ts), draws report.html and prints the summary. A full disk met
 * anywhere is DISK_FULL (exit 3) naming the folder.
 */
import { dirname, join, relative, resolve } from 'node:path';
import { diskFullCode, diskFullError, exitCodeOf, isBreError } from '@bre-batch/core/errors';
import { endSession } from '../output/audit.js';
import { networkSecrets } from '../http/network.js';
import { createLog, type Log } from '../log/logger.js';
import { Redactor } from '../output/redact.js';
import { formatSummary } from '../output/summary-text.js';
import { FILES } from '@bre-batch/formats';
import { journalForm } from '@bre-batch/formats/journal-file';
import { runPipeline, type RunHooks } from '../pipeline/runner.js';
import { chooseDefaultFolder } from '../pipeline/default-folder.js';
import type { RunSettings } from '../pipeline/settings.js';
import { writeRunReport } from '../report/write.js';
import { perService } from '@bre-batch/core/types';
import type { RunEndpoints, RunRequest } from './run-request.js';

/** The journals as the folder holds them now: plain, or gzip'ed by a finished run's compaction. */
function journalsIn(dir: string): string[] {
  return [FILES.results, FILES.errors].flatMap((name) => {
    const form = journalForm(join(dir, name));
    return form === undefined ? [] : [form === 'gzip' ? `${name}.gz` : name];
  });
}

/** --dry-run and --plan call nothing: any address will do. */
const NOWHERE = perService(() => 'http://127.0.0.1:9');

/**
 * A write that found the disk full, wherever it was (the end files, report.html, summary.json, the metrics
 * file at the start), is DISK_FULL (exit 3) naming the folder: the output folder, or the folder of a file
 * written outside it.
 */
export function asDiskFull(err: unknown, outDir: string | undefined): unknown {
  if (!diskFullCode(err) || (isBreError(err) && err.code === 'DISK_FULL')) return err;
  const path = (err as { path?: unknown }).path;
  if (typeof path === 'string' && (outDir === undefined || relative(resolve(outDir), resolve(path)).startsWith('..'))) {
    return diskFullError(dirname(path), err, 'the folder');
  }
  return diskFullError(outDir ?? '.', err);
}

/** Runs the request and returns the exit code (0 every row succeeded, 1 some in errors, 3 stopped early). */
export async function executeRun(req: RunRequest, hooks: RunHooks = {}): Promise<number> {
  let outDir = req.out;
  try {
    return await execute(req, hooks, (dir) => (outDir = dir));
  } catch (err) {
    throw asDiskFull(err, outDir);
  }
}

async function execute(req: RunRequest, hooks: RunHooks, folder: (dir: string) => void): Promise<number> {
  // Every log line is scrubbed of the token (added once it is read) and of the run's secrets.
  const redactor = new Redactor();
  const log = createLog({ format: req.logFormat, scrub: (t) => redactor.scrub(t) });
  const e = req.endpoints;
  if (e.authToken) redactor.add(e.authToken);
  for (const secret of networkSecrets(req.settings.network)) redactor.add(secret);
  const outDir = await outputFolder(req, log);
  folder(outDir);
  const base: RunSettings = {
    ...req.settings,
    outDir,
    log,
    clientId: e.clientId ?? 'dry-run',
    authToken: e.authToken ?? '',
    baseUrls: e.baseUrls ?? NOWHERE,
  };
  if (req.plan) {
    const { planRun } = await import('../pipeline/plan.js');
    process.stdout.write(
      `${await planRun(base, { windowHours: req.plan.windowHours, keepJournal: req.keepJournal })}\n`,
    );
    return 0;
  }
  // Started once every option is known good and before anything is called: a metrics file that cannot be
  // written is exit 2, and the file never says `running` for a command that was refused.
  const metrics = req.metrics ? await startMetrics(req.metrics, base, log) : undefined;
  const sandbox = new SandboxOnDemand(e, base.rates, log, redactor);
  try {
    let limiterFactory = hooks.limiterFactory;
    if (base.redisUrl && !limiterFactory) {
      const { redisLimiterFactory } = await import('../limits/redis.js');
      limiterFactory = redisLimiterFactory(base.redisUrl);
    }
    if (base.job && !base.dryRun) {
      const { jobPrecheck } = await import('../pipeline/job.js');
      if ((await jobPrecheck(base)) === 'done' && !base.job.retryErrors) {
        log(
          `bre-batch: the job '${base.job.name}' is done: nothing left for this worker (\`bre-batch job status ${base.job.name} --sink ...\` shows it; --retry-errors re-opens its errors)`,
        );
        return 0;
      }
    }
    const settings = { ...base, metrics };
    const connect = e.baseUrls || base.dryRun ? hooks.connect : () => sandbox.start();
    let result: Awaited<ReturnType<typeof runPipeline>>;
    try {
      result = await runPipeline(settings, { ...hooks, redactor, limiterFactory, ...(connect ? { connect } : {}) });
    } catch (err) {
      // The session's end in the folder's record, as the exit code will say it (nothing more can be known).
      if (!base.dryRun)
        await endSession(base.outDir, { exitCode: exitCodeOf(err), rows: null, outputs: false }).catch(() => undefined);
      throw err;
    }
    // A finished night's journal is gzip'ed in place (an unfinished one stays plain for its resume
    // to append to), then report.html is drawn from the folder as it is left (src/report/).
    const compacted =
      !base.dryRun && !req.keepJournal && result.summary.finished
        ? await (await import('../output/journal/compact.js')).compactFinishedRun(base.outDir)
        : undefined;
    const report = base.dryRun ? undefined : await writeRunReport(base.outDir);
    // The record of the session's end, and of the files as the end left them (`bre-batch verify` checks them).
    if (!base.dryRun) {
      const r = result.summary.rows;
      await endSession(base.outDir, {
        exitCode: result.exitCode,
        rows: r.succeeded_this_session + r.failed_this_session,
        outputs: true,
      });
    }
    process.stdout.write(
      `${formatSummary(result.summary, base.dryRun ? undefined : journalsIn(base.outDir))}\n${compacted ? `${compacted}\n` : ''}${report ? `  report: ${report.path}\n` : ''}`,
    );
    if (result.stopped && result.exitCode === 3) {
      const s = result.stopped;
      log(`bre-batch: stopped early: ${s.message}`, {
        level: 'error',
        code: s.code,
        service: s.service,
        status: s.status,
      });
      // The exact command, quoted: without --out it finds this folder again (src/pipeline/default-folder.ts).
      log(
        `bre-batch: re-run the same command to resume (it takes up ${base.outDir} again; rows already done are not sent again):\n  ${req.resumeCommand}`,
        { level: 'error', resume_command: req.resumeCommand },
      );
    } else if (result.stopped) {
      log(`bre-batch: stopped: ${result.stopped.message}`, { level: 'error', code: result.stopped.code });
    }
    return result.exitCode;
  } finally {
    await metrics?.close();
    await sandbox.close();
  }
}

/**
 * --out, else the default folder: without --out the same command finds its own unfinished folder again
 * (src/pipeline/default-folder.ts); a dry run resumes nothing and writes only where it has rows to report.
 */
async function outputFolder(req: RunRequest, log: Log): Promise<string> {
  const s = req.settings;
  // A job's worker writes a folder of its own each session (scratch: the job's state is in the database).
  if (s.job)
    return join(
      req.out ?? join('output', `job-${s.job.name}`),
      `${s.job.worker.replace(/[^\w.-]+/g, '-')}-${utcStamp(new Date())}`,
    );
  if (req.out !== undefined) return req.out;
  const folder = await chooseDefaultFolder({
    pipeline: s.pipeline,
    input: s.input,
    source: s.source,
    shard: s.shard,
    limit: s.limit,
    sample: s.sample,
    fresh: s.dryRun,
    plan: req.plan !== undefined,
  });
  if (folder.note) log(folder.note);
  return folder.dir;
}

function utcStamp(d: Date): string {
  return d
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}

/** prom-client is loaded only when metrics are asked for (it costs every other run its start-up time). */
async function startMetrics(m: NonNullable<RunRequest['metrics']>, s: RunSettings, log: Log) {
  const { RunMetrics } = await import('../metrics/prometheus.js');
  const { parsePushgatewayUrl } = await import('../metrics/pushgateway.js');
  const pushgateway = m.pushgateway !== undefined ? parsePushgatewayUrl(m.pushgateway) : undefined;
  return RunMetrics.start({
    file: m.file,
    port: m.port,
    pushgateway,
    pipeline: s.pipeline.name,
    shard: s.shard ? `${s.shard.index}/${s.shard.count}` : '',
    warn: (w) => log(w, { level: 'warn' }),
  });
}

/**
 * The built-in sandbox, started when the run first needs a service (after its input has been checked: a
 * missing file is said before any sandbox is), stopped after the run.
 */
class SandboxOnDemand {
  #close: (() => Promise<void>) | undefined;

  constructor(
    private readonly env: RunEndpoints,
    private readonly rates: RunSettings['rates'],
    private readonly log: Log,
    private readonly redactor: Redactor,
  ) {}

  async start(): Promise<Pick<RunSettings, 'baseUrls' | 'clientId' | 'authToken'>> {
    const { startSandbox } = await import('@bre-batch/sandbox');
    // The built-in sandbox enforces the limits this run is configured for (the documented ones unless
    // --rate says otherwise), so a rehearsal behaves like the real service and `--rate off` back-tests fast.
    const sb = await startSandbox({
      port: 0,
      clientId: this.env.clientId,
      authToken: this.env.authToken,
      rate: this.rates,
    });
    this.#close = () => sb.close();
    this.redactor.add(sb.authToken);
    this.log(`no BRE_BASE_URL set: using the built-in sandbox at ${sb.url}`);
    return { baseUrls: sb.urls, clientId: sb.clientId, authToken: sb.authToken };
  }

  async close(): Promise<void> {
    await this.#close?.();
  }
}
