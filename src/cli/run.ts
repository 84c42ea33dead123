/** `bre-batch run <pipeline> --input <file|->`: option parsing only; the work is in src/pipeline/runner.ts. */
import { isIP } from 'node:net';
import { dirname, join, relative, resolve } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { loadPipeline } from '../config/pipeline.js';
import { BreError, diskFullCode, diskFullError, isBreError } from '../errors.js';
import { resolveFilesRoot } from '../input/files-root.js';
import { INPUT_FORMATS, resolveFormat, resolveTextOptions } from '../input/read.js';
import { defaultConcurrency } from '../limits/limiter.js';
import { DEFAULT_CIRCUIT } from '../pipeline/circuit.js';
import { runPipeline, type RunHooks } from '../pipeline/runner.js';
import type { RunSettings } from '../pipeline/settings.js';
import { parseShard } from '../input/shard.js';
import { resolveSampleOptions } from '../sample/design.js';
import { formatSummary } from '../output/summary.js';
import { parseOutputFormats } from '../output/rebuild.js';
import { Redactor } from '../output/redact.js';
import { createLog, parseLogFormat, type Log } from '../log/logger.js';
import { writeRunReport } from '../report/write.js';
import { perService, SERVICES, type ServiceName } from '../types.js';
import { endpointsFromEnv } from './credentials.js';
import { parseByteSize, parseDuration, parseServiceDurations, resolveRates } from '../config/units.js';
import { PATH_SLACK_MS } from '../limits/pacer.js';
import { DEFAULT_PAGE_ROWS, parseRelation } from '../input/db/index.js';
import { namesDatabase, resolveDbUrl } from './db-url.js';
import type { DbInputSettings, JobSettings } from '../pipeline/settings.js';
import { newWorkerId } from '../job/index.js';
import { resolveSink, SINK_OPTIONS, type SinkArgs } from './sink-options.js';
import { NETWORK_OPTIONS, resolveNetwork, type NetworkArgs } from './network-options.js';
import { networkSecrets } from '../http/network.js';
import { chooseDefaultFolder } from '../pipeline/default-folder.js';
import { resumeCommand } from './resume-command.js';

interface RunArgs extends SinkArgs, NetworkArgs {
  pipeline: string;
  input: string;
  table?: string;
  query?: string;
  'input-retry': string;
  'input-timeout': string;
  'input-page-rows': number;
  out?: string;
  'input-format'?: string;
  encoding?: string;
  delimiter?: string;
  'decimal-comma': boolean;
  'files-root'?: string;
  rate?: string[];
  'rate-slack': string;
  concurrency?: number;
  timeout?: string[];
  'max-attempts': number;
  'throttle-deadline': string;
  'max-response-size': string;
  limit?: number;
  'dry-run': boolean;
  'allow-empty': boolean;
  'retry-errors': boolean;
  shard?: string;
  sample?: string;
  'sample-share'?: string;
  'stratify-by'?: string[];
  seed?: string;
  'sample-allocation'?: string;
  redis?: string;
  'local-address'?: string[];
  progress: boolean;
  'keep-personal-data': boolean;
  'max-consecutive-failures': number;
  'max-failure-share': number;
  'failure-window': number;
  'stop-grace': string;
  plan: boolean;
  'window-hours'?: number;
  'output-formats'?: string;
  'metrics-file'?: string;
  'metrics-port'?: number;
  pushgateway?: string;
  'log-format'?: string;
  job?: string;
  'job-lease': string;
  'job-heartbeat': string;
  'job-chunk-rows': number;
}

/**
 * Whole-attempt time-outs (src/http/deadlines.ts). Bureau: 30 s, the documented example client (decision spec section 8); workflows
 * may fetch a bureau report themselves, so they get 60 s; account fetches: 60 s.
 */
const DEFAULT_TIMEOUTS_MS: Readonly<Record<ServiceName, number>> = { workflow: 60_000, bureau: 30_000, account: 60_000 };

/**
 * --local-address, repeatable or comma-separated, else BRE_LOCAL_ADDRESSES (commas or spaces): IP literals,
 * each once. Undefined when neither is given.
 */
