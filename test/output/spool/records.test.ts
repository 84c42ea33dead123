/**
 * The spool's records (src/output/spool/records.ts): a session killed before its end leaves its chunks listed,
 * and the next end copies them as it copies an earlier end's files. The files equal those made from the
 * journal alone and the counts those of every row, whatever was torn or lost: a torn record, a spool file
 * whose bytes changed, a journal cut short are found and cost only the re-encode of those rows.
 */
import { appendFileSync, cpSync, mkdirSync, readFileSync, readdirSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ColumnUnion, type StageColumns } from '../../../src/output/journal/columns.js';
import { assembleResultFiles } from '../../../src/output/spool/assemble.js';
import {
  foldRecords,
  frame,
  recordedSpools,
  SpoolRecorder,
  unframe,
  type SpoolRecord,
} from '../../../src/output/spool/records.js';
import { ResultSpool, type ResultLine, type SpooledChunk } from '../../../src/output/spool/spool.js';
import { expectMatchesJournal, readParquet } from '../parquet-reader.js';
import { arrival } from '../../helpers/arrival.js';
import { tempDir } from '../../helpers/temp.js';
import { assembleCounted, Counts } from '../../helpers/tally.js';

const STAGES: StageColumns[] = [{ id: 'wf', known: ['decision', 'amount'] }];
/**
 * Chunks of 1,000 rows and a reorder buffer of 400 (a tenth of a run's): the same boundaries crossed by a
 * tenth of the rows.
 */
const CHUNK_ROWS = 1_000;
const REORDER_ROWS = 400;
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

/** A line as session `session` writes it (the run's id and its number after the key). */
function line(row: number, session = 1): ResultLine {
  return {
    row,
    key: `K${row}`,
    run_id: 'a1b2c3d4-0000-4000-8000-000000000001',
    run_session: session,
    stages: { wf: { decision: row % 3 ? 'Approve' : 'Reject', amount: row % 4 ? row * 10 : null, note: `r,"${row}"` } },
  };
}

class Folder {
  readonly dir = tempDir('bre-records-');
  readonly state = join(this.dir, '.state');
  readonly ndjson = join(this.dir, 'results.ndjson');
  readonly files = { csv: join(this.dir, 'results.csv'), parquet: join(this.dir, 'results.parquet') };
  readonly union = new ColumnUnion();
  size = 0;
  /** Sessions so far (each spooled call is one): its lines carry its number. */
  sessions = 0;

  /** `from`: a copy of that folder (its journal, its spools' files), to end in its own way. */
  constructor(from?: Folder) {
    if (!from) {
      mkdirSync(this.state);
      writeFileSync(this.ndjson, '');
      return;
    }
    cpSync(from.dir, this.dir, { recursive: true });
    this.size = from.size;
    this.sessions = from.sessions;
    for (const e of from.union.entries()) this.union.add(e.stage, e.field, e.types);
  }

  /** A session's lines appended and spooled with its records, as its thread does; returns its spool. */
  spooled(id: string, rows: readonly number[]): ResultSpool {
    const copy = new ColumnUnion();
    for (const e of this.union.entries()) copy.add(e.stage, e.field, e.types);
    const spool = new ResultSpool(
      {
        stateDir: this.state,
        csv: true,
        parquet: true,
        stages: STAGES,
        union: copy,
        id,
        recorder: new SpoolRecorder(this.state, id, this.ndjson, this.size),
        tally: () => new Counts(),
        chunkRows: CHUNK_ROWS,
        reorderRows: REORDER_ROWS,
      },
      this.size,
    );
    this.sessions += 1;
    const session = this.sessions;
    const lines = rows.map((r) => line(r, session));
    const texts = lines.map((l) => `${JSON.stringify(l)}\n`);
    // Written before the spool reads them, as in a run (its records hash the journal's bytes).
    appendFileSync(this.ndjson, texts.join(''));
    lines.forEach((l, i) => {
      this.union.observe(l.stages);
      const bytes = Buffer.byteLength(texts[i]);
      spool.add(l, this.size, this.size + bytes);
      this.size += bytes;
    });
    return spool;
  }

