/**
 * `run --sample-share 0.2 --stratify-by application_date:month` on the shipped champion_challenger sample, as a
 * user runs it (the built CLI against a sandbox on loopback). The chosen rows are checked against a selection
 * computed here from the CSV itself (sha256 of seed, NUL, key; the n_h smallest per month), and:
 * - every sampled row carries its stratum and weight N_h/n_h in results, errors, results.csv and results.parquet,
 *   and the weights of succeeded and failed rows add up to N_h in every stratum;
 * - the three rows without an application date are a stratum of their own, `(missing)`;
 * - a kill -9 and a resume choose the same keys; a resume with another seed is refused (exit 2);
 * - two shards, merged, equal one run; a --stratify-by column the input lacks is exit 2 before any call;
 * - a row without a key is SAMPLE_NO_KEY; --limit draws from the first N rows; --dry-run validates the sample;
 * - `compare` on the sampled folder estimates the population (branch sample-estimates' estimators).
 * The runs whose folder or message is the point run the CLI's code in this process (runInProcess: the same
 * options, resolution and executeRun, without a CLI's start-up each), and so does the merge of two shards; a
 * process stays where only one shows it: the kill -9, stdin, a refused `merge`'s exit code through main.ts.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shardOf } from '../../src/input/shard.js';
import { formatMergeReport, mergeOutputs } from '../../src/output/merge.js';
import { ROOT, runArgs, spawnCli, startCli, waitForLines } from '../helpers/cli.js';
import { runInProcess } from '../helpers/cli-in-process.js';
import { readOutput, type OutputLine, type RunFolder, journalText } from '../helpers/output.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { expectMatchesJournal, readParquet } from '../output/parquet-reader.js';

const INPUT = join(ROOT, 'samples', 'champion_challenger.csv');
const SAMPLE = ['--sample-share', '0.2', '--stratify-by', 'application_date:month'];

interface InputRow {
  readonly row: number;
  readonly key: string;
  readonly month: string | null;
}

/** The sample's rows, read here without the product's code (no quoted cells in this file). */
function inputRows(path = INPUT): InputRow[] {
  const [header, ...lines] = readFileSync(path, 'utf8').trimEnd().split('\n');
  const cols = header.split(',');
  const k = cols.indexOf('reference_id');
  const d = cols.indexOf('application_date');
  return lines.map((l, i) => {
    const cells = l.split(',');
    return { row: i + 1, key: cells[k], month: /^\d{4}-\d\d-\d\d$/.test(cells[d]) ? cells[d].slice(0, 7) : null };
  });
}

/** The expected draw: per month (missing last), round(0.2 x N_h) half up, at least 2, the smallest hashes. */
function expectedDraw(
  rows: readonly InputRow[],
  seed = 'bre-batch',
): Map<number, { stratum: string; weight: number; population: number }> {
  const byMonth = new Map<string, InputRow[]>();
  for (const r of rows) {
    const name = r.month ?? '(missing)';
    byMonth.set(name, [...(byMonth.get(name) ?? []), r]);
  }
  const out = new Map<number, { stratum: string; weight: number; population: number }>();
  for (const [stratum, members] of byMonth) {
    const N = members.length;
    const n = Math.min(N, Math.max(Math.min(2, N), Math.floor(0.2 * N + 0.5 + 1e-9)));
    const hash = (key: string) => createHash('sha256').update(`${seed}\u0000${key}`).digest('hex');
    const chosen = [...members].sort((a, b) => (hash(a.key) < hash(b.key) ? -1 : 1)).slice(0, n);
    for (const r of chosen) out.set(r.row, { stratum, weight: N / n, population: N });
  }
  return out;
}

const ALL = inputRows();
const EXPECTED = expectedDraw(ALL);

/** Every line of results and errors, by row; fails on a row in both. */
function linesByRow(o: RunFolder): Map<number, OutputLine> {
  const out = new Map<number, OutputLine>();
  for (const l of [...o.results, ...o.errors]) {
    expect(out.has(l.row), `row ${l.row} twice`).toBe(false);
    out.set(l.row, l);
  }
  return out;
}