function parseLocalAddresses(option: readonly string[] | undefined, env: string | undefined): string[] | undefined {
  const given = option && option.length > 0 ? option.join(',') : env;
  if (given === undefined || given.trim() === '') return undefined;
  const out: string[] = [];
  for (const a of given.split(/[\s,]+/).filter((x) => x !== '')) {
    if (isIP(a) === 0) throw new BreError('USAGE', `Expected --local-address to be an IP address of this machine (e.g. 10.0.0.5), got '${a}'`);
    if (!out.includes(a)) out.push(a);
  }
  return out;
}

/**
 * A database --input (a URL, env:VAR or file:PATH) with --table or --query; undefined for a file. The options
 * that only say how to read text make no sense for a database's typed rows and are refused (exit 2).
 */
export function resolveDbInput(a: Pick<RunArgs, 'input' | 'table' | 'query' | 'input-retry' | 'input-timeout' | 'input-page-rows' | 'input-format' | 'encoding' | 'delimiter' | 'decimal-comma'>): DbInputSettings | undefined {
  if (!namesDatabase(a.input)) {
    const given = a.table !== undefined ? '--table' : a.query !== undefined ? '--query' : undefined;
    if (given) throw new BreError('USAGE', `Expected ${given} only with a database --input (postgres://HOST/DB, mysql://HOST/DB, env:VAR or file:PATH), got --input ${a.input}`, { field: given.slice(2) });
    return undefined;
  }
  const textOnly: [string, unknown][] = [['input-format', a['input-format']], ['encoding', a.encoding], ['delimiter', a.delimiter], ['decimal-comma', a['decimal-comma'] || undefined]];
  for (const [flag, value] of textOnly) {
    if (value !== undefined) throw new BreError('USAGE', `Expected no --${flag} with a database --input, got --${flag}${value === true ? '' : ` ${String(value)}`}: a database's rows come typed (numbers as numbers, text as text), not as text to decode`, { field: flag });
  }
  const pageRows = a['input-page-rows'];
  if (!Number.isInteger(pageRows) || pageRows < 1 || pageRows > 100_000) throw new BreError('USAGE', `Expected --input-page-rows to be a whole number from 1 to 100000, got '${pageRows}'`, { field: 'input-page-rows' });
  const url = resolveDbUrl(a.input, '--input');
  return {
    url,
    relation: parseRelation({ table: a.table, query: a.query }, url.dialect),
    retryForMs: parseDuration(a['input-retry'], { flag: 'input-retry', unit: 's' }),
    statementTimeoutMs: parseDuration(a['input-timeout'], { flag: 'input-timeout', unit: 's', min: 1 }),
    pageRows,
  };
}

