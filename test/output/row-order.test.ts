/**
 * results.csv and results.parquet in row order however the answers arrived (issue 31): the spool's reorder
 * buffer writes a session's rows in order, a row later than REORDER_ROWS others and the rows of earlier
 * sessions are merged by row; the merge of sorted runs on disk (row-sort.ts) gives every line once, in order,
 * and removes its runs.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ColumnUnion, type StageColumns } from '../../src/output/journal/columns.js';
import { linesByRow } from '../../src/output/spool/row-sort.js';
import { assembleResultFiles } from '../../src/output/spool/assemble.js';
import { ResultSpool, type ResultLine } from '../../src/output/spool/spool.js';
import { expectMatchesJournal, readParquet } from './parquet-reader.js';
import { tempDir } from '../helpers/temp.js';
import { arrival } from '../helpers/arrival.js';

const STAGES: StageColumns[] = [{ id: 'wf', known: ['decision', 'amount'] }];
/**
 * The spool's chunks, reorder buffer and its bytes at a tenth of a run's (1,000 rows, 400 rows, 1 MB, given
 * to it as options): the same boundaries crossed by a tenth of the rows.
 */
const CHUNK_ROWS = 1_000;
const REORDER_ROWS = 400;
const REORDER_BYTES = 1024 * 1024;
const SIZES = { chunkRows: CHUNK_ROWS, reorderRows: REORDER_ROWS, reorderBytes: REORDER_BYTES };

/** A result line; a column appears from row `lateFrom` on (the spool starts a new segment there). */
function line(row: number, lateFrom = 500, pad = 0): ResultLine {
  const wf: Record<string, unknown> = {
    decision: row % 2 ? 'Approve' : 'Reject',
    amount: row % 3 ? row * 10 : null,
    note: `r,"${row}"\nnext${'x'.repeat(pad)}`,
  };
  if (row > lateFrom) wf.late = row;
  return { row, key: `K${row}`, stages: { wf } };
}

/**
 * A folder whose results.ndjson holds `earlier` (an earlier session) then `session` (this one, spooled in
 * process), and what the spool holds.
 */
function folder(earlier: readonly number[], session: readonly number[], pad = 0) {
  const dir = tempDir('bre-order-');
  const stateDir = join(dir, '.state');
  mkdirSync(stateDir);
  const ndjson = join(dir, 'results.ndjson');
  const union = new ColumnUnion();
  let text = '';
  for (const r of earlier) {
    union.observe(line(r).stages);
    text += `${JSON.stringify(line(r))}\n`;
  }
  const start = Buffer.byteLength(text);
  const spool = new ResultSpool({
    stateDir,
    csv: true,
    parquet: true,
    stages: STAGES,
    union: cloneUnion(union),
    ...SIZES,
  });
  let pos = start;
  for (const r of session) {
    union.observe(line(r, 500, pad).stages);
    const l = `${JSON.stringify(line(r, 500, pad))}\n`;
    spool.add(line(r, 500, pad), pos, pos + Buffer.byteLength(l));
    pos += Buffer.byteLength(l);
    text += l;
  }
  writeFileSync(ndjson, text);
  return { dir, ndjson, union, start, size: pos, contents: spool.finish(pos) };
}

function cloneUnion(u: ColumnUnion): ColumnUnion {
  const c = new ColumnUnion();
  for (const e of u.entries()) c.add(e.stage, e.field, e.types);
  return c;
}

/** The row numbers of a results.csv (its first column; records may span lines). */
async function csvRows(path: string): Promise<number[]> {
  const { parse } = await import('csv-parse/sync');
  return (parse(readFileSync(path, 'utf8'), { from_line: 2 }) as string[][]).map((r) => Number(r[0]));
}

