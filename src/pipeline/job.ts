/**
 * A run that is one worker of a job (`run --job NAME --sink URL`): the input is opened and checked as for any
 * run (the header check), the job joined (the first worker splits the input into chunks), and the run's rows
 * then come from the chunks this worker claims (src/job/member.ts) instead of from the whole input. The rest
 * of the run is the same run: one row loop, one folder (scratch: a new one per session), one sink follower,
 * whose batches commit each chunk's position behind the job's fence.
 */
import { BreError } from '../errors.js';
import { sourceIdentity, type DbSource } from '../input/db/index.js';
import {
  definitionDifferences,
  JobMember,
  JobStore,
  mismatchError,
  type ChunkPlan,
  type ClaimedChunk,
  type JobDefinition,
} from '../job/index.js';
import { inputFingerprint } from '../output/folder-identity.js';
import { sinkNames } from '../output/sink/tables.js';
import { dialectOf } from '../db/index.js';
import type { InputRow } from '../types.js';
import { openInput, type OpenedInput } from './input.js';
import type { RunSettings } from './settings.js';

export interface RunJob {
  readonly member: JobMember;
  /** The run's rows done (for the worker's rate) and its stop (the job's database gone for good). */
  bind(rowsDone: () => number, fail: (err: BreError) => void): void;
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

/**
 * Opens the input, joins the job and returns the run's input: a reader of the claimed chunks' rows. The first
 * batch is empty: nothing is claimed before the run's sink follows (its fence must know the chunks held).
 */
export async function openJob(
  s: RunSettings,
  log: (line: string) => void,
): Promise<{ input: OpenedInput; job: RunJob }> {
  const js = s.job!;
  const sink = s.sink!;
  if (!s.source) {
    throw new BreError(
      'USAGE',
      `Expected a database --input with --job, got the file ${s.input}: a file input's chunks are not built yet; use --shard K/N and merge for files`,
      { field: 'job' },
    );
  }
  const store = await JobStore.open({ url: sink.url, schema: sink.schema, retryForMs: sink.retryForMs, log });
  let source: DbSource | undefined;
  try {
    const opened = await openInput(s, log, { resume: false });
    source = opened.db!.source;
    // Only the header was needed: the chunks read their own rows.
    await opened.reader.return(undefined);
    const def = await jobDefinition(s, opened.reading);
    const src = source;
    const job = await store.join(js.name, def, () => splitByKeys(src, js.chunkRows));
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
    let doneBy: () => number = () => 0;
    const member = new JobMember({
      store,
      name: js.name,
      worker: js.worker,
      address: s.localAddresses?.join(',') ?? null,
      leaseMs: js.leaseMs,
      heartbeatMs: js.heartbeatMs,
      rowsDone: () => doneBy(),
      log,
      fail: (err) => failWith(err),
    });
    let failWith: (err: BreError) => void = () => undefined;
    const reader = member.rows((c) => chunkRows(src, c));
    const input: OpenedInput = {
      reader,
      first: { done: false, value: [] },
      numberStyle: opened.numberStyle,
      reading: opened.reading,
      columns: opened.columns,
    };
    const runJob: RunJob = {
      member,
      rows: job.rows,
      bind(rowsDone, fail) {
        doneBy = rowsDone;
        failWith = fail;
      },
      async close(stopped) {
        try {
          await member.close(stopped);
        } finally {
          await src.close().catch(() => undefined);
        }
      },
    };
    return { input, job: runJob };
  } catch (err) {
    await source?.close().catch(() => undefined);
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