/** The lines are the expected sample, each with its stratum and weight; the weights add up to N_h. */
function expectTheSample(o: RunFolder): void {
  const lines = linesByRow(o);
  expect([...lines.keys()].sort((a, b) => a - b)).toEqual([...EXPECTED.keys()].sort((a, b) => a - b));
  const weights = new Map<string, { sum: number; population: number }>();
  for (const [row, l] of lines) {
    const want = EXPECTED.get(row)!;
    expect(l.stratum, `row ${row}`).toBe(want.stratum);
    expect(l.weight, `row ${row}`).toBe(want.weight);
    const w = weights.get(want.stratum) ?? { sum: 0, population: want.population };
    w.sum += l.weight as number;
    weights.set(want.stratum, w);
  }
  for (const [stratum, w] of weights) expect(w.sum, stratum).toBeCloseTo(w.population, 9);
}

describe('run --sample-share 0.2 --stratify-by application_date:month', () => {
  let sb: TestSandbox;
  let faulty: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: null } });
    // Some calls fail for good (one attempt each): failed sampled rows keep their stratum and weight.
    faulty = await startTestSandbox({ rate: { workflow: null }, faults: { 503: 0.1 }, seed: 25 });
  });
  afterAll(async () => {
    await sb?.close();
    await faulty?.close();
  });

  it('sends the n_h rows of smallest hash per month; stratum and weight on every line and file; weights add up to N_h', async () => {
    const dir = tempDir('bre-sample-');
    const out = join(dir, 'out');
    const before = faulty.sandbox.stats().services.workflow.requests;
    const r = await runInProcess(
      runArgs(
        'champion_challenger',
        INPUT,
        out,
        '--rate',
        'off',
        ...SAMPLE,
        '--max-attempts',
        '1',
        '--max-failure-share',
        '1',
        '--max-consecutive-failures',
        '0',
      ),
      faulty.env(),
    );
    expect(r.code, r.stderr).toBe(1);
    const o = readOutput(out);
    expect(o.errors.length).toBeGreaterThan(0);
    expect(o.errors.every((e) => e.code === 'SERVER_UNAVAILABLE')).toBe(true);
    expectTheSample(o);
    // Only the sample was sent: two workflow calls a row, one attempt each.
    expect(faulty.sandbox.stats().services.workflow.requests - before).toBe(
      2 * EXPECTED.size - o.errors.filter((e) => e.stage === 'champion').length,
    );
    // The three rows without a date are a stratum of their own: 2 of 3 rows, weight 1.5.
    const missing = o.summary.sample.strata.find((s: { name: string }) => s.name === '(missing)');
    expect(missing).toEqual({ name: '(missing)', values: [null], population: 3, sample: 2 });
    expect(o.summary.sample).toMatchObject({
      seed: 'bre-batch',
      population: 1500,
      sampled: EXPECTED.size,
      share: 0.2,
      size: null,
      rows_without_key: 0,
      rows_unreadable: 0,
    });
    expect(o.summary.rows).toMatchObject({
      read: 1500,
      not_in_sample: 1500 - EXPECTED.size,
      succeeded: o.results.length,
      failed: o.errors.length,
    });
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'));
    const { rows_without_key: _k, rows_unreadable: _u, ...design } = o.summary.sample;
    expect(manifest.sample).toEqual(design);
    expect(manifest.sample.stratify_by).toEqual([{ column: 'application_date', group: 'month' }]);
    // results.csv and results.parquet: stratum and weight right after row,key, every cell as in the journal.
    const header = o.csvLines[0].split(',');
    expect(header.slice(0, 5)).toEqual(['row', 'key', 'stratum', 'weight', 'champion.decision']);
    const first = o.csvLines[1].split(',');
    // The files are in row order (the journal in the order rows finished): the first line is the lowest row's.
    const line = o.results.reduce((a, b) => (b.row < a.row ? b : a));
    expect(first.slice(0, 4)).toEqual([String(line.row), line.key, line.stratum, String(line.weight)]);
    await expectMatchesJournal(join(out, 'results.parquet'), join(out, 'results.ndjson'), header);
    const errorsPq = await readParquet(join(out, 'errors.parquet'));
    expect(errorsPq.columns.slice(0, 5)).toEqual(['row', 'line', 'key', 'stratum', 'weight']);
    expect(errorsPq.rows.map((x) => x.weight)).toEqual(o.errors.map((e) => e.weight));
    // The report says it is a sample, and names the missing-value stratum.
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toContain(`A sample of ${EXPECTED.size} of 1,500 rows`);
    expect(html).toMatch(/\(missing\) <span class="note">— no readable value: a stratum of its own/);
    expect(r.stdout).toContain(
      `sample: ${EXPECTED.size} of 1500 rows in 16 strata (--sample-share 0.2 --stratify-by application_date:month --seed bre-batch)`,
    );
    // compare reads the folder as the sample it is: population estimates with intervals, the failed rows
    // known as missing data of the design.
    const cmp = await runInProcess(
      [
        'compare',
        out,
        out,
        '--stage-a',
        'champion',
        '--stage-b',
        'challenger',
        '--outcome',
        'defaulted',
        '--out',
        join(dir, 'cmp'),
      ],
      {},
    );
    expect(cmp.code, cmp.stderr).toBe(0);
    const cj = JSON.parse(readFileSync(join(dir, 'cmp', 'compare.json'), 'utf8'));
    expect(cj.sample.design.seed).toBe('bre-batch');
    expect(cj.sample.design.population).toBe(1500);
    const approval = cj.comparisons[0].estimates.approval.a;
    expect(approval.ci.lower).toBeLessThan(approval.estimate);
    expect(approval.ci.upper).toBeGreaterThan(approval.estimate);
  }, 60_000);

  it('a kill -9 and a resume choose the same keys; a resume with another seed is refused', async () => {
    const dir = tempDir('bre-sample-kill-');
    const out = join(dir, 'out');
    // 40 calls a second: the 600 calls take about 15 s, so the kill lands mid-way.
    const args = runArgs('champion_challenger', INPUT, out, '--rate', 'workflow=40/s', '--concurrency', '4', ...SAMPLE);
    const first = startCli(args, sb.env());
    await waitForLines(first, join(out, 'results.ndjson'), 40);
    first.child.kill('SIGKILL');
    expect((await first.done).signal).toBe('SIGKILL');
    const partial = readOutput(out);
    expect(partial.results.length).toBeLessThan(EXPECTED.size);
    const refused = await runInProcess([...args, '--seed', 'another'], sb.env());
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/refusing to resume .*--seed "bre-batch" then, "another" now/);
    const resumed = await runInProcess([...args.map((a) => (a === 'workflow=40/s' ? 'off' : a))], sb.env());
    expect(resumed.code, resumed.stderr).toBe(0);
    const o = readOutput(out);
    expectTheSample(o);
    expect(o.summary.rows.resumed).toBe(partial.results.length + partial.errors.length);
    expect(o.csvLines).toHaveLength(EXPECTED.size + 1);
  }, 90_000);

  it('two shards, merged, equal one run: the same rows, strata, weights and design', async () => {
    const dir = tempDir('bre-sample-shards-');
    const one = join(dir, 'one');
    const outs = [join(dir, 'w1'), join(dir, 'w2')];
    const runs = await Promise.all([
      runInProcess(runArgs('champion_challenger', INPUT, one, '--rate', 'off', ...SAMPLE), sb.env()),
      ...outs.map((o, i) =>
        runInProcess(
          runArgs('champion_challenger', INPUT, o, '--rate', 'off', ...SAMPLE, '--shard', `${i + 1}/2`),
          sb.env(),
        ),
      ),
    ]);
    expect(
      runs.map((r) => r.code),
      runs.map((r) => r.stderr).join('\n'),
    ).toEqual([0, 0, 0]);
    // Each worker drew the whole sample and ran its shard of it.
    for (const [i, o] of outs.entries()) {
      const w = readOutput(o);
      const mine = [...EXPECTED.keys()]
        .filter((row) => shardOf(ALL[row - 1].key, row, 2) === i + 1)
        .sort((x, y) => x - y);
      expect(w.results.map((l) => l.row).sort((a, b) => a - b)).toEqual(mine);
      expect(w.summary.rows.out_of_shard).toBe(EXPECTED.size - mine.length);
    }
    const merged = join(dir, 'merged');
    const m = await runInProcess(['merge', ...outs, '--out', merged]);
    expect(m.code, m.stderr).toBe(0);
    const a = readOutput(one);
    const b = readOutput(merged);
    expectTheSample(b);
    const view = (o: RunFolder) =>
      o.results
        .map((l) => ({
          row: l.row,
          key: l.key,
          stratum: l.stratum,
          weight: l.weight,
          champion: (l.stages as any).champion.decision,
          challenger: (l.stages as any).challenger.decision,
        }))
        .sort((x, y) => x.row - y.row);
    expect(view(b)).toEqual(view(a));
    expect(b.csvLines[0]).toBe(a.csvLines[0]);
    const manifest = (d: string) => JSON.parse(readFileSync(join(d, 'manifest.json'), 'utf8'));
    expect(manifest(merged).sample).toEqual(manifest(one).sample);
    expect(b.summary.sample).toEqual(a.summary.sample);
    expect(b.summary.rows.missing).toBe(0);
    await expectMatchesJournal(
      join(merged, 'results.parquet'),
      join(merged, 'results.ndjson'),
      b.csvLines[0].split(','),
    );
    expect(readFileSync(join(merged, 'report.html'), 'utf8')).toContain(`A sample of ${EXPECTED.size} of 1,500 rows`);
    // A sampled row missing from a shard is found: the stratum must hold n_h rows over the shards.
    const damaged = join(dir, 'w1-damaged');
    cpSync(outs[0], damaged, { recursive: true });
    const [dropped, ...kept] = journalText(join(damaged, 'results.ndjson')).trimEnd().split('\n');
    writeFileSync(join(damaged, 'results.ndjson'), `${kept.join('\n')}\n`);
    const report = await mergeOutputs({ dirs: [damaged, outs[1]], out: join(dir, 'merged-damaged') });
    expect(report.ok).toBe(false);
    expect(report.missingRows).toEqual({
      count: 1,
      first: [],
      strata: [{ name: JSON.parse(dropped).stratum, missing: 1 }],
    });
    expect(formatMergeReport(report)).toContain(
      `1 row of the sample is in no shard: 1 of stratum ${JSON.parse(dropped).stratum}`,
    );
    // A worker drawn with another seed cannot be merged in.
    const other = join(dir, 'other');
    expect(
      (
        await runInProcess(
          runArgs('champion_challenger', INPUT, other, '--rate', 'off', ...SAMPLE, '--seed', 'x', '--shard', '2/2'),
          sb.env(),
        )
      ).code,
    ).toBe(0);
    const bad = await spawnCli(['merge', outs[0], other, '--out', join(dir, 'bad')], {});
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/is not the same sample as .*--seed "bre-batch" in .*w1, "x" in .*other/);
  }, 120_000);

  it('a --stratify-by column the input lacks is exit 2 before any call and before the folder exists', async () => {
    const dir = tempDir('bre-sample-col-');
    const before = sb.sandbox.stats().services.workflow.requests;
    const csv = await runInProcess(
      runArgs(
        'champion_challenger',
        INPUT,
        join(dir, 'a'),
        '--sample-share',
        '0.2',
        '--stratify-by',
        'application_month',
      ),
      sb.env(),
    );
    expect(csv.code).toBe(2);
    expect(csv.stderr).toMatch(/missing: application_month/);
    expect(csv.stderr).toMatch(/did you mean: 'application_date'/);
    const ndjson = join(dir, 'in.ndjson');
    writeFileSync(
      ndjson,
      ALL.slice(0, 20)
        .map((r) => JSON.stringify({ reference_id: r.key, user_id: 'u', application_date: r.month }))
        .join('\n'),
    );
    const nd = await runInProcess(
      runArgs('champion_challenger', ndjson, join(dir, 'b'), '--sample', '5', '--stratify-by', 'channel'),
      sb.env(),
    );
    expect(nd.code).toBe(2);
    expect(nd.stderr).toMatch(
      /Expected every --stratify-by column in the input's rows, got 'channel' in none of its 20 rows/,
    );
    const usage = await runInProcess(
      runArgs('champion_challenger', INPUT, join(dir, 'c'), '--sample', '10', '--sample-share', '0.1'),
      sb.env(),
    );
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/Expected one of --sample N and --sample-share P, got both/);
    const stdin = await spawnCli(
      [
        'run',
        'champion_challenger',
        '--input',
        '-',
        '--input-format',
        'csv',
        '--out',
        join(dir, 'd'),
        '--sample',
        '10',
      ],
      sb.env(),
      { stdin: readFileSync(INPUT) },
    );
    expect(stdin.code).toBe(2);
    expect(stdin.stderr).toMatch(/Expected --input to be a file with --sample or --sample-share, got - \(stdin\)/);
    expect(sb.sandbox.stats().services.workflow.requests).toBe(before);
    for (const x of ['a', 'b', 'c', 'd']) expect(existsSync(join(dir, x))).toBe(false);
  }, 60_000);

  it('a row without a key is SAMPLE_NO_KEY, in no stratum; --limit draws from the first N rows; --dry-run validates the sample only', async () => {
    const dir = tempDir('bre-sample-nokey-');
    const [header, ...lines] = readFileSync(INPUT, 'utf8').trimEnd().split('\n');
    // Rows 1-400, row 5 without its reference_id.
    const input = join(dir, 'in.csv');
    writeFileSync(
      input,
      `${[header, ...lines.slice(0, 400).map((l, i) => (i === 4 ? l.replace(/^CC-00005/, '') : l))].join('\n')}\n`,
    );
    const out = join(dir, 'out');
    const r = await runInProcess(
      runArgs('champion_challenger', input, out, '--rate', 'off', '--limit', '300', ...SAMPLE),
      sb.env(),
    );
    expect(r.code, r.stderr).toBe(1);
    const o = readOutput(out);
    expect(o.errors).toHaveLength(1);
    expect(o.errors[0]).toMatchObject({ row: 5, key: null, code: 'SAMPLE_NO_KEY', field: 'reference_id' });
    expect(o.errors[0].stratum).toBeUndefined();
    // The sample of the first 300 rows, row 5 (no key) in no stratum.
    const expected = expectedDraw(ALL.slice(0, 300).filter((x) => x.row !== 5));
    expect(o.results.map((l) => l.row).sort((a, b) => a - b)).toEqual([...expected.keys()].sort((a, b) => a - b));
    expect(o.summary.sample).toMatchObject({ population: 299, rows_without_key: 1 });
    expect(o.results.every((l) => l.weight === expected.get(l.row)!.weight)).toBe(true);
    // A resume with another --limit would draw another sample: refused.
    const again = await runInProcess(
      runArgs('champion_challenger', input, out, '--rate', 'off', '--limit', '200', ...SAMPLE),
      sb.env(),
    );
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(
      /its sample was drawn from the first 300 rows \(--limit 300\), now from the first 200/,
    );

    const dry = await runInProcess(runArgs('champion_challenger', INPUT, join(dir, 'dry'), '--dry-run', ...SAMPLE));
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`rows: 1500 read, ${EXPECTED.size} valid, 0 would fail`);
    // Nothing would fail: nothing written, not even the folder.
    expect(existsSync(join(dir, 'dry'))).toBe(false);
  }, 60_000);

  it("--plan shows the sample's time beside the whole input's", async () => {
    const r = await runInProcess(['run', 'champion_challenger', '--input', INPUT, '--plan', ...SAMPLE]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      `a sample of ${EXPECTED.size} of 1,500 rows, 16 strata (--sample-share 0.2 --stratify-by application_date:month --seed bre-batch)`,
    );
    expect(r.stdout).toContain(`rows to do: ${EXPECTED.size}`);
    // 2 workflow calls a row at the documented 500/min.
    expect(r.stdout).toContain(`workflow: ${2 * EXPECTED.size} calls at 500/min`);
    expect(r.stdout).toMatch(
      /beside it, the whole input: 1,500 rows, about 6 min \(5\.0x as long\); the sample: 300 rows, about 1 min/,
    );
  }, 30_000);
});