  /** The end of a session that resumed after the killed ones, its rows spooled; visits and counts as a run's. */
  async end(id: string, rows: readonly number[]) {
    const start = this.size;
    const spool = this.spooled(id, rows);
    const counts = new Counts();
    for (const r of rows) counts.add(line(r).stages);
    const recorded = recordedSpools(this.state, { journal: this.ndjson, cut: start, except: id });
    const done = await assembleCounted(
      {
        resultsPath: this.ndjson,
        size: this.size,
        files: this.files,
        columns: this.union.columns(STAGES),
        spool: spool.finish(this.size),
        visitBefore: start,
        tally: counts,
        recorded: recorded.segments,
        chunkRows: CHUNK_ROWS,
      },
      counts,
    );
    ResultSpool.clean(this.state);
    return { ...done, rejected: recorded.rejected, counts: counts.counts };
  }

  /** `parquet`: its values checked against the journal too (else its rows' order only). */
  async check(rows: number, counts: Record<string, number>, parquet = true): Promise<void> {
    const alone = new Counts();
    const csv = join(this.dir, 'alone.csv');
    await assembleResultFiles({
      resultsPath: this.ndjson,
      size: this.size,
      files: { csv },
      columns: this.union.columns(STAGES),
      visit: (l) => alone.add(l.stages),
    });
    expect(readFileSync(this.files.csv, 'utf8')).toBe(readFileSync(csv, 'utf8'));
    expect(counts).toEqual(alone.counts);
    const t = await readParquet(this.files.parquet);
    expect(t.rows.map((r) => Number(r.row))).toEqual(range(1, rows));
    if (parquet) await expectMatchesJournal(this.files.parquet, this.ndjson, [...t.columns]);
  }
}

/** The killed session did rows 1..n but some of its last 40 (in flight at the kill). */
function killedAt(n: number) {
  const inFlight = range(n - 39, n).filter((r) => r % 8 < 3);
  return {
    done: arrival(
      range(1, n).filter((r) => !inFlight.includes(r)),
      64,
    ),
    inFlight,
  };
}

describe('the end after a kill -9 uses the killed session spool', () => {
  const a = killedAt(2_500);
  // Killed: its spool never finished; only what its records list survives. Each test ends a copy of it.
  let killed: Folder;
  beforeAll(() => {
    killed = new Folder();
    killed.spooled('aaaa', a.done);
  });

  it('copies its recorded chunks: the same files and counts as from the journal, its rows barely read', async () => {
    const f = new Folder(killed);
    const end = await f.end('bbbb', arrival([...a.inFlight, ...range(2_501, 2_700)], 64, 3));
    expect(end.rejected).toBe(0);
    // Its two chunks written before the kill (the reorder buffer held its last 400 rows) copied; this
    // session's chunk is where its rows redone meet the killed session's last ones: encoded.
    expect(end.copied).toBe(2 * CHUNK_ROWS);
    // Only the lines outside its copied chunks read to be counted.
    expect(end.visited.length).toBe(a.done.length - 2 * CHUNK_ROWS);
    await f.check(2_700, end.counts);
  });

  it('two killed sessions, then an end: both used', async () => {
    const f = new Folder();
    f.spooled('aaaa', arrival(range(1, 1_500), 64));
    f.spooled('bbbb', arrival(range(1_501, 3_000), 64, 2));
    const end = await f.end('cccc', range(3_001, 3_050));
    // A chunk of each killed session (the rest was held in its reorder buffer), and this session's rows.
    expect(end.copied).toBe(2 * CHUNK_ROWS + 50);
    await f.check(3_050, end.counts);
  });

  it.each([
    {
      what: 'a torn last record (the power went mid-write)',
      spoil: (f: Folder) => {
        const p = join(f.state, 'spool-aaaa.records');
        truncateSync(p, readFileSync(p).length - 10);
      },
      copied: CHUNK_ROWS,
    },
    {
      what: "a spool CSV's bytes that never reached the disk (zeros)",
      spoil: (f: Folder) => {
        const p = join(f.state, 'spool-aaaa-0.csv');
        const b = readFileSync(p);
        b.fill(0, 100, 200);
        writeFileSync(p, b);
      },
      copied: 0,
    },
    {
      what: 'a spool body cut short',
      spoil: (f: Folder) => truncateSync(join(f.state, 'spool-aaaa.body'), 4096),
      copied: 0,
    },
    {
      what: 'a journal cut short and written again',
      spoil: (f: Folder) => {
        const text = readFileSync(f.ndjson, 'utf8');
        const at = text.indexOf('\n', text.length >> 1) + 1;
        writeFileSync(f.ndjson, `${text.slice(0, at)}${text.slice(at).replace(/"K/g, '"k')}`);
      },
      copied: CHUNK_ROWS,
    },
  ])('$what: detected, those rows encoded from the journal, the same files', async ({ spoil, copied }) => {
    const f = new Folder(killed);
    spoil(f);
    const end = await f.end('bbbb', arrival([...a.inFlight, ...range(2_501, 2_600)], 64, 3));
    expect(end.rejected).toBeGreaterThanOrEqual(1);
    // Of its two chunks, those before what was spoiled.
    expect(end.copied).toBe(copied);
    await f.check(2_600, end.counts, false);
    expect(readdirSync(f.state).filter((n) => n.startsWith('spool-'))).toEqual([]);
  });
});

