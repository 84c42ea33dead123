/**
 * A run that is one worker of a job (`run --job NAME --sink URL`): the input is opened and checked as for any
 * run (the header check), the job joined (the first worker splits the input into chunks), and the run's rows
 * then come from the chunks this worker claims (src/job/member.ts) instead of from the whole input. The rest
 * of the run is the same run: one row loop, one folder (scratch: a new one per session), one sink follower,
 * whose batches commit each chunk's position behind the job's fence.
 */
import type { BreError } from '@bre-batch/core/errors';
import { sourceIdentity, type DbSource } from '../input/db/index.js';
import { baseFormat } from '@bre-batch/formats/input/read';
import type { RangeReading } from '../input/ranges.js';
import {
  definitionDifferences,
  JobMember,
  JobStore,
  mismatchError,
  type ChunkPlan,
  type ClaimedChunk,
  type JobDefinition,
  checkSplittable,
  fileChunkRows,
  fileSeen,
  splitFileChunks,
  type FileSeen,
} from '../job/index.js';
import { inputFingerprint } from '../output/folder-identity.js';
import { JobSpend } from './job-spend.js';
import type { SpendMeter } from '../limits/spend.js';
import { sinkNames } from '../output/sink/tables.js';
import { dialectOf } from '../db/index.js';
import type { InputRow } from '@bre-batch/core/types';
import { openInput, type OpenedInput } from './input.js';
import { computePlan } from './plan.js';
import type { RunSettings } from './settings.js';

export interface RunJob {
  readonly member: JobMember;
  /** --price: the job's side of this worker's spend (its share of the job's cap, its figures for job status). */
  spend(meter: SpendMeter): JobSpend;
  /** The job's rows (all chunks), for the progress bar. */
  readonly rows: number;
  /** Hands back what is held and lets go of the input. */
  close(stopped: boolean): Promise<void>;
}

/**
 * Before a worker does anything: the job's state, or undefined when no worker has started it; a job started
 * with another pipeline, input, key, rate or table is JOB_MISMATCH (exit 2), whatever its state.
 */
export async function jobPrecheck(s: RunSettings): Promise<string | undefined> {
  // A file no worker could read a chunk of is refused before it is hashed or the job's database opened.
  if (!s.source) checkSplittable(s.input, s.inputFormat, null);
  const store = await JobStore.open({ url: s.sink!.url, schema: s.sink!.schema, retryForMs: s.sink!.retryForMs });
  try {
    const job = await store.job(s.job!.name);
    if (!job) return undefined;
    // How a file is read is compared when the worker joins (it needs the file opened); the rest here.
    const differences = definitionDifferences(job.definition, await jobDefinition(s, undefined));
    if (differences.length > 0) throw mismatchError(s.job!.name, differences);
    return job.state;
  } finally {
    await store.close();
  }
}

/** The definition every worker of the job must share (src/job/definition.ts). */
async function jobDefinition(s: RunSettings, reading: OpenedInput['reading'] | undefined): Promise<JobDefinition> {
  const sink = s.sink!;
  const per = (ms: number) => (ms === 1000 ? 's' : ms === 60_000 ? 'min' : `${ms}ms`);
  const rates = Object.entries(s.rates)
    .map(([svc, r]) => `${svc}=${r ? `${r.limit}/${per(r.windowMs)}` : 'off'}`)
    .join(',');
  const input = s.source
    ? { kind: 'database' as const, identity: JSON.stringify(sourceIdentity(s.source.url, s.source.relation)) }
    : {
        kind: 'file' as const,
        identity: await fileIdentity(s.input),
        ...(reading ? { reading: JSON.stringify(reading) } : {}),
      };
  return {
    sink_table: sink.schema ? `${sink.schema}.${sink.table}` : sink.table,
    pipeline: { name: s.pipeline.name, sha256: s.pipeline.sha256 },
    input,
    key: s.pipeline.key,
    rates,
  };
}

async function fileIdentity(path: string): Promise<string> {
  const f = await inputFingerprint(path);
  return `of ${f.size} bytes, sha256 ${f.sha256}`;
}

/** What the worker is given of the run it feeds. */
export interface JobRunHooks {
  /** The run's rows done (for the worker's rate). */
  readonly rowsDone: () => number;
  /** Stops the run (the job's database gone for good). */
  readonly fail: (err: BreError) => void;
}

/** What one chunk should take from one address at the job's rate: the last chunk ends about this long after the others. */
const CHUNK_MS = 60_000;
/** Bounds of the chunk size chosen: a chunk's claim and commits stay small beside its rows, and its bits (one a row) small. */
const CHUNK_ROWS = { min: 50, max: 100_000 } as const;

/**
 * Rows per chunk: --job-chunk-rows, else a minute's rows from one address at the job's rate (the busiest
 * service's calls a row at its --rate: 500 at the documented 500 workflow calls a minute), within CHUNK_ROWS;
 * the largest when no service the pipeline calls is limited.
 */
export function chunkRowsFor(s: Pick<RunSettings, 'job' | 'pipeline' | 'rates'>): number {
  if (s.job?.chunkRows !== undefined) return s.job.chunkRows;
  const msPerRow = computePlan(1, s.pipeline.stages, s.rates).wallMs;
  if (msPerRow === null || msPerRow <= 0) return CHUNK_ROWS.max;
  return Math.min(CHUNK_ROWS.max, Math.max(CHUNK_ROWS.min, Math.round(CHUNK_MS / msPerRow)));
}

/** Where a job's chunks come from: the split (by the worker that creates the job) and one claimed chunk's rows. */
interface ChunkSource {
  split(rows: number): Promise<ChunkPlan[]>;
  read(c: ClaimedChunk): AsyncIterable<InputRow[]>;
  close(): Promise<void>;
}

