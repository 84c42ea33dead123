/**
 * The results files of an earlier end used again by the next (issue 31, src/output/spool/results-index.ts):
 * a run stopped and resumed encodes only the chunks where the sessions meet; its files equal those made
 * from the journal alone, and its counts (the tally) those of every row. The index is used only while it
 * still describes the folder: a results file changed, the journal's bytes changed, other columns, a
 * missing index all fall back to the journal, with the same files.
 */
import { appendFileSync, mkdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ColumnUnion, type StageColumns } from '../../../src/output/journal/columns.js';
import { assembleResultFiles } from '../../../src/output/spool/assemble.js';
import { ResultSpool, type ResultLine } from '../../../src/output/spool/spool.js';
import { expectMatchesJournal, readParquet } from '../parquet-reader.js';
import { tempDir } from '../../helpers/temp.js';
import { assembleCounted, Counts } from '../../helpers/tally.js';
import { arrival } from '../../helpers/arrival.js';

const STAGES: StageColumns[] = [{ id: 'wf', known: ['decision', 'amount'] }];
/**
 * Chunks of 1,000 rows and a reorder buffer of 400 (a tenth of a run's): the same boundaries crossed by a
 * tenth of the rows.
 */
const CHUNK_ROWS = 1_000;
const REORDER_ROWS = 400;

/** A line as session `session` of the run writes it (its run and session after the key). */
function line(row: number, extra = false, session = 1): ResultLine {
  const wf: Record<string, unknown> = {
    decision: row % 3 ? 'Approve' : 'Reject',
    amount: row % 4 ? row * 10 : null,
    note: `r,"${row}"\nnext`,
  };
  if (extra) wf.extra = row;
  return { row, key: `K${row}`, run_id: RUN, run_session: session, stages: { wf } };
}

const RUN = '0f1e2d3c-4b5a-4697-8877-665544332211';
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

/** An output folder whose sessions append to results.ndjson, each spooled, each ending as a run does. */
class Folder {
  readonly dir = tempDir('bre-index-');
  readonly ndjson = join(this.dir, 'results.ndjson');
  readonly files = { csv: join(this.dir, 'results.csv'), parquet: join(this.dir, 'results.parquet') };
  readonly index = join(this.dir, '.state', 'results-index.bin');
  readonly union = new ColumnUnion();
  size = 0;
  /** Sessions so far: each writes its lines with its own number. */
  sessions = 0;

  constructor() {
    mkdirSync(join(this.dir, '.state'));
    writeFileSync(this.ndjson, '');
  }

  /** A session: its lines appended and spooled, then its end; returns the end's figures and counts. */
  async session(rows: readonly number[], o: { extra?: boolean; index?: boolean } = {}) {
    const start = this.size;
    this.sessions += 1;
    const copy = new ColumnUnion();
    for (const e of this.union.entries()) copy.add(e.stage, e.field, e.types);
    const spool = new ResultSpool({
      stateDir: join(this.dir, '.state'),
      csv: true,
      parquet: true,
      stages: STAGES,
      union: copy,
      chunkRows: CHUNK_ROWS,
      reorderRows: REORDER_ROWS,
    });
    const counts = new Counts();
    let text = '';
    for (const r of rows) {
      const l = line(r, o.extra, this.sessions);
      const t = `${JSON.stringify(l)}\n`;
      this.union.observe(l.stages);
      spool.add(l, this.size, this.size + Buffer.byteLength(t));
      this.size += Buffer.byteLength(t);
      text += t;
      counts.add(l.stages);
    }
    appendFileSync(this.ndjson, text);
    const done = await assembleCounted(
      {
        resultsPath: this.ndjson,
        size: this.size,
        files: this.files,
        columns: this.union.columns(STAGES),
        spool: spool.finish(this.size),
        visitBefore: start,
        // As rebuildOutputs calls it: the index's path always, a tally from a run only.
        indexPath: this.index,
        chunkRows: CHUNK_ROWS,
        ...(o.index === false ? {} : { tally: counts }),
      },
      counts,
    );
    ResultSpool.clean(join(this.dir, '.state'));
    return { ...done, counts: counts.counts };
  }

  /** The files made from the journal alone, beside. */
  async alone(): Promise<{ csv: string; counts: Record<string, number> }> {
    const counts = new Counts();
    const csv = join(this.dir, 'alone.csv');
    await assembleResultFiles({
      resultsPath: this.ndjson,
      size: this.size,
      files: { csv },
      columns: this.union.columns(STAGES),
      visit: (l) => counts.add(l.stages),
    });
    return { csv: readFileSync(csv, 'utf8'), counts: counts.counts };
  }