describe('records, framed and folded', () => {
  const chunk = (firstRow: number, lastRow: number): SpooledChunk => ({
    rows: lastRow - firstRow + 1,
    firstRow,
    lastRow,
    from: firstRow * 10,
    to: lastRow * 10 + 10,
    csvStart: 0,
    csvEnd: 0,
  });
  const open = (seg: number, start: number, more: object = {}): SpoolRecord => ({
    t: 'open',
    seg,
    start,
    names: 'a',
    kinds: 'string',
    ...more,
  });
  const rec = (seg: number, firstRow: number, lastRow: number, lo: number): SpoolRecord => ({
    t: 'chunk',
    seg,
    chunk: chunk(firstRow, lastRow),
    lo,
    trailing: [lastRow, lo + 5],
    tail: 'x',
  });

  it('a frame torn or changed ends the records there', () => {
    const whole = Buffer.concat([frame(open(0, 0)), frame(rec(0, 1, 10, 100)), frame(rec(0, 11, 20, 200))]);
    expect(unframe(whole)).toMatchObject({ torn: false, records: [{ t: 'open' }, { t: 'chunk' }, { t: 'chunk' }] });
    expect(unframe(whole.subarray(0, whole.length - 3))).toMatchObject({ torn: true, records: [{}, {}] });
    const changed = Buffer.from(whole);
    changed[changed.length - 5] ^= 0xff;
    expect(unframe(changed).records).toHaveLength(2);
    expect(unframe(changed).torn).toBe(true);
  });

  it.each([
    {
      what: 'every record holds: the segment ends where the last chunk says',
      records: [open(0, 0), rec(0, 1, 10, 100), rec(0, 11, 20, 180)],
      refuse: [] as number[],
      want: { end: 180, chunks: 2, rejected: 0 },
    },
    {
      what: 'a closed segment ends where it closed',
      records: [open(0, 0), rec(0, 1, 10, 100), { t: 'close', seg: 0, end: 150, tail: 'x' } as SpoolRecord],
      refuse: [],
      want: { end: 150, chunks: 1, rejected: 0 },
    },
    {
      what: 'the second chunk refused: the segment stops before it, later records of it ignored',
      records: [open(0, 0), rec(0, 1, 10, 100), rec(0, 11, 20, 200), rec(0, 21, 30, 300)],
      refuse: [2],
      want: { end: 100, chunks: 1, rejected: 1 },
    },
    {
      what: 'rows carried in from the segment before but not in its chunks: no chunk used',
      records: [open(0, 0, { carried: [25], carriedFrom: 5 }), rec(0, 1, 10, 100)],
      refuse: [],
      want: { end: 100, chunks: 0, rejected: 0 },
    },
  ])('$what', ({ records, refuse, want }) => {
    let n = 0;
    const folded = foldRecords(records, () => !refuse.includes(++n));
    expect(folded.rejected).toBe(want.rejected);
    expect(folded.segments[0].end).toBe(want.end);
    expect(folded.segments[0].chunks).toHaveLength(want.chunks);
    // The rows past its end are those its last record used says.
    const last = folded.segments[0].chunks.at(-1);
    if (want.end === 150 || !last) expect(folded.segments[0].trailing).toEqual([]);
    else expect(folded.segments[0].trailing).toEqual([last.lastRow, want.end + 5]);
  });
});
