import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import yargs from 'yargs';
import { runCompare, type CompareJson } from '../src/compare.js';
import { synthesiseRuns } from '../../../bench/compare.js';
import { compareCommand, compareOptionsFromArgs } from '../../../src/cli/compare.js';
import { BreError } from '@bre-batch/core/errors';
import { writeParquetRows } from '../../../scripts/convert-samples.mjs';
import { tempDir } from '../../../test/helpers/temp.js';
import { handCase, SKIPPED, wf, writeRunFolder } from './fixtures.js';

function csvRows(path: string): string[] {
  return readFileSync(path, 'utf8').trimEnd().split('\n');
}

/** The figures without what legitimately differs between two ways of computing them (incl. float summation order). */
function figuresOf(r: CompareJson): unknown {
  return JSON.parse(
    JSON.stringify(figuresRaw(r), (_k, v: unknown) => (typeof v === 'number' ? Number(v.toPrecision(10)) : v)),
  );
}

function figuresRaw(r: CompareJson): unknown {
  return {
    ...r,
    generated_at: null,
    options: { ...r.options, buckets: null },
    join: {
      ...r.join,
      only_a_keys: [...r.join.only_a_keys].sort(),
      only_b_keys: [...r.join.only_b_keys].sort(),
      duplicates: { ...r.join.duplicates, sample: [...r.join.duplicates.sample].sort() },
    },
  };
}

async function usageError(p: Promise<unknown>): Promise<BreError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(BreError);
  expect((err as BreError).code).toBe('USAGE');
  return err as BreError;
}

describe('streaming join', () => {
  it('gives the same figures and lines with 1 bucket and with many, and matches a naive in-memory count', async () => {
    const root = tempDir();
    synthesiseRuns(4000, join(root, 'runs'));
    // A few duplicate keys and keyless rows on top of the synthetic runs.
    const extraA = [
      { row: 5001, key: 'dup-1', stages: { bre: wf('Approve', 100) } },
      { row: 5002, key: 'dup-1', stages: { bre: wf('Reject', null) } },
      { row: 5003, key: null, stages: { bre: wf('Reject', null) } },
    ];
    writeFileSync(
      join(root, 'runs', 'a', 'results.ndjson'),
      readFileSync(join(root, 'runs', 'a', 'results.ndjson'), 'utf8') +
        extraA.map((l) => JSON.stringify(l)).join('\n') +
        '\n',
    );
    writeFileSync(
      join(root, 'runs', 'b', 'results.ndjson'),
      readFileSync(join(root, 'runs', 'b', 'results.ndjson'), 'utf8') +
        JSON.stringify({ row: 5001, key: 'dup-1', stages: { bre: wf('Approve', 100) } }) +
        '\n',
    );
    const a = join(root, 'runs', 'a');
    const b = join(root, 'runs', 'b');
    const tmp = join(root, 'tmp');
    const one = await runCompare({
      outA: a,
      outB: b,
      out: join(root, 'one'),
      buckets: 1,
      outcome: 'bad',
      by: 'state',
      sampleSize: 500,
      tmpDir: tmp,
    });
    const many = await runCompare({
      outA: a,
      outB: b,
      out: join(root, 'many'),
      buckets: 13,
      outcome: 'bad',
      by: 'state',
      sampleSize: 500,
      tmpDir: tmp,
    });
    expect(one.report.options.buckets).toBe(1);
    expect(many.report.options.buckets).toBe(13);
    expect(figuresOf(many.report)).toEqual(figuresOf(one.report));
    // The temporary bucket files are gone.
    expect(readdirSync(tmp)).toEqual([]);

    const linesOne = csvRows(one.files.csv);
    const linesMany = csvRows(many.files.csv);
    expect(linesMany[0]).toBe(linesOne[0]);
    expect([...linesMany].sort()).toEqual([...linesOne].sort());
    // One bucket: input order.
    const rowsOne = linesOne.slice(1).map((l) => Number(l.split(',')[1] || l.split(',')[2]));
    expect(rowsOne.slice(0, 50)).toEqual([...rowsOne.slice(0, 50)].sort((x, y) => x - y));

    // Naive: both files in memory, decisions by key.
    const load = (p: string): Map<string, Record<string, unknown>[]> => {
      const m = new Map<string, Record<string, unknown>[]>();
      for (const l of readFileSync(join(p, 'results.ndjson'), 'utf8').split('\n')) {
        if (!l) continue;
        const o = JSON.parse(l) as { key: string | null; stages: { bre: Record<string, unknown> } };
        if (o.key === null) continue;
        m.set(o.key, [...(m.get(o.key) ?? []), o.stages.bre]);
      }
      return m;
    };
    const A = load(a);
    const B = load(b);
    let both = 0;
    let swapIn = 0;
    let swapOut = 0;
    let onlyA = 0;
    let onlyB = 0;
    let amountA = 0;
    for (const [k, la] of A) {
      const lb = B.get(k);
      if (la.length > 1 || (lb && lb.length > 1)) continue;
      if (!lb) {
        onlyA += 1;
        continue;
      }
      const ap = la[0].decision === 'Approve';
      const bp = lb[0].decision === 'Approve';
      if (ap && bp) both += 1;
      if (!ap && bp) swapIn += 1;
      if (ap && !bp) swapOut += 1;
      if (ap) amountA += la[0].loan_amount as number;
    }
    for (const k of B.keys()) if (!A.has(k)) onlyB += 1;
    const c = one.report.comparisons[0];
    expect(c.swaps).toMatchObject({ both_approve: both, swap_in: swapIn, swap_out: swapOut });
    expect(c.amounts?.a_total).toBe(amountA);
    expect(one.report.join).toMatchObject({
      only_a: onlyA,
      only_b: onlyB,
      no_key: { a_rows: 1, b_rows: 0 },
      duplicates: { keys: 1, a_rows: 2, b_rows: 1 },
    });
    expect(linesOne).toHaveLength(1 + one.report.join.matched + onlyA + onlyB + 3 + 1);
    // The challenger's lower cut-off approves more.
    expect(c.approval!.difference!).toBeGreaterThan(0);
    expect(c.approval!.difference_ci!.lower).toBeGreaterThan(0);
    expect(c.segments).toHaveLength(10);
    expect(c.features.find((f) => f.feature === 'bureau_intel.bureau_score')?.bins).toHaveLength(11);
  });
});

