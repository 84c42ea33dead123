/**
 * results.parquet, errors.parquet and transactions.parquet read back with parquet-wasm (arrow-rs; not the writer's library)
 * and compared value by value with the journal; the spool's files equal those rebuilt from the journal
 * alone, and results.csv equals what the two-pass rebuild of earlier builds wrote, byte for byte.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ColumnUnion, type StageColumns } from '../../src/output/journal/columns.js';
import { AppendFile } from '@bre-batch/formats/ndjson-file';
import { buildResultsCsv } from './two-pass-csv.js';
import { rebuildOutputs } from '../../src/output/spool/rebuild.js';
import { parseOutputFormats } from '../../src/output/spool/output-formats.js';
import { ResultSpool } from '../../src/output/spool/spool.js';
import { assembleResultFiles } from '../../src/output/spool/assemble.js';
import { expectMatchesJournal, parquetCodecs, readParquet } from './parquet-reader.js';
import { tempDir } from '../helpers/temp.js';

const STAGES: StageColumns[] = [
  { id: 'bre', known: ['decision', 'loan_amount', 'loan_offers', 'never_seen'] },
  { id: 'bureau', known: ['score'] },
];

/**
 * Rows with every kind of value a normalised result holds, and columns that appear and widen late; each with the
 * run and session that wrote it (the first rows none: an older bre-batch's; then sessions 1 and 2).
 */
function resultLine(row: number): {
  row: number;
  key: string | null;
  run_id?: string;
  run_session?: number;
  stages: Record<string, Record<string, unknown>>;
} {
  const bre: Record<string, unknown> = {
    decision: row % 3 === 0 ? 'Reject' : 'Approve',
    loan_amount: row % 3 === 0 ? null : row * 1000,
    loan_offers: row % 2 ? [] : [{ product_code: `P${row}`, interest_rate: 12.5 }],
    rules_failed: row % 5 ? [] : ['R1', 'R"2'],
    approved: row % 3 !== 0,
    'features.geo.city': ['Mumbai', 'Dilli, "NCR"', '=cmd|x', 'line\nbreak', 'naïve 😀'][row % 5],
    mixed: row % 4 === 0 ? 'n/a' : row,
    widening: row < 60 ? row : row + 0.25,
    big: row === 7 ? 2 ** 53 + 2 : row,
    nested: row % 6 ? null : { a: row, b: [true, null] },
    negative: -row,
  };
  if (row >= 40) bre.late_field = `late ${row}`;
  return {
    row,
    key: row === 9 ? null : `K-${String(row).padStart(4, '0')}`,
    ...(row > 5 ? { run_id: RUN, run_session: row > 50 ? 2 : 1 } : {}),
    stages: { bre, bureau: { score: 600 + row, is_risky_customer: row % 7 === 0 } },
  };
}

const RUN = '5b0c6f1e-3d4a-4f6b-9c2d-1a2b3c4d5e6f';

function writeJournal(path: string, rows: number[]): void {
  writeFileSync(path, rows.map((r) => `${JSON.stringify(resultLine(r))}\n`).join(''));
}

