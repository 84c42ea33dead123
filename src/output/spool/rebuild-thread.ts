/**
 * The rebuild at a run's end (./rebuild.ts rebuildOutputs: the journal read, sorted and encoded where a resumed
 * run's sessions meet, the results files completed, errors.parquet, the transactions files) on a thread of its
 * own (./rebuild-worker.ts), with the spool's heap limit (why: docs/decisions/work-off-the-run-thread.md). Only
 * options cross between the threads, and back the counts; no row does. The run's thread waits for it.
 */
import { WorkerThread } from '../worker-thread.js';
import type { ColumnChange, ColumnUnion } from '../journal/columns.js';
import type { DecisionCounter } from '../../stages/index.js';
import type { RebuildOptions, RebuildResult } from './rebuild.js';
import { SPOOL_RESOURCE_LIMITS } from './spool-thread.js';

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
}

/**
 * rebuildOutputs on the rebuild's thread: its result, or its failure thrown here as the rebuild would have thrown
 * it (a crash of the thread, its heap run out included, is INTERNAL).
 */
export async function rebuildOnThread(o: RebuildOnThreadOptions): Promise<RebuildResult> {
  const { union, decisions, ...rest } = o;
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