describe('champion / challenger in one run', () => {
  const lines = [
    { row: 1, key: 'a', stages: { champion: wf('Approve', 1000), challenger: wf('Approve', 2000) } },
    { row: 2, key: 'b', stages: { champion: wf('Reject', null), challenger: wf('Approve', 500) } },
    { row: 3, key: 'c', stages: { champion: wf('Approve', 800), challenger: wf('Reject', null) } },
  ];

  it('compares stage champion with stage challenger of the same folder by default', async () => {
    const dir = writeRunFolder(join(tempDir(), 'cc'), { lines, pipeline: 'champion_challenger' });
    const r = await runCompare({ outA: dir, outB: dir });
    // Beside the run's folder, not in it: the folder stays the record of the run alone.
    expect(r.outDir).toBe(join(dir, '..', 'compare-cc-champion-vs-challenger'));
    expect(readdirSync(dir)).not.toContain('compare-champion-vs-challenger');
    const c = r.report.comparisons[0];
    expect([c.label, c.stage_a, c.stage_b, c.n]).toEqual(['champion_vs_challenger', 'champion', 'challenger', 3]);
    expect(c.swaps).toEqual({ swap_in: 1, swap_out: 1, both_approve: 1, both_reject: 0, net: 0 });
    expect(c.amounts?.both_approve.total_change).toBe(1000);
    expect(csvRows(r.files.csv)[1]).toBe('a,1,1,matched,Approve,Approve,1000,2000,1000,both_approve');
  });

  it('needs two different stages when the folder is the same', async () => {
    const dir = writeRunFolder(join(tempDir(), 'cc'), { lines });
    const e = await usageError(runCompare({ outA: dir, outB: dir, stage: 'champion' }));
    expect(e.message).toMatch(/Expected two different stages/);
    const other = writeRunFolder(join(tempDir(), 'x'), {
      lines: [{ row: 1, key: 'a', stages: { one: wf('Approve', 1) } }],
    });
    const e2 = await usageError(runCompare({ outA: other, outB: other }));
    expect(e2.message).toMatch(/Expected stage 'champion' in run A .*got one/);
  });
});

