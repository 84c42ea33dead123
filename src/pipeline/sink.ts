/**
 * A run with --sink: the sink's tables are made or checked before the output folder exists (a database that
 * cannot be reached, a user's table that cannot take the rows: exit 2, nothing called), then the folder's
 * journals are followed into them while the run goes (src/output/sink/), off the rows' path: the feed waits
 * only when the sink falls far behind. A sink that fails for good stops the run; the folder keeps every row
 * and the same command resumes, the sink catching up first.
 */
import { readManifest } from '@bre-batch/formats';
import type { SinkThread, SinkWriter } from '../output/sink/index.js';
import type { BreError } from '@bre-batch/core/errors';
import type { FenceOutcome } from '../job/fence.js';
import { declaredHeaders } from '../stages/index.js';
import type { InputRow } from '@bre-batch/core/types';
import { keyError } from '../input/shard.js';
import type { JobSettings, RunSettings } from './settings.js';

export interface RunSink {
  /** Made and checked the tables before the folder existed; its connection is closed once the thread has its own. */
  readonly writer: SinkWriter;
  /**
   * A file input's keys seen so far, each with the row it was met on: a key met on another row is that row's
   * error (one row per key in the table).
   */
  readonly keys: Map<string, number> | undefined;
}

export async function openSink(
  s: RunSettings,
  sampled: boolean,
  transactions: boolean,
  log: (line: string) => void,
): Promise<RunSink | undefined> {
  if (!s.sink || s.dryRun) return undefined;
  // The sink's modules are loaded by a run that has one (the feed loads this file with every run).
  const { SinkWriter } = await import('../output/sink/index.js');
  const writer = await SinkWriter.open(
    s.sink,
    { key: s.pipeline.key, sampled, transactions, declared: declaredHeaders(s.pipeline.stages) },
    (line) => log(line),
  );
  log(`sink: writing to ${writer.describe()}`);
  // A database input refuses duplicate and NULL keys itself (src/input/db/source.ts).
  return { writer, keys: s.source ? undefined : new Map() };
}

/**
 * Starts following the folder's journals (after it is opened: its torn tails cut, its retry set aside); a sink
 * that fails for good stops the run (`stop`), and a job's worker hears what each batch did to its chunks (`onJob`).
 */
export async function followSink(
  sink: RunSink,
  dir: string,
  log: (line: string) => void,
  stop: (why: BreError) => void,
  job?: { readonly settings: JobSettings; readonly onJob: (outcome: FenceOutcome) => void },
): Promise<SinkThread | undefined> {
  if (!readManifest(dir)) return undefined;
  // On a thread of its own: reading the journals back and encoding their rows stay off the rows' path.
  const { SinkThread } = await import('../output/sink/index.js');
  const thread = await SinkThread.open(
    dir,
    sink.writer.target,
    sink.writer.shape,
    log,
    job
      ? {
          name: job.settings.name,
          worker: job.settings.worker,
          leaseMs: job.settings.leaseMs,
          ...(sink.writer.target.schema ? { schema: sink.writer.target.schema } : {}),
        }
      : undefined,
    { onFailure: stop, ...(job ? { onJob: job.onJob } : {}) },
  );
  await sink.writer.close();
  return thread;
}

/**
 * With a sink every row needs a key, and a file's key may appear once: such a row is an error before any call
 * (a database input has checked its own).
 */
export function sinkKeyProblem(
  sink: Pick<RunSink, 'keys'>,
  row: InputRow,
  key: string | null,
  keyField: string,
): InputRow {
  if (!sink.keys || row.readError) return row;
  if (key === null) {
    const why = `the row has no ${keyField}: with --sink every row is written once per key, so a row without one is not sent`;
    return { ...row, readError: keyError('MISSING_KEY', keyField, why) };
  }
  const metOn = sink.keys.get(key);
  // The same row read again is no duplicate: a job's worker claims anew a chunk whose lease lapsed in its hands.
  if (metOn !== undefined && metOn !== row.row) {
    const why = `an earlier row of the input has ${keyField} '${key}': with --sink the table holds one row per key, so this row is not sent`;
    return { ...row, readError: keyError('DUPLICATE_KEY', keyField, why) };
  }
  sink.keys.set(key, row.row);
  return row;
}