function utcStamp(d = new Date()): string {
  return d.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

/** Rows per chunk: 500, a minute of one address at the documented workflow limit (500/min), so the last chunk ends within about a minute of the others. */
const DEFAULT_CHUNK_ROWS = 500;

/** --job NAME and its options (--sink on PostgreSQL; not with the options that pick rows or a folder to resume). */
function resolveJob(a: Pick<RunArgs, 'job' | 'job-lease' | 'job-heartbeat' | 'job-chunk-rows' | 'sink' | 'shard' | 'sample' | 'sample-share' | 'limit' | 'input' | 'retry-errors'>): JobSettings | undefined {
  if (a.job === undefined) return undefined;
  const name = a.job.trim();
  if (name === '' || name.length > 200) throw new BreError('USAGE', `Expected --job to be a name of 1 to 200 characters, got '${a.job}'`, { field: 'job' });
  if (a.sink === undefined) throw new BreError('USAGE', 'Expected --sink URL with --job: the job\'s chunks and leases live in the sink\'s database, beside its tables', { field: 'job' });
  const refused: [string, unknown][] = [['--shard', a.shard], ['--sample', a.sample], ['--sample-share', a['sample-share']], ['--limit', a.limit]];
  for (const [flag, v] of refused) if (v !== undefined) throw new BreError('USAGE', `Expected no ${flag} with --job, got ${flag} ${String(v)}: a job's workers share the whole input between them`, { field: 'job' });
  if (a.input === '-') throw new BreError('USAGE', 'Expected --input to be a file or a database with --job, got - (stdin): every worker reads the chunks it claims', { field: 'input' });
  const leaseMs = parseDuration(a['job-lease'], { flag: 'job-lease', unit: 's', min: 1000 });
  const heartbeatMs = parseDuration(a['job-heartbeat'], { flag: 'job-heartbeat', unit: 's', min: 100 });
  if (heartbeatMs * 3 > leaseMs) throw new BreError('USAGE', `Expected --job-heartbeat to be at most a third of --job-lease (${a['job-lease']}), got '${a['job-heartbeat']}': a lease must survive a missed heartbeat or two`, { field: 'job-heartbeat' });
  const chunkRows = a['job-chunk-rows'];
  if (!Number.isInteger(chunkRows) || chunkRows < 1 || chunkRows > 1_000_000) throw new BreError('USAGE', `Expected --job-chunk-rows to be a whole number from 1 to 1000000, got '${chunkRows}'`, { field: 'job-chunk-rows' });
  return { name, worker: newWorkerId(), leaseMs, heartbeatMs, chunkRows, retryErrors: a['retry-errors'] };
}

async function buildSettings(a: RunArgs, log: Log): Promise<{ settings: RunSettings; cleanup: () => Promise<void> }> {
  const pipeline = loadPipeline(a.pipeline);
  const source = resolveDbInput(a);
  // A database's rows are typed values, read as NDJSON's are.
  const inputFormat = source ? 'ndjson' : resolveFormat(a.input, a['input-format']);
  const text = source ? {} : resolveTextOptions(a, inputFormat);
  const filesRoot = resolveFilesRoot(a['files-root'], source ? { database: source.url.display } : a.input);
  const rates = resolveRates(a.rate);
  const rateSlackMs = parseDuration(a['rate-slack'], { flag: 'rate-slack', unit: 'ms' });
  const timeoutsMs = parseServiceDurations(a.timeout, 'timeout', DEFAULT_TIMEOUTS_MS);
  if (a.concurrency !== undefined && (!Number.isInteger(a.concurrency) || a.concurrency < 1)) {
    throw new BreError('USAGE', `Expected --concurrency to be a whole number >= 1, got '${a.concurrency}'`);
  }
  if (!Number.isInteger(a['max-attempts']) || a['max-attempts'] < 1) throw new BreError('USAGE', `Expected --max-attempts to be a whole number >= 1, got '${a['max-attempts']}'`);
  if (a.limit !== undefined && (!Number.isInteger(a.limit) || a.limit < 0)) throw new BreError('USAGE', `Expected --limit to be a whole number >= 0, got '${a.limit}'`);
  let shard: ReturnType<typeof parseShard> | undefined;
  if (a.shard !== undefined) {
    try {
      shard = parseShard(a.shard);
    } catch (err) {
      throw new BreError('USAGE', (err as Error).message);
    }
  }
  const sample = resolveSampleOptions({ sample: a.sample, sampleShare: a['sample-share'], stratifyBy: a['stratify-by'], seed: a.seed, allocation: a['sample-allocation'] });
  if (sample && a.input === '-') throw new BreError('USAGE', 'Expected --input to be a file with --sample or --sample-share, got - (stdin): the sample is drawn by reading the input before the run, which stdin allows only once', { field: 'input' });
  if (!Number.isInteger(a['max-consecutive-failures']) || a['max-consecutive-failures'] < 0) throw new BreError('USAGE', `Expected --max-consecutive-failures to be a whole number >= 0, got '${a['max-consecutive-failures']}'`);
  if (!(a['max-failure-share'] > 0 && a['max-failure-share'] <= 1)) throw new BreError('USAGE', `Expected --max-failure-share to be a share above 0 and at most 1 (1 = never), got '${a['max-failure-share']}'`);
  if (!Number.isInteger(a['failure-window']) || a['failure-window'] < 1) throw new BreError('USAGE', `Expected --failure-window to be a whole number >= 1, got '${a['failure-window']}'`);
  const stopGraceMs = parseDuration(a['stop-grace'], { flag: 'stop-grace', unit: 's' });
  const throttleDeadlineMs = parseDuration(a['throttle-deadline'], { flag: 'throttle-deadline', unit: 's', min: 1000 });
  const maxResponseBytes = parseByteSize(a['max-response-size'], 'max-response-size', 1024);
  const job = resolveJob(a);
  if (a['retry-errors'] && !a.out && !job) throw new BreError('USAGE', '--retry-errors needs --out DIR: the folder of the run whose errors to retry');
  const concurrency = perService((s) => a.concurrency ?? defaultConcurrency(rates[s], timeoutsMs[s]));
  const outputFormats = parseOutputFormats(a['output-formats']);
  const localAddresses = parseLocalAddresses(a['local-address'], process.env.BRE_LOCAL_ADDRESSES);
  const sink = resolveSink(a, pipeline.name);
  // Without --out, the same command finds its own unfinished folder again (src/pipeline/default-folder.ts); a
  // dry run resumes nothing and writes only where it has rows to report.
  // A job's worker writes a folder of its own each session (scratch: the job's state is in the database).
  const folder = job ? { dir: join(a.out ?? join('output', `job-${job.name}`), `${job.worker.replace(/[^\w.-]+/g, '-')}-${utcStamp()}`) }
    : a.out !== undefined ? { dir: a.out } : await chooseDefaultFolder({ pipeline, input: a.input, source, shard, limit: a.limit, sample, fresh: a['dry-run'] });
  if ('note' in folder && folder.note) log(folder.note);

  const env = endpointsFromEnv(process.env, a['dry-run'] || a.plan);
  // Only the user's base URLs go through proxies and client certificates: the built-in sandbox is in-process.
  const network = env.baseUrls ? resolveNetwork(a, process.env, env.baseUrls, localAddresses) : undefined;
  let baseUrls = env.baseUrls;
  let clientId = env.clientId;
  let authToken = env.authToken;
  let cleanup = async () => {};
  // Started once every option is known good and before anything is called: a metrics file that cannot be
  // written is exit 2, and the file never says `running` for a command that was refused.
  const metrics = !a.plan && (a['metrics-file'] !== undefined || a['metrics-port'] !== undefined || a.pushgateway !== undefined)
    // prom-client is loaded only when asked for (it costs every other command its start-up time).
    ? await startMetrics(a, pipeline.name, shard ? `${shard.index}/${shard.count}` : '', log)
    : undefined;
  if (!baseUrls && !a['dry-run'] && !a.plan) {
    const { startSandbox } = await import('../sandbox/index.js');
    // The built-in sandbox enforces the limits this run is configured for (the documented ones unless
    // --rate says otherwise), so a rehearsal behaves like the real service and `--rate off` back-tests fast.
    const sb = await startSandbox({ port: 0, clientId, authToken, rate: rates });
    baseUrls = sb.urls;
    clientId = sb.clientId;
    authToken = sb.authToken;
    cleanup = () => sb.close();
    log(`no BRE_BASE_URL set: using the built-in sandbox at ${sb.url}`);
  }
  const settings: RunSettings = {
    pipeline,
    input: source ? source.url.display : a.input,
    inputFormat,
    ...(source ? { source } : {}),
    ...text,
    decimalComma: a['decimal-comma'],
    filesRoot,
    outDir: folder.dir,
    rates,
    rateSlackMs,
    concurrency,
    timeoutsMs,
    maxAttempts: a['max-attempts'],
    throttleDeadlineMs,
    maxResponseBytes,
    limit: a.limit,
    allowEmpty: a['allow-empty'],
    dryRun: a['dry-run'],
    retryErrors: a['retry-errors'] && !job,
    ...(job ? { job } : {}),
    shard,
    ...(sink ? { sink } : {}),
    ...(sample ? { sample } : {}),
    redisUrl: a.redis,
    ...(localAddresses ? { localAddresses } : {}),
    ...(network ? { network } : {}),
    progress: a.progress,
    clientId: clientId ?? 'dry-run',
    authToken: authToken ?? '',
    // --dry-run and --plan call nothing: any address will do.
    baseUrls: baseUrls ?? perService(() => 'http://127.0.0.1:9'),
    keepPersonalData: a['keep-personal-data'],
    circuit: { consecutive: a['max-consecutive-failures'], share: a['max-failure-share'], window: a['failure-window'] },
    stopGraceMs,
    log,
    outputFormats,
    metrics,
  };
  return { settings, cleanup: async () => {
    await metrics?.close();
    await cleanup();
  } };
}

async function startMetrics(a: RunArgs, pipeline: string, shard: string, log: Log) {
  const { RunMetrics } = await import('../metrics/prometheus.js');
  const { parsePushgatewayUrl } = await import('../metrics/pushgateway.js');
  const pushgateway = a.pushgateway !== undefined ? parsePushgatewayUrl(a.pushgateway) : undefined;
  return RunMetrics.start({ file: a['metrics-file'], port: a['metrics-port'], pushgateway, pipeline, shard, warn: (m) => log(m, { level: 'warn' }) });
}

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

async function runCommandHandler(a: RunArgs, hooks: RunHooks = {}): Promise<number> {
  let outDir = a.out;
  try {
    return await runCommandInner(a, hooks, (dir) => (outDir = dir));
  } catch (err) {
    throw asDiskFull(err, outDir);
  }
}

async function runCommandInner(a: RunArgs, hooks: RunHooks, folder: (dir: string) => void): Promise<number> {
  // Every log line is scrubbed of the token (added once it is read) and of the run's secrets.
  const redactor = new Redactor();
  const log = createLog({ format: parseLogFormat(a['log-format']), scrub: (t) => redactor.scrub(t) });
  const { settings, cleanup } = await buildSettings(a, log);
  folder(settings.outDir);
  redactor.add(settings.authToken);
  for (const secret of networkSecrets(settings.network)) redactor.add(secret);
  if (a.plan) {
    if (a['window-hours'] !== undefined && !(a['window-hours'] > 0)) throw new BreError('USAGE', `Expected --window-hours to be a number of hours above 0, got '${a['window-hours']}'`);
    const { planRun } = await import('../pipeline/plan.js');
    process.stdout.write(`${await planRun(settings, { windowHours: a['window-hours'] })}\n`);
    return 0;
  }
  try {
    let limiterFactory = hooks.limiterFactory;
    if (settings.redisUrl && !limiterFactory) {
      const { redisLimiterFactory } = await import('../limits/redis.js');
      limiterFactory = redisLimiterFactory(settings.redisUrl);
    }
    if (settings.job && !settings.dryRun) {
      const { jobPrecheck } = await import('../pipeline/job.js');
      if ((await jobPrecheck(settings)) === 'done' && !settings.job.retryErrors) {
        log(`bre-batch: the job '${settings.job.name}' is done: nothing left for this worker (\`bre-batch job status ${settings.job.name} --sink ...\` shows it; --retry-errors re-opens its errors)`);
        return 0;
      }
    }
    const result = await runPipeline(settings, { ...hooks, limiterFactory });
    // report.html is drawn from the folder the run just finished writing (src/report/).
    const report = settings.dryRun ? undefined : await writeRunReport(settings.outDir);
    process.stdout.write(`${formatSummary(result.summary)}\n${report ? `  report: ${report.path}\n` : ''}`);
    if (result.stopped && result.exitCode === 3) {
      const s = result.stopped;
      log(`bre-batch: stopped early: ${s.message}`, { level: 'error', code: s.code, service: s.service, status: s.status });
      // The exact command, quoted: without --out it finds this folder again (src/pipeline/default-folder.ts).
      const again = resumeCommand(process.argv.slice(2), process.env);
      log(`bre-batch: re-run the same command to resume (it takes up ${settings.outDir} again; rows already done are not sent again):\n  ${again}`, { level: 'error', resume_command: again });
    } else if (result.stopped) {
      log(`bre-batch: stopped: ${result.stopped.message}`, { level: 'error', code: result.stopped.code });
    }
    return result.exitCode;
  } finally {
    await cleanup();
  }
}

export const runCommand: CommandModule<object, RunArgs> = {
  command: 'run <pipeline>',
  describe: 'stream rows through a pipeline and write the output folder',
  builder: (y: Argv) => y
    .positional('pipeline', { type: 'string', demandOption: true, describe: 'a shipped pipeline name (see `bre-batch pipelines`) or a path to a pipeline file' })
    .option('input', { type: 'string', demandOption: true, describe: 'CSV, TSV, NDJSON or Parquet file (CSV, TSV, NDJSON also .gz), - for stdin, or a database: postgres://HOST[:PORT]/DB, mysql://HOST[:PORT]/DB (no password: PGPASSWORD, ~/.pgpass, MYSQL_PWD), env:VAR or file:PATH holding the URL' })
    .option('table', { type: 'string', describe: 'with a database --input: the table to read, NAME or SCHEMA.NAME ("Quoted"."Parts" keep case and dots)' })
    .option('query', { type: 'string', describe: 'with a database --input: a SELECT whose rows to read (instead of --table); it is read in key order, in pages' })
    .option('input-retry', { type: 'string', default: '60s', describe: 'with a database --input: how long to keep connecting again when it goes away mid-run before stopping (exit 3, resumable)' })
    .option('input-timeout', { type: 'string', default: '5m', describe: 'with a database --input: how long one page may go unanswered before its connection is taken for lost (then connected again, as for --input-retry)' })
    .option('input-page-rows', { type: 'number', default: DEFAULT_PAGE_ROWS, describe: 'with a database --input: rows read per keyset page (smaller for very wide rows)' })
    .options(SINK_OPTIONS)
    .options(NETWORK_OPTIONS)
    .option('out', { type: 'string', describe: 'output folder (default output/<pipeline>-<UTC timestamp>); the same --out resumes' })
    .option('input-format', { type: 'string', choices: [...INPUT_FORMATS], describe: 'default from the extension; required for stdin (e.g. csv.gz for gzip\'ed CSV on stdin)' })
    .option('encoding', { type: 'string', describe: 'text encoding of the input, e.g. windows-1252, latin1, utf-16le, shift_jis (default UTF-8; a byte order mark decides)' })
    .option('delimiter', { type: 'string', describe: 'CSV field separator: one character, or tab, comma, semicolon, pipe (default: TAB for .tsv, else sniffed among , ; TAB |)' })
    .option('decimal-comma', { type: 'boolean', default: false, describe: 'numbers written as text use a decimal comma and dot grouping: 19,076 is 19.076, 1.20.000,50 is 120000.5' })
    .option('files-root', { type: 'string', describe: 'the folder files named in rows (bureau_report_path, bank_data_path) must lie inside; relative paths resolve against it (default: the input file\'s folder; none for stdin)' })
    .option('rate', { type: 'string', array: true, describe: `SERVICE=N/UNIT (UNIT s or min), SERVICE=off or off, repeatable; SERVICE ${SERVICES.join(', ')} (workflow=500/min, bureau=1000/min, account=120/min adaptive)` })
    .option('rate-slack', { type: 'string', default: `${PATH_SLACK_MS}ms`, describe: 'how late a call whose answer has not come back is taken to reach the server after it left (the answer bounds it when sooner); raise it on a path that can hold a request longer' })
    .option('concurrency', { type: 'number', describe: 'most calls in flight per service; below it they follow the answers\' latency (rate x latency); default rate x time-out x 1.25' })
    .option('timeout', { type: 'string', array: true, describe: 'SERVICE=DURATION: the most one attempt may take, connecting, headers and body together; past it the attempt is cut and retried as a time-out (workflow=60s, bureau=30s, account=60s)' })
    .option('max-attempts', { type: 'number', default: 6, describe: 'attempts per call (5xx 502-504, network errors, time-outs) before the row goes to errors; 429s are not counted (the row waits for the service)' })
    .option('throttle-deadline', { type: 'string', default: '10m', describe: 'how long a service may answer nothing but 429s before the run stops (exit 3, resumable; no row goes to errors for it)' })
    .option('max-response-size', { type: 'string', default: '16MiB', describe: 'an answer longer than this is cut while it streams (RESPONSE_TOO_LARGE): memory stays bounded whatever a server sends' })
    .option('limit', { type: 'number', describe: 'only the first N data rows' })
    .option('dry-run', { type: 'boolean', default: false, describe: 'read, validate and build every request; call nothing' })
    .option('allow-empty', { type: 'boolean', default: false, describe: 'an input with no data rows (0 bytes, a header only, an empty table) is an empty night: exit 0, said in the summary (default: exit 2, INPUT_EMPTY)' })
    .option('retry-errors', { type: 'boolean', default: false, describe: 'with --out of an earlier run: run again only the rows in its errors file' })
    .option('shard', { type: 'string', describe: 'K/N: only rows whose key hashes to shard K of N' })
    .option('sample', { type: 'string', describe: 'N: send only a stratified random sample of about N rows (see --stratify-by); each carries its stratum and design weight' })
    .option('sample-share', { type: 'string', describe: 'P (0 < P <= 1): send a sample of round(P x N_h) rows of every stratum (at least 2 where it has 2)' })
    .option('stratify-by', { type: 'string', array: true, describe: 'COL[:month|week|quarter][,COL...]: the strata of --sample / --sample-share (a date column grouped as compare --period does); default: one stratum, the whole input' })
    .option('seed', { type: 'string', describe: 'text that, with each row key, decides which rows a sample takes (default bre-batch; recorded in manifest.json)' })
    .option('sample-allocation', { type: 'string', describe: 'with --sample N: rows per stratum in proportion to its size (default), or the same count in every stratum' })
    .option('redis', { type: 'string', describe: 'redis://host:port: share each service limiter with other workers on the same egress IP' })
    .option('local-address', { type: 'string', array: true, describe: 'ADDR[,ADDR...], repeatable (or env BRE_LOCAL_ADDRESSES): calls leave from these source addresses, each with its own full limits; rows go to the address free soonest' })
    .option('progress', { type: 'boolean', default: true, describe: 'progress bar on stderr (--no-progress; off when stderr is not a terminal)' })
    .option('keep-personal-data', { type: 'boolean', default: false, describe: 'do not mask personal data in errors.ndjson and logs (only for a secure location)' })
    .option('max-consecutive-failures', { type: 'number', default: DEFAULT_CIRCUIT.consecutive, describe: 'stop the run (exit 3) after this many consecutive service failures; 0 = never' })
    .option('max-failure-share', { type: 'number', default: DEFAULT_CIRCUIT.share, describe: 'stop the run (exit 3) when more than this share of the last --failure-window calls failed after all retries; 1 = never' })
    .option('failure-window', { type: 'number', default: DEFAULT_CIRCUIT.window, describe: 'calls over which --max-failure-share is measured' })
    .option('plan', { type: 'boolean', default: false, describe: 'call nothing: say how long the input needs at the configured limits (and, with --window-hours, how many egress IPs that window needs)' })
    .option('window-hours', { type: 'number', describe: 'with --plan: the window the run must fit in, in hours (e.g. 6 for a nightly window)' })
    .option('stop-grace', { type: 'string', default: '10s', describe: 'after a stop (signal, 401/403), how long calls in flight may finish' })
    .option('output-formats', { type: 'string', describe: 'formats of the files rebuilt at the end: csv, parquet or csv,parquet (default both)' })
    .option('metrics-file', { type: 'string', describe: 'write Prometheus metrics here for node exporter\'s textfile collector (replaced every 5 s and at the end)' })
    .option('metrics-port', { type: 'number', describe: 'serve the same metrics on http://127.0.0.1:PORT/metrics while the run goes' })
    .option('job', { type: 'string', describe: 'NAME: join the job NAME as one of its workers (with a PostgreSQL --sink): claim chunks of the input, take over those of dead workers; every host runs the same command' })
    .option('job-lease', { type: 'string', default: '60s', describe: 'with --job: how long a chunk stays with a worker that stopped renewing it (killed, partitioned, stalled) before another takes it over' })
    .option('job-heartbeat', { type: 'string', default: '10s', describe: 'with --job: how often a worker renews its chunks\' leases (at most a third of --job-lease)' })
    .option('job-chunk-rows', { type: 'number', default: DEFAULT_CHUNK_ROWS, describe: 'with --job: rows per chunk when this worker is the one that splits the input (about a minute of one address at the documented workflow limit)' })
    .option('pushgateway', { type: 'string', describe: 'push the same metrics to this Prometheus Pushgateway (push-add, job bre_batch, grouped by pipeline) every 5 s and at the end; a gateway that is down never stops the run' })
    .option('log-format', { type: 'string', choices: ['human', 'json'], describe: 'log lines on stderr: human (default) or json (one object a line)' }) as unknown as Argv<RunArgs>,
  handler: async (a: ArgumentsCamelCase<RunArgs>) => {
    process.exitCode = await runCommandHandler(a);
  },
};