describe('several stages', () => {
  it('compares every shared stage; a features-only stage has no decision columns; csv columns are prefixed', async () => {
    const root = tempDir();
    const line = (row: number, key: string, loc: string, bank: unknown, score: number) => ({
      row,
      key,
      stages: {
        bureau: { score, cbs_risk_grade_v1: 3, is_risky_customer: false, reference_id: key },
        location: wf(loc, null),
        bank,
      },
    });
    const a = writeRunFolder(join(root, 'a'), {
      lines: [line(1, 'k1', 'Approve', wf('Approve', 900), 700), line(2, 'k2', 'Reject', SKIPPED, 600)],
    });
    const b = writeRunFolder(join(root, 'b'), {
      lines: [line(1, 'k1', 'Approve', wf('Reject', null), 710), line(2, 'k2', 'Approve', wf('Approve', 400), 600)],
    });
    const r = await runCompare({ outA: a, outB: b });
    // A folder of its own beside run B; run B's folder holds only what its run wrote.
    expect(r.outDir).toBe(join(root, 'compare-a-vs-b'));
    expect(readdirSync(b).filter((f) => f.startsWith('compare'))).toEqual([]);
    expect(r.report.comparisons.map((c) => [c.label, c.decisions !== null])).toEqual([
      ['bureau', false],
      ['location', true],
      ['bank', true],
    ]);
    const bureau = r.report.comparisons[0];
    expect(bureau.approval).toBeNull();
    expect(bureau.features.map((f) => f.feature).sort()).toEqual(['cbs_risk_grade_v1', 'is_risky_customer', 'score']);
    const bank = r.report.comparisons[2];
    expect(bank.decisions?.categories).toEqual(['Approve', 'Reject', '(skipped)']);
    expect(bank.decisions?.crosstab).toEqual([
      [0, 1, 0],
      [0, 0, 0],
      [1, 0, 0],
    ]);
    expect([bank.ran_a, bank.ran_b]).toEqual([1, 2]);
    const csv = csvRows(r.files.csv);
    expect(csv[0]).toBe(
      'key,a_row,b_row,match,location.a_decision,location.b_decision,location.a_loan_amount,location.b_loan_amount,location.amount_change,location.swap_class,bank.a_decision,bank.b_decision,bank.a_loan_amount,bank.b_loan_amount,bank.amount_change,bank.swap_class',
    );
    expect(csv[2]).toBe('k2,2,2,matched,Reject,Approve,,,,swap_in,(skipped),Approve,,400,,swap_in');
    // --stage picks one.
    const only = await runCompare({ outA: a, outB: b, stage: 'bank', out: join(root, 'bank-only') });
    expect(only.report.comparisons.map((c) => c.label)).toEqual(['bank']);
    expect(csvRows(only.files.csv)[0]).toBe(
      'key,a_row,b_row,match,a_decision,b_decision,a_loan_amount,b_loan_amount,amount_change,swap_class',
    );
  });

  it('reads the EMI product from emi_decision and the best offer', async () => {
    const root = tempDir();
    const emi = (d: string, amount: number | null) =>
      wf('Reject', null, { emi_decision: d, 'best_offer.loan_amount': amount, offers_count: amount ? 2 : 0 });
    const a = writeRunFolder(join(root, 'a'), { lines: [{ row: 1, key: 'k', stages: { w: emi('Approve', 50000) } }] });
    const b = writeRunFolder(join(root, 'b'), { lines: [{ row: 1, key: 'k', stages: { w: emi('Approve', 65000) } }] });
    const r = await runCompare({ outA: a, outB: b, product: 'emi' });
    const c = r.report.comparisons[0];
    expect(c.swaps?.both_approve).toBe(1);
    expect(c.amounts?.both_approve.total_change).toBe(15000);
    expect(r.report.options).toMatchObject({ decision_field: 'emi_decision', amount_field: 'best_offer.loan_amount' });
  });

  it('an empty run B makes every key only-A, without failing', async () => {
    const root = tempDir();
    const a = writeRunFolder(join(root, 'a'), {
      lines: [
        { row: 1, key: 'k1', stages: { w: wf('Approve', 1) } },
        { row: 2, key: 'k2', stages: { w: wf('Reject', null) } },
      ],
    });
    const b = join(root, 'b');
    writeRunFolder(b, { lines: [] });
    writeFileSync(join(b, 'results.ndjson'), '');
    const r = await runCompare({ outA: a, outB: b });
    expect(r.report.join).toMatchObject({ matched: 0, only_a: 2, only_b: 0, only_a_keys: ['k1', 'k2'] });
    expect(r.report.comparisons[0].approval?.a.rate).toBeNull();
    expect(readFileSync(r.files.html, 'utf8')).toContain('No key is present in both runs');
  });
});

