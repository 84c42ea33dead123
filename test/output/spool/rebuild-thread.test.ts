/**
 * The rebuild on its own thread (src/output/spool/rebuild-thread.ts, rebuild-worker.ts): the same files and
 * counts as rebuildOutputs on the caller's thread, the earlier sessions' decisions counted into the run's,
 * and a failure thrown as the rebuild throws it (a system error's code and path, which app/execute-run.ts reads for a
 * full disk; a BreError's code and the system error under it: test/errors.test.ts). These folders are small: the
 * thread is asked for (threadFromBytes 0); by default a small folder's rebuild stays on the caller's thread, with
 * the same files and counts.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ColumnUnion, type StageColumns } from '../../../src/output/journal/columns.js';
import {
  REBUILD_THREAD_FROM_BYTES,
  rebuildOnThread,
  rebuildsOnThread,
} from '../../../src/output/spool/rebuild-thread.js';
import { rebuildOutputs } from '../../../src/output/spool/rebuild.js';
import { DecisionCounter } from '../../../src/stages/index.js';
import { tempDir } from '../../helpers/temp.js';

const STAGES: StageColumns[] = [{ id: 'wf', known: ['decision', 'amount'] }];
const formats = new Set(['csv', 'parquet'] as const);

/** A folder of `rows` results, in reverse row order, and its column union. */
function folder(rows: number): { dir: string; union: ColumnUnion; size: number } {
  const dir = tempDir('bre-end-');
  const union = new ColumnUnion();
  let text = '';
  for (let r = rows; r >= 1; r -= 1) {
    const stages = { wf: { decision: r % 3 ? 'Approve' : 'Reject', amount: r * 10 } };
    union.observe(stages);
    text += `${JSON.stringify({ row: r, key: `K${r}`, stages })}\n`;
  }
  writeFileSync(join(dir, 'results.ndjson'), text);
  writeFileSync(join(dir, 'errors.ndjson'), '');
  return { dir, union, size: Buffer.byteLength(text) };
}

describe('the rebuild on its own thread', () => {
  it('writes the files rebuildOutputs writes and counts the earlier rows into the run’s decisions', async () => {
    const a = folder(300);
    const b = folder(300);
    const onCaller = await rebuildOutputs({ dir: a.dir, stages: STAGES, union: a.union, formats });
    const decisions = new DecisionCounter([{ id: 'wf', kind: 'workflow' }]);
    // This session's rows, counted as they were written: kept, and the earlier ones added.
    decisions.add({ wf: { decision: 'Approve' } });
    const onThread = await rebuildOnThread({
      dir: b.dir,
      stages: STAGES,
      union: b.union,
      formats,
      visitResultsBefore: b.size,
      decisions,
      threadFromBytes: 0,
    });
    expect(onThread).toEqual(onCaller);
    expect(onThread.results.rows).toBe(300);
    expect(readFileSync(join(b.dir, 'results.csv'), 'utf8')).toBe(readFileSync(join(a.dir, 'results.csv'), 'utf8'));
    expect(decisions.counts).toEqual({ wf: { Approve: 201, Reject: 100 } });
  });

  it('throws a system error with its code and path, as the rebuild on the caller’s thread does', async () => {
    const missing = join(tempDir('bre-end-'), 'gone');
    const direct = await rebuildOutputs({ dir: missing, stages: STAGES, union: new ColumnUnion(), formats }).then(
      () => undefined,
      (e: unknown) => e as NodeJS.ErrnoException,
    );
    const threaded = await rebuildOnThread({
      dir: missing,
      stages: STAGES,
      union: new ColumnUnion(),
      formats,
      threadFromBytes: 0,
    }).then(
      () => undefined,
      (e: unknown) => e as NodeJS.ErrnoException,
    );
    expect(direct?.code).toBe('ENOENT');
    expect(threaded).toBeInstanceOf(Error);
    expect({ code: threaded?.code, path: threaded?.path, message: threaded?.message }).toEqual({
      code: direct?.code,
      path: direct?.path,
      message: direct?.message,
    });
  });

  it('stays on the caller’s thread for a small folder, with the same files and counts, and the union untouched', async () => {
    const a = folder(300);
    const b = folder(300);
    expect(rebuildsOnThread({ dir: b.dir, stages: STAGES, formats })).toBe(false);
    expect(rebuildsOnThread({ dir: b.dir, stages: STAGES, formats, threadFromBytes: b.size })).toBe(true);
    expect(b.size).toBeLessThan(REBUILD_THREAD_FROM_BYTES);
    const onThread = await rebuildOnThread({ dir: a.dir, stages: STAGES, union: a.union, formats, threadFromBytes: 0 });
    const decisions = new DecisionCounter([{ id: 'wf', kind: 'workflow' }]);
    decisions.add({ wf: { decision: 'Approve' } });
    const columns = [...b.union.entries()];
    const here = await rebuildOnThread({
      dir: b.dir,
      stages: STAGES,
      union: b.union,
      formats,
      visitResultsBefore: b.size,
      decisions,
    });
    expect(here).toEqual(onThread);
    expect(readFileSync(join(b.dir, 'results.csv'), 'utf8')).toBe(readFileSync(join(a.dir, 'results.csv'), 'utf8'));
    expect(decisions.counts).toEqual({ wf: { Approve: 201, Reject: 100 } });
    expect([...b.union.entries()]).toEqual(columns);
  });

  it('on the caller’s thread, a failure is the rebuild’s own and leaves the decisions as they were', async () => {
    const missing = join(tempDir('bre-end-'), 'gone');
    const decisions = new DecisionCounter([{ id: 'wf', kind: 'workflow' }]);
    decisions.add({ wf: { decision: 'Approve' } });
    const failed = await rebuildOnThread({ dir: missing, stages: STAGES, formats, decisions }).then(
      () => undefined,
      (e: unknown) => e as NodeJS.ErrnoException,
    );
    expect(failed?.code).toBe('ENOENT');
    expect(decisions.counts).toEqual({ wf: { Approve: 1 } });
  });
});