describe('results.parquet', () => {
  it('the check against the journal (./parquet-reader.ts) refuses one cell changed, naming its row and column', async () => {
    const dir = tempDir('bre-pq-');
    const journal = join(dir, 'results.ndjson');
    writeJournal(
      journal,
      Array.from({ length: 100 }, (_, i) => i + 1),
    );
    await rebuildOutputs({ dir, stages: STAGES, formats: parseOutputFormats(undefined) });
    const header = readFileSync(join(dir, 'results.csv'), 'utf8').split('\n')[0].split(',');
    await expectMatchesJournal(join(dir, 'results.parquet'), journal, header);
    writeFileSync(journal, readFileSync(journal, 'utf8').replace('"score":642', '"score":643'));
    await expect(expectMatchesJournal(join(dir, 'results.parquet'), journal, header)).rejects.toThrow(
      /row 42 bureau\.score/,
    );
  });

  it('holds every value of results.ndjson with its type, columns named and ordered as results.csv, Snappy-compressed', async () => {
    const dir = tempDir('bre-pq-');
    writeJournal(
      join(dir, 'results.ndjson'),
      Array.from({ length: 100 }, (_, i) => i + 1),
    );
    const res = await rebuildOutputs({ dir, stages: STAGES, formats: parseOutputFormats(undefined) });
    expect(res.results.rows).toBe(100);
    const header = readFileSync(join(dir, 'results.csv'), 'utf8').split('\n')[0].split(',');
    await expectMatchesJournal(join(dir, 'results.parquet'), join(dir, 'results.ndjson'), header);
    const t = await readParquet(join(dir, 'results.parquet'));
    const typeOf = Object.fromEntries(t.columns.map((c, i) => [c, t.types[i]]));
    expect(typeOf).toMatchObject({
      row: 'Int64',
      key: 'Utf8',
      'bre.decision': 'Utf8',
      'bre.loan_amount': 'Int64',
      'bre.approved': 'Bool',
      'bre.widening': 'Float64',
      'bre.big': 'Float64',
      'bre.mixed': 'Utf8',
      'bre.negative': 'Int64',
      'bureau.score': 'Int64',
      'bre.never_seen': 'Utf8',
      'bre.late_field': 'Utf8',
      'bre.loan_offers': 'Utf8',
    });
    // Arrays and objects are JSON text (DuckDB reads them as its JSON type).
    expect(JSON.parse(String(t.rows[1]['bre.loan_offers']))).toEqual([{ product_code: 'P2', interest_rate: 12.5 }]);
    expect(await parquetCodecs(join(dir, 'results.parquet'))).toEqual(['SNAPPY']);
  });

  it('is empty but readable when no row succeeded', async () => {
    const dir = tempDir('bre-pq-');
    writeFileSync(join(dir, 'results.ndjson'), '');
    await rebuildOutputs({ dir, stages: STAGES, formats: parseOutputFormats('parquet') });
    const t = await readParquet(join(dir, 'results.parquet'));
    expect(t.rows).toEqual([]);
    expect(t.columns.slice(0, 3)).toEqual(['row', 'key', 'bre.decision']);
    expect(t.columns.slice(-2)).toEqual(['run_id', 'run_session']);
  });

  it('a spooled run writes the same files as a rebuild from the journal, after a resume too, and results.csv as the two-pass rebuild did', async () => {
    for (const earlier of [0, 30, 45]) {
      const dir = tempDir('bre-pq-');
      const state = join(dir, '.state');
      mkdirSync(state);
      const ndjson = join(dir, 'results.ndjson');
      // An earlier session wrote rows 1..earlier without a spool; this one spools the rest.
      writeJournal(
        ndjson,
        Array.from({ length: earlier }, (_, i) => i + 1),
      );
      const union = new ColumnUnion();
      for (let r = 1; r <= earlier; r += 1) union.observe(resultLine(r).stages);
      // The spool keeps its own union (in a run it lives on another thread), from the run's at its start.
      const spoolUnion = new ColumnUnion();
      spoolUnion.addAll(union);
      const file = new AppendFile(ndjson);
      const spool = new ResultSpool({ stateDir: state, csv: true, parquet: true, stages: STAGES, union: spoolUnion });
      for (let r = earlier + 1; r <= 100; r += 1) {
        const line = resultLine(r);
        union.observe(line.stages);
        const start = file.bytes;
        file.append(JSON.stringify(line));
        file.flush();
        spool.add(line, start, file.bytes);
      }
      file.close();
      const visited: number[] = [];
      const contents = spool.finish(file.bytes);
      // Segments start where the files' columns change (late_field at 40, widening's type at 60); the rows
      // held back for row order (all of them here: fewer than REORDER_ROWS) go on to the last one, which has
      // the final columns and is used as it is.
      expect(contents.segments.length).toBeGreaterThanOrEqual(earlier < 40 ? 3 : 2);
      expect(contents.segments.at(-1)!.rows).toBe(100 - earlier);
      await assembleResultFiles({
        resultsPath: ndjson,
        size: file.bytes,
        columns: union.columns(STAGES),
        spool: contents,
        files: { csv: join(dir, 'results.csv'), parquet: join(dir, 'results.parquet') },
        visit: (l) => visited.push(l.row),
      });
      // Rows the spool held were seen by the caller; the journal's earlier rows are visited here, once.
      expect(visited).toEqual(Array.from({ length: earlier }, (_, i) => i + 1));
      await buildResultsCsv(ndjson, join(dir, 'two-pass.csv'), STAGES);
      expect(readFileSync(join(dir, 'results.csv'), 'utf8')).toBe(readFileSync(join(dir, 'two-pass.csv'), 'utf8'));
      const header = readFileSync(join(dir, 'results.csv'), 'utf8').split('\n')[0].split(',');
      await expectMatchesJournal(join(dir, 'results.parquet'), ndjson, header);
      expect(ResultSpoolFiles(state)).toEqual([]);
    }
  });
});