/** The end over a folder made by `folder`: the spool's chunks, the earlier session's lines from the journal. */
function assembleFolder(
  f: ReturnType<typeof folder>,
  files: Parameters<typeof assembleResultFiles>[0]['files'],
  visit?: (l: ResultLine) => void,
) {
  return assembleResultFiles({
    resultsPath: f.ndjson,
    size: f.size,
    files,
    columns: f.union.columns(STAGES),
    spool: f.contents,
    visitBefore: f.start,
    chunkRows: CHUNK_ROWS,
    ...(visit ? { visit } : {}),
  });
}

const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

describe('results in row order', () => {
  it('a session whose answers finish out of order: the spool writes its rows in order, the end copies them', async () => {
    const f = folder([], arrival(range(1, 900), 30));
    // One segment per set of columns (`late` appears after row 500), each in row order, one after the
    // other: the rows held when the column appeared went on to the second.
    const [a, b] = f.contents.segments;
    expect(f.contents.segments).toHaveLength(2);
    expect([a.firstRow, b.lastRow]).toEqual([1, 900]);
    expect(a.lastRow! + 1).toBe(b.firstRow);
    expect(b.carried!.length).toBeGreaterThan(REORDER_ROWS - 30);
    const files = { csv: join(f.dir, 'results.csv'), parquet: join(f.dir, 'results.parquet') };
    const done = await assembleFolder(f, files);
    expect(done.rows).toBe(900);
    // The second segment (the final columns) as it is; the first, without `late`, encoded again.
    expect(done.copied).toBe(b.rows);
    expect(await csvRows(files.csv)).toEqual(range(1, 900));
    await expectMatchesJournal(files.parquet, f.ndjson, [...(await readParquet(files.parquet)).columns]);
    // The same bytes as the files made from the journal alone.
    const alone = { csv: join(f.dir, 'alone.csv') };
    await assembleResultFiles({ resultsPath: f.ndjson, size: f.size, files: alone, columns: f.union.columns(STAGES) });
    expect(readFileSync(files.csv, 'utf8')).toBe(readFileSync(alone.csv, 'utf8'));
  });

  it(`wide lines: the rows held back stay under ${REORDER_BYTES / 1024 / 1024} MB of lines, and still come out in order`, async () => {
    // 6 KB lines: 1 MB holds about 170 of them, so row 5 coming 260 places late (fewer than REORDER_ROWS)
    // finds later rows written already: a second segment, and the end merges.
    const order = range(1, 300).filter((r) => r !== 5);
    order.splice(260, 0, 5);
    const f = folder([], order, 6000);
    expect(f.contents.segments.map((s) => s.firstRow)).toEqual([1, 5]);
    const files = { csv: join(f.dir, 'results.csv') };
    await assembleFolder(f, files);
    expect(await csvRows(files.csv)).toEqual(range(1, 300));
  });

  it(`a row that comes after more than ${REORDER_ROWS} others, and rows of an earlier session done again, are merged into place`, async () => {
    const late = arrival(range(1, 3 * REORDER_ROWS), 50).filter((r) => r !== 17);
    // The earlier session did rows 1..500 but 3, 40 and 41 (in flight when it stopped) and 17 (which this
    // one does last, much later than the others).
    const earlier = arrival(
      range(1, 500).filter((r) => ![3, 17, 40, 41].includes(r)),
      20,
    );
    const session = [3, 40, 41, ...late.filter((r) => r > 500), 17];
    const f = folder(earlier, session);
    expect(f.contents.segments.length).toBeGreaterThan(1);
    const files = { csv: join(f.dir, 'results.csv'), parquet: join(f.dir, 'results.parquet') };
    const visited: number[] = [];
    const done = await assembleFolder(f, files, (l) => visited.push(l.row));
    expect(done.rows).toBe(3 * REORDER_ROWS);
    expect(await csvRows(files.csv)).toEqual(range(1, 3 * REORDER_ROWS));
    await expectMatchesJournal(files.parquet, f.ndjson, [...(await readParquet(files.parquet)).columns]);
    // The decisions of the earlier session's rows are counted from the journal, this session's are not.
    expect(visited.sort((a, b) => a - b)).toEqual([...earlier].sort((a, b) => a - b));
  });

  it("a resumed run: the second session's chunks past where the sessions meet are used as they are", async () => {
    // The earlier session did rows 1..1,200 but 15 of its last 40 (in flight at its stop); this one does
    // those, then the rest up to 3,500: its first chunk holds rows of both, the later ones only its own.
    const inFlight = new Set(arrival(range(1_161, 1_200), 0).filter((r) => r % 8 < 3));
    const earlier = arrival(
      range(1, 1_200).filter((r) => !inFlight.has(r)),
      64,
    );
    const session = arrival([...inFlight, ...range(1_201, 3_500)], 64, 3);
    const f = folder(earlier, session);
    expect(f.contents.segments).toHaveLength(1);
    const chunks = f.contents.segments[0].chunks;
    expect(chunks.map((c) => c.rows)).toEqual([CHUNK_ROWS, CHUNK_ROWS, session.length - 2 * CHUNK_ROWS]);
    expect(chunks[0].firstRow).toBeLessThan(1_200);
    const files = { csv: join(f.dir, 'results.csv'), parquet: join(f.dir, 'results.parquet') };
    const visited: number[] = [];
    const done = await assembleFolder(f, files, (l) => visited.push(l.row));
    expect(done.rows).toBe(3_500);
    // The two later chunks copied; the first, where the sessions meet, encoded with the earlier rows.
    expect(done.copied).toBe(chunks[1].rows + chunks[2].rows);
    expect(await csvRows(files.csv)).toEqual(range(1, 3_500));
    await expectMatchesJournal(files.parquet, f.ndjson, [...(await readParquet(files.parquet)).columns]);
    expect(visited.sort((a, b) => a - b)).toEqual([...earlier].sort((a, b) => a - b));
    // The same bytes as the CSV made from the journal alone.
    const alone = { csv: join(f.dir, 'alone.csv') };
    const journalOnly = await assembleResultFiles({
      resultsPath: f.ndjson,
      size: f.size,
      files: alone,
      columns: f.union.columns(STAGES),
    });
    expect(journalOnly.copied).toBe(0);
    expect(readFileSync(files.csv, 'utf8')).toBe(readFileSync(alone.csv, 'utf8'));
  });

  it('the merge of sorted runs on disk gives every line once, in row order, and removes its runs', async () => {
    const dir = tempDir('bre-sort-');
    const rows = arrival(range(1, 5000), 4000, 7);
    const text = rows.map((r) => `${JSON.stringify(line(r))}\n`).join('');
    const path = join(dir, 'results.ndjson');
    writeFileSync(path, text);
    const cut = Buffer.byteLength(
      rows
        .slice(0, 1000)
        .map((r) => `${JSON.stringify(line(r))}\n`)
        .join(''),
    );
    const got: { row: number; visit: boolean }[] = [];
    // About 60 runs of 8 KB: the heap merges them.
    for await (const batch of linesByRow(
      path,
      [
        { start: 0, end: cut, visit: true },
        { start: cut, end: text.length, visit: false },
      ],
      dir,
      8192,
    )) {
      for (const l of batch) {
        expect(JSON.parse(l.text).row).toBe(l.row);
        got.push({ row: l.row, visit: l.visit });
      }
    }
    expect(got.map((g) => g.row)).toEqual(range(1, 5000));
    expect(
      got
        .filter((g) => g.visit)
        .map((g) => g.row)
        .sort((a, b) => a - b),
    ).toEqual(rows.slice(0, 1000).sort((a, b) => a - b));
    expect(readdirSync(dir)).toEqual(['results.ndjson']);
    expect(existsSync(join(dir, 'results.ndjson.sort-0.tmp'))).toBe(false);
  });
});