/** The input's chunks: a database's key ranges, or a file's ranges of records (src/job/file-chunks.ts). */
function chunkSource(s: RunSettings, opened: OpenedInput, seen: FileSeen | undefined): ChunkSource {
  if (opened.db) {
    const src = opened.db.source;
    return {
      split: (rows) => splitByKeys(src, rows),
      read: (c) => chunkRows(src, c),
      close: () => src.close().catch(() => undefined),
    };
  }
  checkSplittable(s.input, s.inputFormat, opened.reading.encoding);
  const reading: RangeReading = {
    format: baseFormat(s.inputFormat),
    encoding: opened.reading.encoding ?? 'utf-8',
    ...(opened.reading.delimiter !== null ? { delimiter: opened.reading.delimiter } : {}),
    ...(opened.columns ? { columns: opened.columns } : {}),
  };
  return {
    split: (rows) => splitFileChunks(s.input, reading, rows),
    read: (c) => fileChunkRows(s.input, reading, seen!, c),
    close: async () => undefined,
  };
}

/**
 * Opens the input, joins the job and returns the run's input: a reader of the claimed chunks' rows. The first
 * batch is empty: nothing is claimed before the run's sink follows (its fence must know the chunks held).
 */
export async function openJob(
  s: RunSettings,
  log: (line: string) => void,
  run: JobRunHooks,
): Promise<{ input: OpenedInput; job: RunJob }> {
  const js = s.job!;
  const sink = s.sink!;
  // Refused before anything is read: a gzip'ed file cannot be entered at a chunk's start.
  if (!s.source) checkSplittable(s.input, s.inputFormat, null);
  const store = await JobStore.open({ url: sink.url, schema: sink.schema, retryForMs: sink.retryForMs, log });
  let chunks: ChunkSource | undefined;
  let opened: OpenedInput | undefined;
  try {
    // The file as hashed for the job's definition: a change after this is seen before each chunk is read.
    const seen = s.source ? undefined : fileSeen(s.input);
    opened = await openInput(s, log, { resume: false });
    // Only the header was needed: the chunks read their own rows.
    await opened.reader.return(undefined);
    chunks = chunkSource(s, opened, seen);
    const src = chunks;
    const def = await jobDefinition(s, opened.reading);
    const job = await store.join(js.name, def, () => src.split(chunkRowsFor(s)));
    log(
      `job ${js.name}: ${job.rows} rows in ${job.chunks} chunks${job.state === 'done' ? ', done' : ''}; this worker is ${js.worker}`,
    );
    if (js.retryErrors) {
      const names = sinkNames(sink.table, dialectOf(sink.url).maxIdentifier);
      const reopened = await store.reopenErrors(js.name, dialectOf(sink.url).table(names.errors, sink.schema));
      if (reopened > 0)
        log(
          `job ${js.name}: --retry-errors re-opened ${reopened} chunk${reopened > 1 ? 's' : ''} with rows in ${names.errors}`,
        );
    }
    const member = new JobMember({
      store,
      name: js.name,
      worker: js.worker,
      address: s.localAddresses?.join(',') ?? null,
      leaseMs: js.leaseMs,
      heartbeatMs: js.heartbeatMs,
      rowsDone: run.rowsDone,
      log,
      fail: run.fail,
    });
    const reader = member.rows((c) => src.read(c));
    const input: OpenedInput = {
      reader,
      first: { done: false, value: [] },
      numberStyle: opened.numberStyle,
      reading: opened.reading,
      columns: opened.columns,
    };
    const runJob: RunJob = {
      member,
      spend: (meter) => new JobSpend(store, js.name, js.worker, meter),
      rows: job.rows,
      async close(stopped) {
        try {
          await member.close(stopped);
        } finally {
          await src.close();
        }
      },
    };
    return { input, job: runJob };
  } catch (err) {
    await (chunks ? chunks.close() : opened?.db?.source.close().catch(() => undefined));
    await store.close();
    throw err;
  }
}

/**
 * A database input's chunks: `chunkRows` rows each, cut only where a key ends (the rows of one key stay in one
 * chunk), each read later after the last key of the one before (keyset, as the source pages).
 */
async function splitByKeys(source: DbSource, chunkRows: number): Promise<ChunkPlan[]> {
  const plans: ChunkPlan[] = [];
  let first = 1;
  let rows = 0;
  let after: string | null = null;
  let last: InputRow | undefined;
  for await (const batch of source.rows()) {
    for (const row of batch) {
      rows += 1;
      last = row;
      if (rows >= chunkRows && row.groupEnd) {
        plans.push({ firstRow: first, rows, afterKey: after, byteStart: null, byteEnd: null });
        after = row.sourceKey ?? null;
        first = row.row + 1;
        rows = 0;
      }
    }
  }
  if (rows > 0 && last) plans.push({ firstRow: first, rows, afterKey: after, byteStart: null, byteEnd: null });
  return plans;
}

/** One chunk's rows: read after the key before it, numbered on from its first row, no more than it holds. */
async function* chunkRows(source: DbSource, c: ClaimedChunk): AsyncGenerator<InputRow[]> {
  const reader = source.rows(c.firstRow === 1 ? undefined : { row: c.firstRow - 1, key: c.afterKey }, c.rows);
  let left = c.rows;
  try {
    for await (const batch of reader) {
      const take = batch.length <= left ? batch : batch.slice(0, left);
      left -= take.length;
      if (take.length > 0) yield take;
      if (left <= 0) return;
    }
  } finally {
    await reader.return(undefined);
  }
}
