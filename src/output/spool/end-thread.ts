/**
 * The end's rebuild (./rebuild.ts rebuildOutputs: the journal read, sorted and encoded where a resumed run's
 * sessions meet, the results files completed, errors.parquet, the transactions files) on a thread of its own
 * (./end-worker.ts), with the spool's heap limit (./thread.ts SPOOL_RESOURCE_LIMITS). On the run's thread the
 * heap has the process's default limit, under which V8 lets the old generation grow to 4 times what was alive
 * before it collects: the sort's garbage made a resumed end's peak RSS grow with the rows (docs/performance.md,
 * "The end of a resumed run"). Only options cross between the threads (paths, the column union, what the spool
 * holds: a few entries per row group), and back the counts; no row does. The run's thread waits, so the end
 * takes no longer.
 */
import type { Worker } from 'node:worker_threads';
import { startScriptWorker, workerScript } from '../worker-thread.js';
import { BreError, internalError, type BreErrorJSON } from '../../errors.js';
import type { ColumnChange, ColumnUnion } from '../journal/columns.js';
import type { DecisionCounter } from '../../stages/index.js';
import type { RebuildOptions, RebuildResult } from './rebuild.js';
import { SPOOL_RESOURCE_LIMITS } from './thread.js';

/** What the thread starts with: the rebuild's options as plain data. */
export interface EndWorkerData extends Omit<RebuildOptions, 'union' | 'visitResult' | 'tally' | 'visitError'> {
  readonly union?: readonly ColumnChange[];
  /**
   * The run's decision stages and its counts so far: the thread counts the earlier sessions' rows into them
   * (their lines, or the index of the files an earlier end wrote) and sends the counts back.
   */
  readonly decisions?: {
    readonly stages: readonly { readonly id: string; readonly kind: string }[];
    readonly counts: ReturnType<DecisionCounter['save']>;
  };
}

/**
 * An error as it crosses: a BreError as its toJSON, any other as the fields the run's end reads (a full disk's
 * code and path: app/run.ts asDiskFull), with the system error under a BreError kept the same way.
 */
interface SystemErrorJSON {
  readonly name: string;
  readonly message: string;
  readonly stack?: string;
  readonly code?: unknown;
  readonly errno?: unknown;
  readonly syscall?: unknown;
  readonly path?: unknown;
}
export type EndErrorJSON = { readonly bre: BreErrorJSON; readonly cause?: SystemErrorJSON } | SystemErrorJSON;

export type FromEnd =
  | { readonly type: 'done'; readonly result: RebuildResult; readonly counts?: ReturnType<DecisionCounter['save']> }
  | { readonly type: 'failed'; readonly error: EndErrorJSON };

function systemJSON(err: unknown): SystemErrorJSON {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const e = err as Error & Record<string, unknown>;
  return {
    name: e.name,
    message: e.message,
    stack: e.stack,
    code: e.code,
    errno: e.errno,
    syscall: e.syscall,
    path: e.path,
  };
}

/** The first error with a system code under `err` (its causes), if any. */
function systemCause(err: unknown): unknown {
  for (let e = err, depth = 0; e !== null && typeof e === 'object' && depth < 8; depth += 1) {
    if (typeof (e as { code?: unknown }).code === 'string' && !(e instanceof BreError)) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** `err` as plain data, on the end's thread. */
export function endErrorJSON(err: unknown): EndErrorJSON {
  if (!(err instanceof BreError)) return systemJSON(err);
  const cause = systemCause(err);
  return { bre: err.toJSON(), ...(cause === undefined ? {} : { cause: systemJSON(cause) }) };
}

function fromSystemJSON(j: SystemErrorJSON): Error {
  const e = Object.assign(new Error(j.message), j.code === undefined ? {} : { code: j.code });
  e.name = j.name;
  if (j.stack !== undefined) e.stack = j.stack;
  for (const k of ['errno', 'syscall', 'path'] as const) if (j[k] !== undefined) Object.assign(e, { [k]: j[k] });
  return e;
}

/** The error endErrorJSON carried, on the run's thread. */
export function endErrorFromJSON(j: EndErrorJSON): Error {
  if (!('bre' in j)) return fromSystemJSON(j);
  return BreError.fromJSON(j.bre, j.cause === undefined ? undefined : fromSystemJSON(j.cause));
}

export interface EndOnThreadOptions extends Omit<RebuildOptions, 'union' | 'visitResult' | 'tally' | 'visitError'> {
  readonly union?: ColumnUnion;
  /** Counts the earlier sessions' rows (rebuildOutputs' visitResult and tally): updated when the end is done. */
  readonly decisions?: DecisionCounter;
}

/**
 * rebuildOutputs on the end's thread: its result, or its failure thrown here as the rebuild would have thrown
 * it (a crash of the thread, its heap run out included, is INTERNAL).
 */
export async function rebuildOnThread(o: EndOnThreadOptions): Promise<RebuildResult> {
  const { union, decisions, ...rest } = o;
  const data: EndWorkerData = {
    ...rest,
    ...(union ? { union: [...union.entries()] } : {}),
    ...(decisions ? { decisions: { stages: decisions.stages, counts: decisions.save() } } : {}),
  };
  const worker: Worker = startScriptWorker(workerScript('end'), data, SPOOL_RESOURCE_LIMITS);
  try {
    const m = await new Promise<FromEnd>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', (err) => reject(internalError(err, "in the end's thread")));
      worker.once('exit', (code) =>
        reject(internalError(new Error(`the thread exited (${code}) before it was done`), "in the end's thread")),
      );
    });
    if (m.type === 'failed') throw endErrorFromJSON(m.error);
    if (m.counts) decisions?.replace(m.counts);
    return m.result;
  } finally {
    await worker.terminate();
  }
}
