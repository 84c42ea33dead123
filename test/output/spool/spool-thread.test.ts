/**
 * The spool on its own thread (src/output/spool/spool-thread.ts, worker.ts) following a results.ndjson as
 * it grows: the files assembled from it equal those rebuilt from the journal alone; a spool that fails
 * gives nothing, and the journal alone still gives the files.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ColumnUnion, type StageColumns } from '../../../src/output/journal/columns.js';
import { AppendFile } from '@bre-batch/formats/ndjson-file';
import { assembleResultFiles } from '../../../src/output/spool/assemble.js';
import { SpoolThread } from '../../../src/output/spool/spool-thread.js';
import { unframe } from '../../../src/output/spool/records.js';
import { spoolFile } from '../../../src/output/spool/spool.js';
import { waitFor } from '../../helpers/wait.js';
import { BreError } from '@bre-batch/core/errors';
import { expectMatchesJournal } from '../parquet-reader.js';
import { tempDir } from '../../helpers/temp.js';

const STAGES: StageColumns[] = [{ id: 'wf', known: ['decision', 'amount'] }];

function line(row: number): { row: number; key: string; stages: Record<string, Record<string, unknown>> } {
  const wf: Record<string, unknown> = {
    decision: row % 2 ? 'Approve' : 'Reject',
    amount: row % 3 ? row * 10 : null,
    note: `r,"${row}"`,
  };
  // A column that appears late and one whose type widens: the spool starts new segments there.
  if (row > 700) wf.late = row;
  wf.widening = row > 1500 ? row + 0.5 : row;
  return { row, key: `K${row}`, stages: { wf } };
}

/** A folder whose results.ndjson holds rows 1..earlier, and the union of those rows. */
function folder(earlier: number): { dir: string; ndjson: string; union: ColumnUnion } {
  const dir = tempDir('bre-spool-');
  mkdirSync(join(dir, '.state'));
  const ndjson = join(dir, 'results.ndjson');
  const union = new ColumnUnion();
  const f = new AppendFile(ndjson);
  for (let r = 1; r <= earlier; r += 1) {
    union.observe(line(r).stages);
    f.append(JSON.stringify(line(r)));
  }
  f.close();
  return { dir, ndjson, union };
}

/** The spool's thread over the folder's results.ndjson, from byte `start`, writing both files. */
function spoolOn(
  f: { dir: string; ndjson: string; union: ColumnUnion },
  start: number,
  more: { id?: string; chunkRows?: number } = {},
): SpoolThread {
  return new SpoolThread({
    stateDir: join(f.dir, '.state'),
    csv: true,
    parquet: true,
    stages: STAGES,
    union: f.union,
    resultsPath: f.ndjson,
    start,
    ...more,
  });
}