function ResultSpoolFiles(state: string): string[] {
  ResultSpool.clean(state);
  return readdirSync(state).filter((f) => f.startsWith('spool-') || f.endsWith('.body'));
}

describe('errors.parquet and transactions.parquet', () => {
  it('hold every error line and every transaction with their types', async () => {
    const dir = tempDir('bre-pq-');
    writeFileSync(join(dir, 'results.ndjson'), '');
    const errors = [
      {
        row: 2,
        line: 3,
        key: 'K2',
        run_id: RUN,
        run_session: 3,
        stage: 'bre',
        status: 422,
        code: 'VALIDATION_FAILED',
        message: 'bad, "x"',
        field: 'pan',
        expected: 'a PAN',
        errors: [{ field: 'pan', expected: 'a PAN', message: 'm' }],
        attempts: 1,
        input: { pan: '******234F', n: 1 },
      },
      {
        row: 5,
        line: null,
        key: null,
        stage: null,
        status: null,
        code: 'MALFORMED_ROW',
        message: 'ragged',
        attempts: 0,
        input: null,
      },
    ];
    writeFileSync(join(dir, 'errors.ndjson'), errors.map((e) => `${JSON.stringify(e)}\n`).join(''));
    mkdirSync(join(dir, '.state'));
    const tx = [
      {
        source: 'aa',
        account: 'XXXX1234',
        txn_id: 't1',
        timestamp: '2026-03-01T10:15:30.250+05:30',
        value_date: '2026-03-01',
        type: 'DEBIT',
        amount: 1250.5,
        balance: 10000,
        mode: 'UPI',
        narration: '=SUM(A1)',
      },
      {
        source: 'bsa',
        account: 'XXXX9',
        txn_id: null,
        timestamp: '2026-03-02T00:00:00',
        value_date: null,
        type: 'CREDIT',
        amount: 5,
        balance: null,
        mode: null,
        narration: null,
      },
      {
        source: 'aa',
        account: 'XXXX1234',
        txn_id: 't3',
        timestamp: '2026-03-03T08:00:00Z',
        value_date: null,
        type: 'CREDIT',
        amount: 7,
        balance: 1,
        mode: null,
        narration: 'x',
      },
    ];
    writeFileSync(join(dir, '.state', 'tx.ndjson'), `${JSON.stringify({ row: 1, key: 'K1', transactions: tx })}\n`);
    const res = await rebuildOutputs({
      dir,
      stages: STAGES,
      formats: parseOutputFormats('csv,parquet'),
      transactionsJournal: join(dir, '.state', 'tx.ndjson'),
    });
    expect(res.files).toEqual([
      'results.csv',
      'results.parquet',
      'errors.parquet',
      'transactions.csv',
      'transactions.parquet',
    ]);

    const e = await readParquet(join(dir, 'errors.parquet'));
    expect(e.columns).toEqual([
      'row',
      'line',
      'key',
      'stage',
      'status',
      'code',
      'message',
      'field',
      'expected',
      'errors',
      'attempts',
      'input',
      'run_id',
      'run_session',
    ]);
    expect(e.rows[0]).toMatchObject({
      run_id: RUN,
      run_session: 3n,
      row: 2n,
      line: 3n,
      key: 'K2',
      stage: 'bre',
      status: 422n,
      code: 'VALIDATION_FAILED',
      message: 'bad, "x"',
      field: 'pan',
      expected: 'a PAN',
      attempts: 1n,
    });
    expect(JSON.parse(String(e.rows[0].errors))).toEqual(errors[0].errors);
    expect(JSON.parse(String(e.rows[0].input))).toEqual(errors[0].input);
    expect(e.rows[1]).toMatchObject({
      row: 5n,
      line: null,
      key: null,
      stage: null,
      status: null,
      code: 'MALFORMED_ROW',
      field: null,
      errors: null,
      input: null,
      run_id: null,
      run_session: null,
    });

    const t = await readParquet(join(dir, 'transactions.parquet'));
    expect(t.columns).toEqual([
      'key',
      'source',
      'account',
      'txn_id',
      'timestamp',
      'timestamp_offset',
      'value_date',
      'type',
      'amount',
      'balance',
      'mode',
      'narration',
    ]);
    expect(t.types).toEqual([
      'Utf8',
      'Utf8',
      'Utf8',
      'Utf8',
      'Timestamp<MILLISECOND>',
      'Utf8',
      'Date32<DAY>',
      'Utf8',
      'Float64',
      'Float64',
      'Utf8',
      'Utf8',
    ]);
    // The wall-clock time as written by the source (no offset applied), the offset beside it.
    const iso = (ms: unknown) => (ms === null ? null : new Date(Number(ms)).toISOString());
    const shown = t.rows.map((r) => ({
      ...r,
      timestamp: iso(r.timestamp),
      value_date: iso(r.value_date)?.slice(0, 10) ?? null,
    }));
    expect(shown[0]).toMatchObject({
      key: 'K1',
      txn_id: 't1',
      timestamp: '2026-03-01T10:15:30.250Z',
      timestamp_offset: '+05:30',
      value_date: '2026-03-01',
      amount: 1250.5,
      balance: 10000,
      narration: '=SUM(A1)',
    });
    expect(shown[1]).toMatchObject({
      source: 'bsa',
      txn_id: null,
      timestamp: '2026-03-02T00:00:00.000Z',
      timestamp_offset: null,
      value_date: null,
      balance: null,
    });
    expect(shown[2]).toMatchObject({ timestamp: '2026-03-03T08:00:00.000Z', timestamp_offset: '+00:00' });
    // The CSV is unchanged: Excel-safe text, the source's own timestamp text.
    expect(readFileSync(join(dir, 'transactions.csv'), 'utf8').split('\n')[1]).toBe(
      "K1,aa,XXXX1234,t1,2026-03-01T10:15:30.250+05:30,2026-03-01,DEBIT,1250.5,10000,UPI,'=SUM(A1)",
    );
  });

  it('--output-formats: csv only removes stale Parquet files; a bad name is a usage error', async () => {
    const dir = tempDir('bre-pq-');
    writeJournal(join(dir, 'results.ndjson'), [1, 2]);
    await rebuildOutputs({ dir, stages: STAGES, formats: parseOutputFormats(undefined) });
    const res = await rebuildOutputs({ dir, stages: STAGES, formats: parseOutputFormats('csv') });
    expect(res.files).toEqual(['results.csv']);
    expect(existsSync(join(dir, 'results.parquet'))).toBe(false);
    expect(() => parseOutputFormats('csv,xlsx')).toThrow(
      "Expected --output-formats to list csv and/or parquet (comma-separated), got 'xlsx'",
    );
    expect(() => parseOutputFormats(',')).toThrow(/at least one/);
  });
});