  /** Returns results.parquet as read. */
  async check(rows: number): Promise<Awaited<ReturnType<typeof readParquet>>> {
    const alone = await this.alone();
    expect(readFileSync(this.files.csv, 'utf8')).toBe(alone.csv);
    const t = await readParquet(this.files.parquet);
    expect(t.rows.map((r) => Number(r.row))).toEqual(range(1, rows));
    await expectMatchesJournal(this.files.parquet, this.ndjson, [...t.columns]);
    return t;
  }
}

/** The earlier session did rows 1..n but some of its last 40 (in flight at its stop). */
function stopped(n: number) {
  const inFlight = range(n - 39, n).filter((r) => r % 8 < 3);
  const done = arrival(
    range(1, n).filter((r) => !inFlight.includes(r)),
    64,
  );
  return { done, inFlight };
}

describe('the results files of an earlier end, used again', () => {
  it('a stopped run resumed: only the chunks where the sessions meet are encoded, the counts are every row', async () => {
    const f = new Folder();
    const a = stopped(2_500);
    const first = await f.session(a.done);
    expect(first.copied).toBe(first.rows);
    expect(statSync(f.index).size).toBeGreaterThan(0);
    const second = await f.session(arrival([...a.inFlight, ...range(2_501, 3_800)], 64, 3));
    expect(second.rows).toBe(3_800);
    // The earlier end's chunks but its last (rows 2,001-2,500 and the rows done again inside it) copied,
    // and this session's but its first (those rows, then 2,501 on).
    expect(second.copied).toBe(2 * CHUNK_ROWS + (a.inFlight.length + 1_300 - CHUNK_ROWS));
    // No line of the earlier session was read to count it: the index's counts stand for them.
    expect(second.visited).toEqual([]);
    const alone = await f.alone();
    expect(second.counts).toEqual(alone.counts);
    const t = await f.check(3_800);
    // The rows of the chunks copied from the earlier end's files still say the session that wrote them.
    const sessions = t.rows.map((r) => Number(r.run_session));
    expect(sessions.slice(0, 2 * CHUNK_ROWS).every((s) => s === 1)).toBe(true);
    expect(sessions.slice(2_500).every((s) => s === 2)).toBe(true);
    // And once more: the second end's index serves a third.
    const third = await f.session(range(3_801, 4_000));
    expect(third.copied).toBe(4_000);
    expect(third.counts).toEqual((await f.alone()).counts);
    await f.check(4_000);
  });

  it.each([
    {
      what: 'results.csv changed since (opened and saved in a spreadsheet)',
      spoil: (f: Folder) => appendFileSync(f.files.csv, '\n'),
    },
    {
      what: 'results.parquet touched since',
      spoil: (f: Folder) => utimesSync(f.files.parquet, new Date(), new Date(Date.now() - 60_000)),
    },
    { what: 'no index (the earlier session was killed)', spoil: (f: Folder) => rmSync(f.index) },
    { what: 'an index that does not read', spoil: (f: Folder) => writeFileSync(f.index, 'not v8') },
    {
      what: "the journal's bytes it covers changed",
      spoil: (f: Folder) => {
        // The last line's key, one letter: the same length, other bytes.
        const text = readFileSync(f.ndjson, 'utf8');
        const at = text.lastIndexOf('"key":"K') + 7;
        writeFileSync(f.ndjson, `${text.slice(0, at)}k${text.slice(at + 1)}`);
      },
    },
  ])('not used when $what: the journal instead, the same files', async ({ spoil }) => {
    const f = new Folder();
    const a = stopped(1_200);
    await f.session(a.done);
    spoil(f);
    const second = await f.session(arrival([...a.inFlight, ...range(1_201, 2_500)], 64, 3));
    // Only this session's chunks past the meeting point: the earlier rows all read from the journal.
    expect(second.copied).toBeLessThanOrEqual(2_500 - 1_200);
    expect(second.visited.length).toBe(a.done.length);
    expect(second.counts).toEqual((await f.alone()).counts);
    await f.check(2_500);
  });

  it('not used when the columns changed (a field that appears in this session): the same files', async () => {
    const f = new Folder();
    const a = stopped(1_200);
    await f.session(a.done);
    const second = await f.session(arrival([...a.inFlight, ...range(1_201, 1_500)], 64, 3), { extra: true });
    expect(second.visited.length).toBe(a.done.length);
    expect(second.counts).toEqual((await f.alone()).counts);
    await f.check(1_500);
  });

  it('an end without a tally (merge) removes the index: the files it described are replaced', async () => {
    const f = new Folder();
    await f.session(range(1, 3000));
    expect(statSync(f.index).size).toBeGreaterThan(0);
    await f.session(range(3001, 4000), { index: false });
    expect(() => statSync(f.index)).toThrow();
  });
});