describe('usage errors (exit 2), nothing written', () => {
  it.each([
    [
      'missing folder A',
      (a: string, b: string) => ({ outA: join(a, 'nope'), outB: b }),
      /Expected run A to be an output folder .* \(no such folder\)/,
    ],
    [
      'folder without results',
      (a: string, b: string) => ({ outA: join(a, '..'), outB: b }),
      /Expected .*results\.ndjson .*got no such file/,
    ],
    [
      'unknown stage',
      (a: string, b: string) => ({ outA: a, outB: b, stage: 'nope' }),
      /Expected stage 'nope' in run A .*got bre/,
    ],
    [
      'stage-a alone',
      (a: string, b: string) => ({ outA: a, outB: b, stageA: 'bre' }),
      /Expected --stage-a and --stage-b together, got only --stage-a/,
    ],
    [
      'stage and stage-a',
      (a: string, b: string) => ({ outA: a, outB: b, stage: 'bre', stageA: 'bre', stageB: 'bre' }),
      /Expected either --stage or --stage-a/,
    ],
    [
      'outcome column missing',
      (a: string, b: string) => ({ outA: a, outB: b, outcome: 'defaulted' }),
      /Expected --outcome column 'defaulted' in .*input\.csv, got columns reference_id, state, bad/,
    ],
    ['by column missing', (a: string, b: string) => ({ outA: a, outB: b, by: 'city' }), /Expected --by column 'city'/],
    [
      'input unreadable',
      (a: string, b: string) => ({ outA: a, outB: b, by: 'state', input: join(a, 'missing.csv') }),
      /Expected a readable input file for --by/,
    ],
    [
      'bad product',
      (a: string, b: string) => ({ outA: a, outB: b, product: 'car' as never }),
      /Expected --product payday or emi, got 'car'/,
    ],
    [
      'score field not in the stage',
      (a: string, b: string) => ({ outA: a, outB: b, outcome: 'bad', score: 'nope.score' }),
      /Expected --score nope\.score to name a numeric field of the compared stages \(bre\), got no such field; numeric fields: bureau_intel\.bureau_score/,
    ],
    [
      'period column missing',
      (a: string, b: string) => ({ outA: a, outB: b, period: 'app_date' }),
      /Expected --period column 'app_date' in .*input\.csv, got columns reference_id, state, bad/,
    ],
  ])('%s', async (_name, opts, message) => {
    const root = tempDir();
    const { a, b } = handCase(root);
    const out = join(root, 'cmp');
    const e = await usageError(runCompare({ ...opts(a, b), out }));
    expect(e.message).toMatch(message);
    expect(existsSync(out)).toBe(false);
  });

  it('--by without any input file known', async () => {
    const root = tempDir();
    const a = writeRunFolder(join(root, 'a'), {
      lines: [{ row: 1, key: 'k', stages: { w: wf('Approve', 1) } }],
      inputPath: '-',
    });
    const e = await usageError(runCompare({ outA: a, outB: a, stageA: 'w', stageB: 'w2', by: 'state' }));
    expect(e.message).toMatch(/Expected --input FILE for --by/);
  });
});