describe('the spool on its own thread', () => {
  it("writes the rows below the run's floor while the run goes: chunks recorded before the end, one segment", async () => {
    const f = folder(0);
    const { ndjson, union } = f;
    const file = new AppendFile(ndjson);
    const stateDir = join(f.dir, '.state');
    const spool = spoolOn(f, file.bytes, { id: 'floor', chunkRows: 100 });
    // Rows end in swapped pairs (2 before 1): the floor is the row after the last whole pair.
    let floor = 1;
    file.onWrite = (bytes) => spool.notify(bytes, floor);
    const rows = 600;
    for (let r = 1; r <= rows; r += 2) {
      for (const row of [r + 1, r]) {
        union.observe(line(row).stages);
        file.append(JSON.stringify(line(row)));
      }
      floor = r + 2;
      if (r % 10 === 9) file.flush();
    }
    file.flush();
    // Fewer rows than the reorder buffer holds (4,096): without the floor none would be written before the end.
    const chunks = () => {
      const path = join(stateDir, spoolFile('floor', 'records'));
      if (!existsSync(path)) return 0;
      return unframe(readFileSync(path)).records.filter((x) => x.t === 'chunk').length;
    };
    await waitFor(async () => chunks() >= rows / 100, 10_000, 'the spool recording every chunk before the end');
    file.close();
    const contents = await spool.finish(file.bytes);
    expect(spool.failure).toBeUndefined();
    expect(contents!.segments.map((x) => [x.rows, x.firstRow, x.lastRow])).toEqual([[rows, 1, rows]]);
  });

  it.each([0, 250])(
    'follows results.ndjson as it grows (%i rows of an earlier session) and gives the files a rebuild gives',
    async (earlier) => {
      const f = folder(earlier);
      const { dir, ndjson, union } = f;
      const file = new AppendFile(ndjson);
      const spool = spoolOn(f, file.bytes);
      file.onWrite = (bytes) => spool.notify(bytes);
      for (let r = earlier + 1; r <= 2000; r += 1) {
        union.observe(line(r).stages);
        file.append(JSON.stringify(line(r)));
        // Writes of a few lines, as event-loop turns of a run make them.
        if (r % 7 === 0) file.flush();
      }
      file.close();
      const contents = await spool.finish(file.bytes);
      expect(spool.failure).toBeUndefined();
      expect(contents!.segments.reduce((n, s) => n + s.rows, 0)).toBe(2000 - earlier);
      const visited: number[] = [];
      const files = { csv: join(dir, 'results.csv'), parquet: join(dir, 'results.parquet') };
      const done = await assembleResultFiles({
        resultsPath: ndjson,
        size: file.bytes,
        files,
        columns: union.columns(STAGES),
        spool: contents,
        visit: (l) => visited.push(l.row),
      });
      expect(done.rows).toBe(2000);
      expect(visited).toHaveLength(earlier);
      const alone = { csv: join(dir, 'alone.csv'), parquet: join(dir, 'alone.parquet') };
      await assembleResultFiles({
        resultsPath: ndjson,
        size: file.bytes,
        files: alone,
        columns: union.columns(STAGES),
      });
      expect(readFileSync(files.csv, 'utf8')).toBe(readFileSync(alone.csv, 'utf8'));
      await expectMatchesJournal(files.parquet, ndjson, readFileSync(files.csv, 'utf8').split('\n')[0].split(','));
    },
  );

  it('a spool that cannot write gives nothing and says why; the journal alone still gives the files', async () => {
    const { dir, ndjson, union } = folder(10);
    const spool = new SpoolThread({
      stateDir: join(dir, 'no-such-folder'),
      csv: true,
      parquet: true,
      stages: STAGES,
      union,
      resultsPath: ndjson,
      start: 0,
    });
    spool.notify(readFileSync(ndjson).length);
    expect(await spool.finish(readFileSync(ndjson).length)).toBeUndefined();
    expect(spool.failure).toMatch(/ENOENT/);
    const files = { csv: join(dir, 'results.csv') };
    expect(
      (
        await assembleResultFiles({
          resultsPath: ndjson,
          size: readFileSync(ndjson).length,
          files,
          columns: union.columns(STAGES),
        })
      ).rows,
    ).toBe(10);
  });

  it('a spool that fails while the run goes tells onFailure at once, as the BreError it met (DISK_FULL stops a run: issue 24)', async () => {
    const { dir, ndjson, union } = folder(10);
    const spool = new SpoolThread({
      stateDir: join(dir, 'no-such-folder'),
      csv: true,
      parquet: true,
      stages: STAGES,
      union,
      resultsPath: ndjson,
      start: 0,
    });
    const told = await new Promise<BreError>((resolve) => {
      spool.onFailure = resolve;
      spool.notify(readFileSync(ndjson).length);
    });
    expect(told).toBeInstanceOf(BreError);
    expect(told.code).toBe('OUTPUT_UNWRITABLE');
    expect(told.message).toMatch(new RegExp(`^cannot write to the output folder ${dir}: ENOENT`));
    expect(await spool.finish(readFileSync(ndjson).length)).toBeUndefined();
  });
});
