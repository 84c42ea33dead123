/**
 * The rebuild at a run's end (./rebuild.ts rebuildOutputs: the journal read, sorted and encoded where a resumed
 * run's sessions meet, the results files completed, errors.parquet, the transactions files) on a thread of its
 * own (./rebuild-worker.ts), with the spool's heap limit (why: docs/decisions/work-off-the-run-thread.md). Only
 * options cross between the threads, and back the counts; no row does. The run's thread waits for it.
 * A small folder's is done on the run's thread: a thread's start-up (Node's, and the bundle's chunks compiled
 * again) costs more than its few rows, and they need no heap of their own.
 */
import { FILES } from '@bre-batch/formats';
import { journalSize } from '@bre-batch/formats/journal-file';
import { join } from 'node:path';
import { WorkerThread } from '../worker-thread.js';
import { ColumnUnion, type ColumnChange } from '../journal/columns.js';
import { DecisionCounter } from '../../stages/index.js';
import { rebuildOutputs, type RebuildOptions, type RebuildResult } from './rebuild.js';
import { SPOOL_RESOURCE_LIMITS } from './spool-thread.js';

/**
 * The journals' size (results, errors, transactions: what the rebuild reads) from which it goes on a thread: the
 * size from which a run spools its results on a thread (output/run-output.ts), a few hundred rows.
 */
export const REBUILD_THREAD_FROM_BYTES = 256 * 1024;

/** What the thread starts with: the rebuild's options as plain data. */
export interface RebuildWorkerData extends Omit<RebuildOptions, 'union' | 'visitResult' | 'tally' | 'visitError'> {
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

/** Its failure (the thread's port) is the rebuild's, as it threw it: a system error keeps its code and path. */
export type FromRebuild = {
  readonly type: 'done';
  readonly result: RebuildResult;
  readonly counts?: ReturnType<DecisionCounter['save']>;
};

export interface RebuildOnThreadOptions extends Omit<RebuildOptions, 'union' | 'visitResult' | 'tally' | 'visitError'> {
  readonly union?: ColumnUnion;
  /** Counts the earlier sessions' rows (rebuildOutputs' visitResult and tally): updated when the end is done. */
  readonly decisions?: DecisionCounter;
  /** The journals' size from which the rebuild goes on a thread (default REBUILD_THREAD_FROM_BYTES; 0: always). */
  readonly threadFromBytes?: number;
}

/** Whether the rebuild of `o`'s folder goes on a thread: its journals hold REBUILD_THREAD_FROM_BYTES or more. */
export function rebuildsOnThread(o: RebuildOnThreadOptions): boolean {
  const from = o.threadFromBytes ?? REBUILD_THREAD_FROM_BYTES;
  if (from <= 0) return true;
  const journals = [join(o.dir, FILES.results), join(o.dir, FILES.errors), o.transactionsJournal];
  let bytes = 0;
  for (const path of journals) if (path !== undefined) bytes += journalSize(path);
  return bytes >= from;
}

/**
 * rebuildOutputs on the rebuild's thread (on the caller's for a small folder, rebuildsOnThread): its result, or
 * its failure thrown here as the rebuild would have thrown it (a crash of the thread, its heap run out included,
 * is INTERNAL). Either way the caller's union is left as it was and `decisions` is updated only when it is done.
 */
export async function rebuildOnThread(o: RebuildOnThreadOptions): Promise<RebuildResult> {
  if (!rebuildsOnThread(o)) return await rebuildHere(o);
  const { union, decisions, threadFromBytes: _, ...rest } = o;
  const data: RebuildWorkerData = {
    ...rest,
    ...(union ? { union: [...union.entries()] } : {}),
    ...(decisions ? { decisions: { stages: decisions.stages, counts: decisions.save() } } : {}),
  };
  const thread = new WorkerThread<never, FromRebuild>('rebuild', data, {
    where: "in the rebuild's thread",
    resourceLimits: SPOOL_RESOURCE_LIMITS,
  });
  try {
    const m = await thread.next((x) => x.type === 'done');
    if (m.counts) decisions?.replace(m.counts);
    return m.result;
  } finally {
    await thread.end();
  }
}

/** rebuildOutputs on this thread, with the copies the thread would have had of the union and the counts. */
async function rebuildHere(o: RebuildOnThreadOptions): Promise<RebuildResult> {
  const { union: given, decisions, threadFromBytes: _, ...rest } = o;
  let union: ColumnUnion | undefined;
  if (given) {
    union = new ColumnUnion();
    for (const c of given.entries()) union.add(c.stage, c.field, c.types);
  }
  const counts = decisions ? new DecisionCounter(decisions.stages) : undefined;
  counts?.restore(decisions!.save());
  const result = await rebuildOutputs({
    ...rest,
    ...(union ? { union } : {}),
    ...(counts ? { visitResult: (line) => counts.add(line.stages), tally: counts } : {}),
  });
  if (counts) decisions!.replace(counts.save());
  return result;
}