describe('--outcome/--by from an input in any format run reads', () => {
  /** handCase's input.csv as the rows a reader returns: text cells, an empty cell null. */
  function handRows(input: string): Record<string, string | null>[] {
    return (parse(readFileSync(input, 'utf8'), { columns: true }) as Record<string, string>[]).map((r) =>
      Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === '' ? null : v])),
    );
  }
  const withoutInput = (r: CompareJson) => figuresOf({ ...r, options: { ...r.options, input: null } });

  it("Parquet, gzip'ed CSV, TSV and gzip'ed NDJSON give the figures of the CSV", async () => {
    const root = tempDir();
    const { a, b, input } = handCase(root);
    const reference = await runCompare({ outA: a, outB: b, out: join(root, 'csv'), outcome: 'bad', by: 'state' });
    const rows = handRows(input);
    const parquet = join(root, 'input.parquet');
    writeParquetRows(parquet, rows, { csv: true });
    const csvGz = join(root, 'input.csv.gz');
    writeFileSync(csvGz, gzipSync(readFileSync(input)));
    const tsv = join(root, 'input.tsv');
    writeFileSync(tsv, readFileSync(input, 'utf8').replaceAll(',', '\t'));
    const ndjsonGz = join(root, 'input.ndjson.gz');
    writeFileSync(
      ndjsonGz,
      gzipSync(rows.map((r) => JSON.stringify({ ...r, bad: r.bad === null ? null : Number(r.bad) })).join('\n')),
    );
    for (const file of [parquet, csvGz, tsv, ndjsonGz]) {
      const r = await runCompare({
        outA: a,
        outB: b,
        out: join(root, `cmp-${basename(file)}`),
        outcome: 'bad',
        by: 'state',
        input: file,
      });
      expect(r.report.options.input, file).toBe(file);
      expect(withoutInput(r.report), file).toEqual(withoutInput(reference.report));
    }
  });

  it("run A's input is read as run A read it: its format, encoding and separator from manifest.json", async () => {
    const root = tempDir();
    const { a, b, input } = handCase(root);
    const reference = await runCompare({ outA: a, outB: b, out: join(root, 'csv'), outcome: 'bad', by: 'state' });
    // The same table as Excel writes it in a decimal-comma locale: ';', windows-1252, KA spelt Kà.
    const excel = join(root, 'excel.csv');
    const text = readFileSync(input, 'utf8').replaceAll(',', ';').replaceAll(';KA;', ';Kà;').replaceAll('\n', '\r\n');
    writeFileSync(excel, iconv.encode(text, 'windows-1252'));
    const manifestPath = join(a, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    writeFileSync(
      manifestPath,
      JSON.stringify({
        ...manifest,
        input: {
          ...manifest.input,
          path: excel,
          reading: { encoding: 'windows-1252', delimiter: ';', decimal_comma: false },
        },
      }),
    );
    const r = await runCompare({ outA: a, outB: b, out: join(root, 'excel'), outcome: 'bad', by: 'state' });
    const segments = (x: CompareJson) =>
      x.comparisons[0].segments!.map((s) => ({ ...s, segment: s.segment === 'KA' ? 'Kà' : s.segment }));
    expect(r.report.comparisons[0].segments!.map((s) => s.segment)).toEqual(['Kà', 'MH']);
    expect(segments(r.report)).toEqual(segments(reference.report));
    // Read as UTF-8 (a given --encoding wins over the manifest's), Kà's byte is not text: those rows lose their segment.
    const utf8 = await runCompare({
      outA: a,
      outB: b,
      out: join(root, 'utf8'),
      outcome: 'bad',
      by: 'state',
      encoding: 'utf-8',
    });
    expect(utf8.report.comparisons[0].segments!.map((s) => s.segment)).toEqual(['(missing)', 'MH']);

    // A Parquet input named by the manifest is read as Parquet, whatever its name.
    const parquet = join(root, 'warehouse-export');
    writeParquetRows(parquet, handRows(input), { csv: true });
    writeFileSync(
      manifestPath,
      JSON.stringify({
        ...manifest,
        input: {
          ...manifest.input,
          path: parquet,
          format: 'parquet',
          reading: { encoding: null, delimiter: null, decimal_comma: false },
        },
      }),
    );
    const fromParquet = await runCompare({ outA: a, outB: b, out: join(root, 'pq'), outcome: 'bad', by: 'state' });
    expect(withoutInput(fromParquet.report)).toEqual(withoutInput(reference.report));
  });

  it("--period: the stability pass reads run A's input again as run A read it (windows-1252, ';')", async () => {
    const root = tempDir();
    const { a, b, input } = handCase(root);
    // An application date (January for the first 8 data rows, February after), and KA spelt Kà: read as UTF-8,
    // the windows-1252 byte of à is not text, and those rows would drop out of the second pass.
    const [header, ...lines] = readFileSync(input, 'utf8').trimEnd().split('\n');
    const utf8 =
      [`${header},app_date`, ...lines.map((l, i) => `${l.replace(',KA,', ',Kà,')},2025-0${i < 8 ? 1 : 2}-15`)].join(
        '\n',
      ) + '\n';
    const utf8Path = join(root, 'dated.csv');
    writeFileSync(utf8Path, utf8);
    const reference = await runCompare({
      outA: a,
      outB: b,
      out: join(root, 'utf8'),
      outcome: 'bad',
      period: 'app_date',
      minPeriodKeys: 1,
      input: utf8Path,
    });
    const excel = join(root, 'excel.csv');
    writeFileSync(excel, iconv.encode(utf8.replaceAll(',', ';').replaceAll('\n', '\r\n'), 'windows-1252'));
    const manifestPath = join(a, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    writeFileSync(
      manifestPath,
      JSON.stringify({
        ...manifest,
        input: {
          ...manifest.input,
          path: excel,
          reading: { encoding: 'windows-1252', delimiter: ';', decimal_comma: false },
        },
      }),
    );
    const r = await runCompare({
      outA: a,
      outB: b,
      out: join(root, 'excel'),
      outcome: 'bad',
      period: 'app_date',
      minPeriodKeys: 1,
    });
    const state = r.report.input_stability?.columns.find((c) => c.name === 'state');
    expect(state?.periods.map((p) => p.n)).toEqual([8, 7]);
    expect(r.report.input_stability).toEqual(reference.report.input_stability);
    expect(r.report.comparisons[0].periods).toEqual(reference.report.comparisons[0].periods);
  });

  it.each([
    [
      'an unknown format',
      { inputFormat: 'xml' as never },
      /Expected --input-format to be one of csv, tsv, ndjson, parquet, csv\.gz, tsv\.gz, ndjson\.gz, got 'xml'/,
    ],
    [
      '--delimiter with Parquet',
      { input: 'x.parquet', delimiter: ';' },
      /Expected --delimiter only with CSV or TSV input, got it with parquet/,
    ],
    ['an unknown encoding', { encoding: 'klingon' }, /Expected --encoding to be an encoding name/],
  ])('%s is a usage error, nothing written', async (_name, over, message) => {
    const root = tempDir();
    const { a, b } = handCase(root);
    const out = join(root, 'cmp');
    const e = await usageError(runCompare({ outA: a, outB: b, out, by: 'state', ...over }));
    expect(e.message).toMatch(message);
    expect(existsSync(out)).toBe(false);
  });
});

describe('compare command (yargs)', () => {
  it('maps the options and prints a summary', async () => {
    const root = tempDir();
    const { a, b } = handCase(root);
    const out = join(root, 'cli-out');
    const written: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    try {
      await yargs(['compare', a, b, '--out', out, '--outcome', 'bad', '--by', 'state', '--stage', 'bre'])
        .command(compareCommand as never)
        .strict()
        .parseAsync();
    } finally {
      process.stdout.write = write;
    }
    const text = written.join('');
    expect(text).toContain('compared 10 keys; only in A 1, only in B 1, duplicate keys 1, rows without key 1');
    expect(text).toContain('bre: approval A 50.0%, B 50.0%, B-A 0.0% [-37.3%, 37.3%]; swap-in 2, swap-out 2');
    expect(text).toContain(`wrote ${join(out, 'report.html')}`);
    const j = JSON.parse(readFileSync(join(out, 'compare.json'), 'utf8')) as CompareJson;
    expect(j.options).toMatchObject({ outcome: 'bad', by: 'state', product: 'payday' });
    expect(existsSync(join(out, 'compare.csv.partial'))).toBe(false);
  });

  it('takes --input-format, --encoding and --delimiter as run does', () => {
    const args = [
      'compare',
      'a',
      'b',
      '--input',
      'x.txt',
      '--input-format',
      'csv.gz',
      '--encoding',
      'latin1',
      '--delimiter',
      'semicolon',
    ];
    const argv = yargs(args)
      .command({ ...compareCommand, handler: () => undefined } as never)
      .strict()
      .parseSync() as never;
    expect(compareOptionsFromArgs(argv)).toMatchObject({
      input: 'x.txt',
      inputFormat: 'csv.gz',
      encoding: 'latin1',
      delimiter: 'semicolon',
    });
  });
});

describe('offers', () => {
  it('are left out when no result carries an offer (payday workflows report offers_count 0)', async () => {
    const root = tempDir();
    const a = writeRunFolder(join(root, 'a'), { lines: [{ row: 1, key: 'k', stages: { w: wf('Approve', 1000) } }] });
    const b = writeRunFolder(join(root, 'b'), { lines: [{ row: 1, key: 'k', stages: { w: wf('Approve', 1200) } }] });
    const r = await runCompare({ outA: a, outB: b });
    expect(r.report.comparisons[0].offers).toBeNull();
    expect(readFileSync(r.files.html, 'utf8')).not.toContain('>Offers<');
  });
});

describe('--score on the hand case', () => {
  // Keys 1..10 (outcome 0 0 1 1 ? 0 1 0 ? 0). A's bureau_intel.bureau_score is 510 + 10·(row − 1) for rows 1-9; row 10
  // skipped in A (missing, a good). B's mobile_intel.new_score exists on row 1 only.
  //   A, lower is better: goods 510 520 560 580, bads 530 540 570 (rows 5 and 9 unknown). Goods scoring better (lower)
  //   than bads: 510 → 3, 520 → 3, 560 → 1 (570), 580 → 0: AUC = 7/12.
  it('FIELD_A:FIELD_B, a direction, and missing values counted by outcome', async () => {
    const root = tempDir();
    const { a, b } = handCase(root);
    const label = 'bureau_intel.bureau_score:mobile_intel.new_score';
    const r = await runCompare({
      outA: a,
      outB: b,
      out: join(root, 'cmp'),
      outcome: 'bad',
      score: label,
      scoreDirection: `${label}=lower`,
    });
    const s = r.report.comparisons[0].scores![0];
    expect(s).toMatchObject({
      label,
      field_a: 'bureau_intel.bureau_score',
      field_b: 'mobile_intel.new_score',
      direction: 'lower_is_better',
      keys: 10,
    });
    expect(s.a.scored).toEqual({ keys: 9, good: 4, bad: 3, unknown: 2 });
    expect(s.a.missing).toEqual({ keys: 1, good: 1, bad: 0, unknown: 0 });
    expect(s.a.power?.auc).toBeCloseTo(7 / 12, 14);
    expect(s.b.scored).toEqual({ keys: 1, good: 1, bad: 0, unknown: 0 });
    expect(s.b.missing).toEqual({ keys: 9, good: 4, bad: 3, unknown: 2 });
    expect(s.b.power).toBeNull();
    expect(s.paired).toBeNull();
    // Operating points over A's 9 scored keys: A approved rows 1-5 (outcomes 0 0 1 1 ?), B rows 1, 2, 3, 6, 9.
    expect(s.a.operating_points).toEqual({
      a: { approved: 5, approval_rate: 5 / 9, good: 2, bad: 2, unknown: 1, bad_rate: 0.5 },
      b: { approved: 5, approval_rate: 5 / 9, good: 3, bad: 1, unknown: 1, bad_rate: 0.25 },
    });
    const html = readFileSync(r.files.html, 'utf8');
    expect(html).toContain('No paired test: the keys with both scores have no good or no bad outcome.');
    expect(html).toContain('9 compared keys have no number in B');
    // compare.csv: both values of each key (k01: 510 in A, 1 in B, outcome 0; k02: no value in B).
    const csv = readFileSync(r.files.csv, 'utf8').trimEnd().split('\n');
    expect(csv[0].endsWith(`,score_a.${label},score_b.${label},outcome`)).toBe(true);
    expect(csv.find((l) => l.startsWith('k01,'))?.endsWith(',510,1,0')).toBe(true);
    expect(csv.find((l) => l.startsWith('k02,'))?.endsWith(',520,,0')).toBe(true);
  });
});
