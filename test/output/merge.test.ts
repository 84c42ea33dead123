import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPipeline } from '../../src/config/pipeline.js';
import { BreError } from '@bre-batch/core/errors';
import { formatMergeReport, mergeOutputs } from '../../src/output/merge.js';
import { shardOf } from '../../src/input/shard.js';
import { runSummarySchema, type RunSummary } from '@bre-batch/formats';
import { tempDir } from '../helpers/temp.js';

const N = 3;
const TOTAL = 30;
const location = loadPipeline('location');
const tmp = () => tempDir('bre-merge-');

interface ShardSpec {
  readonly index: number;
  readonly count?: number;
  readonly inputSha?: string;
  /** manifest.json's input.reading (how the rows were read). */
  readonly reading?: { encoding: string | null; delimiter: string | null; decimal_comma: boolean };
  readonly pipelinePath?: string;
  readonly pipelineSha?: string;
  readonly finished?: boolean;
  /** Rows to leave out / add beyond those the shard owns. */
  readonly drop?: readonly number[];
  readonly extra?: readonly number[];
  /** Lines of the shard's transactions journal (.state/transactions.ndjson). */
  readonly transactions?: readonly { key: string; transactions: readonly Record<string, unknown>[] }[];
}

const keyOf = (row: number) => `LOC-${String(row).padStart(4, '0')}`;
/** The run id of shard K's folder. */
const runOf = (k: number) => `00000000-0000-4000-8000-00000000000${k}`;
/** Rows whose number is a multiple of 7 failed; the others succeeded. */
const failed = (row: number) => row % 7 === 0;

const callStats = (attempts: number, retries: number) => ({
  attempts,
  retries,
  throttled_429: 0,
  statuses: { 200: attempts - retries },
  latency_ms: { p50: 1, p95: 2, p99: 3 },
  network_ms: attempts,
  achieved_per_minute: null,
});

/** A worker's summary.json as the runner writes it (the schema in src/output/format checks it here too). */
function shardSummary(spec: ShardSpec, count: number, succeeded: number, failed: number): RunSummary {
  const attempts = succeeded + failed + 1;
  return runSummarySchema.parse({
    pipeline: 'location',
    input: '/data/in.csv',
    out: `w${spec.index}`,
    dry_run: false,
    finished: spec.finished ?? true,
    stopped: null,
    shard: `${spec.index}/${count}`,
    rows: {
      succeeded,
      failed,
      read: TOTAL,
      processed_this_session: succeeded + failed,
      succeeded_this_session: succeeded,
      failed_this_session: failed,
      invalid_this_session: 0,
      resumed: 0,
      retried_from_errors: 0,
      out_of_shard: TOTAL - succeeded - failed,
    },
    warnings: 0,
    seconds: 10 + spec.index,
    rows_per_second: null,
    stages: {
      location: {
        kind: 'workflow',
        endpoint: 'location_bre',
        rows_ran: succeeded,
        rows_skipped: 0,
        rows_failed: failed,
        calls: attempts - 1,
        ...callStats(attempts, 1),
      },
    },
    services: {
      workflow: {
        rate_limit: '500/min',
        concurrency: 8,
        ...callStats(attempts, 1),
        limiter_wait_ms: 0,
        retry_wait_ms: 0,
        limiter_final_per_minute: 500,
      },
    },
    decisions: { location: {} },
    ...(spec.transactions ? { transactions: 1 } : {}),
  });
}

function makeShard(root: string, spec: ShardSpec): string {
  const count = spec.count ?? N;
  const dir = join(root, `w${spec.index}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({
      version: 1,
      tool: 'bre-batch',
      pipeline: {
        name: 'location',
        path: spec.pipelinePath ?? location.path,
        sha256: spec.pipelineSha ?? location.sha256,
      },
      input: {
        path: '/data/in.csv',
        format: 'csv',
        size: 100,
        sha256: spec.inputSha ?? 'in-sha',
        reading: spec.reading ?? { encoding: 'utf-8', delimiter: ',', decimal_comma: false },
      },
      key: 'reference_id',
      shard: `${spec.index}/${count}`,
      limit: null,
      created_at: '2026-01-01T00:00:00Z',
      run_id: runOf(spec.index),
      sessions: [
        {
          session: 1,
          started_at: '2026-01-01T00:00:00Z',
          host: 'h',
          user: 'u',
          pid: 1,
          tool_version: '0.0.0',
          options: {},
          rows: 0,
        },
      ],
    }),
  );
  const rows = Array.from({ length: TOTAL }, (_, i) => i + 1)
    .filter((r) => shardOf(keyOf(r), r, count) === spec.index && !(spec.drop ?? []).includes(r))
    .concat(spec.extra ?? []);
  const results = rows
    .filter((r) => !failed(r))
    .map((r) =>
      JSON.stringify({
        row: r,
        key: keyOf(r),
        run_id: runOf(spec.index),
        run_session: 1,
        stages: {
          location: { decision: r % 2 ? 'Approve' : 'Reject', loan_amount: r * 1000, [`extra_${spec.index}`]: 1 },
        },
      }),
    );
  const errors = rows.filter(failed).map((r) =>
    JSON.stringify({
      row: r,
      line: r + 1,
      key: keyOf(r),
      run_id: runOf(spec.index),
      run_session: 1,
      stage: 'location',
      status: 422,
      code: 'VALIDATION_FAILED',
      message: 'bad',
      attempts: 1,
      input: {},
    }),
  );
  writeFileSync(join(dir, 'results.ndjson'), results.map((l) => `${l}\n`).join(''));
  writeFileSync(join(dir, 'errors.ndjson'), errors.map((l) => `${l}\n`).join(''));
  if (spec.transactions) {
    mkdirSync(join(dir, '.state'), { recursive: true });
    writeFileSync(
      join(dir, '.state', 'transactions.ndjson'),
      spec.transactions.map((t, i) => `${JSON.stringify({ row: i + 1, ...t })}\n`).join(''),
    );
  }
  writeFileSync(join(dir, 'summary.json'), JSON.stringify(shardSummary(spec, count, results.length, errors.length)));
  return dir;
}

function threeShards(root: string, over: Partial<Record<number, Partial<ShardSpec>>> = {}): string[] {
  return [1, 2, 3].map((k) => makeShard(root, { index: k, ...over[k] }));
}

const lines = (p: string) => readFileSync(p, 'utf8').split('\n').filter(Boolean);

describe('merge: happy path', () => {
  it('combines three shards into one folder with every row once, a rebuilt CSV and a summary', async () => {
    const root = tmp();
    const dirs = threeShards(root);
    const out = join(root, 'merged');
    const warnings: string[] = [];
    const r = await mergeOutputs({ dirs: [dirs[2], dirs[0], dirs[1]], out, log: (l) => warnings.push(l) });
    expect(r.ok).toBe(true);
    expect(warnings).toEqual([]);
    const okRows = Array.from({ length: TOTAL }, (_, i) => i + 1).filter((x) => !failed(x));
    expect(r.rows).toEqual({ succeeded: okRows.length, failed: TOTAL - okRows.length });
    const res = lines(join(out, 'results.ndjson')).map((l) => JSON.parse(l).row as number);
    const err = lines(join(out, 'errors.ndjson')).map((l) => JSON.parse(l).row as number);
    expect([...res].sort((a, b) => a - b)).toEqual(okRows);
    expect([...res, ...err].sort((a, b) => a - b)).toEqual(Array.from({ length: TOTAL }, (_, i) => i + 1));
    const csv = lines(join(out, 'results.csv'));
    expect(csv.length).toBe(okRows.length + 1);
    // Known columns of the pipeline's stage first, then the union of every shard's other fields, sorted.
    expect(csv[0].startsWith('row,key,location.decision')).toBe(true);
    expect(csv[0]).toMatch(/location\.extra_1,location\.extra_2,location\.extra_3,run_id,run_session$/);
    // Each row keeps the run and session of the shard that wrote it.
    for (const l of csv.slice(1)) {
      const row = Number(l.slice(0, l.indexOf(',')));
      expect(l.endsWith(`,${runOf(shardOf(keyOf(row), row, N))},1`), l).toBe(true);
    }
    for (const l of lines(join(out, 'errors.ndjson')).map((x) => JSON.parse(x)))
      expect(l.run_id).toBe(runOf(shardOf(l.key, l.row, N)));
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'));
    expect(manifest.shard).toBeNull();
    expect(manifest.merged_from.map((m: { shard: string }) => m.shard)).toEqual(['1/3', '2/3', '3/3']);
    expect(manifest.merged_from.map((m: { run_id: string }) => m.run_id)).toEqual([1, 2, 3].map(runOf));
    // Not the first shard's run: the merged folder has its own record (none until a run resumes it).
    expect(manifest.run_id).toBeUndefined();
    expect(manifest.sessions).toBeUndefined();
    expect(manifest.input.sha256).toBe('in-sha');
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    expect(summary.finished).toBe(true);
    expect(summary.rows).toEqual({ succeeded: okRows.length, failed: TOTAL - okRows.length, missing: 0 });
    expect(summary.services.workflow.attempts).toBe(TOTAL + 3);
    expect(summary.seconds).toBe(13);
    expect(summary.decisions.location.Approve + summary.decisions.location.Reject).toBe(okRows.length);
    expect(Object.keys(summary.shard_summaries)).toEqual(['1/3', '2/3', '3/3']);
    expect(formatMergeReport(r)).toMatch(/Merged 3 of 3 shards\n {2}rows: 26 succeeded, 4 in errors/);
  });

  it("rebuilds transactions.csv and transactions.parquet from the shards' transaction journals, keeping quoted newlines", async () => {
    const root = tmp();
    const header = 'key,source,account,txn_id,timestamp,value_date,type,amount,balance,mode,narration\n';
    const txn = (
      source: string,
      account: string,
      id: string,
      type: string,
      amount: number,
      mode: string,
      narration: string,
    ) => ({
      source,
      account,
      txn_id: id,
      timestamp: null,
      value_date: null,
      type,
      amount,
      balance: null,
      mode,
      narration,
    });
    const dirs = threeShards(root, {
      1: {
        transactions: [{ key: 'LOC-0001', transactions: [txn('aa', 'X1', 't1', 'DEBIT', 10, 'UPI', 'two\nlines')] }],
      },
      3: { transactions: [{ key: 'LOC-0003', transactions: [txn('bsa', 'X3', 't3', 'CREDIT', 5, 'NEFT', 'plain')] }] },
    });
    const out = join(root, 'merged');
    expect((await mergeOutputs({ dirs, out })).ok).toBe(true);
    expect(readFileSync(join(out, 'transactions.csv'), 'utf8')).toBe(
      `${header}LOC-0001,aa,X1,t1,,,DEBIT,10,,UPI,"two\nlines"\nLOC-0003,bsa,X3,t3,,,CREDIT,5,,NEFT,plain\n`,
    );
    expect(existsSync(join(out, 'transactions.parquet'))).toBe(true);
    expect(JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')).transactions).toBe(2);
  });

  it('without the pipeline file, takes the stage list from the shards and still builds the CSV', async () => {
    const root = tmp();
    const dirs = [1, 2, 3].map((k) => makeShard(root, { index: k, pipelinePath: '/nowhere/location.yaml' }));
    const warnings: string[] = [];
    const r = await mergeOutputs({ dirs, out: join(root, 'm'), log: (l) => warnings.push(l) });
    expect(r.ok).toBe(true);
    expect(warnings.join('\n')).toMatch(/not found/);
    expect(lines(join(root, 'm', 'results.csv'))[0]).toBe(
      'row,key,location.decision,location.extra_1,location.extra_2,location.extra_3,location.loan_amount,run_id,run_session',
    );
  });

  it('replaces an earlier merge in --out, refuses a run folder or one of the shards', async () => {
    const root = tmp();
    const dirs = threeShards(root);
    const out = join(root, 'merged');
    expect((await mergeOutputs({ dirs, out })).ok).toBe(true);
    expect((await mergeOutputs({ dirs, out })).ok).toBe(true);
    expect(lines(join(out, 'results.ndjson')).length).toBe(26);
    await expect(mergeOutputs({ dirs, out: dirs[0] })).rejects.toThrow(/one of the folders being merged/);
    const run = join(root, 'run');
    mkdirSync(run);
    writeFileSync(join(run, 'manifest.json'), '{}');
    writeFileSync(join(run, 'results.ndjson'), '{"row":1}\n');
    await expect(mergeOutputs({ dirs, out: run })).rejects.toThrow(/holds a run's output/);
  });
});

describe('merge: warnings', () => {
  it('a missing shard is warned about; the merge is written and marked unfinished', async () => {
    const root = tmp();
    const dirs = threeShards(root);
    const warnings: string[] = [];
    const r = await mergeOutputs({ dirs: [dirs[0], dirs[2]], out: join(root, 'm'), log: (l) => warnings.push(l) });
    expect(r.ok).toBe(true);
    expect(r.missingShards).toEqual([2]);
    expect(r.missingRows).toBeNull();
    expect(warnings.join('\n')).toMatch(/shard 2\/3 not given/);
    const summary = JSON.parse(readFileSync(join(root, 'm', 'summary.json'), 'utf8'));
    expect(summary.finished).toBe(false);
    expect(summary.shards.missing).toEqual(['2/3']);
    expect(formatMergeReport(r)).toMatch(/INCOMPLETE/);
  });

  it('an unfinished shard is warned about, and its missing rows are not an error yet', async () => {
    const root = tmp();
    const owned = Array.from({ length: TOTAL }, (_, i) => i + 1).filter((x) => shardOf(keyOf(x), x, N) === 2);
    const dirs = threeShards(root, { 2: { finished: false, drop: [owned[0]] } });
    const warnings: string[] = [];
    const r = await mergeOutputs({ dirs, out: join(root, 'm'), log: (l) => warnings.push(l) });
    expect(r.ok).toBe(true);
    expect(warnings.join('\n')).toMatch(/w2 has not finished/);
    expect(r.unfinishedShards).toEqual([dirs[1]]);
  });
});

describe('merge: the invariant', () => {
  it('a row in two shards fails with the list, and nothing is written', async () => {
    const root = tmp();
    const inShard1 = Array.from({ length: TOTAL }, (_, i) => i + 1).find((x) => shardOf(keyOf(x), x, N) === 1)!;
    const dirs = threeShards(root, { 2: { extra: [inShard1] } });
    const out = join(root, 'm');
    const r = await mergeOutputs({ dirs, out });
    expect(r.ok).toBe(false);
    // Once as a duplicate (shard 2 saw it after shard 1 had it)...
    expect(r.problems.filter((p) => p.problem === 'duplicate')).toEqual([
      {
        row: inShard1,
        key: keyOf(inShard1),
        problem: 'duplicate',
        found: [
          join(dirs[0], failed(inShard1) ? 'errors.ndjson' : 'results.ndjson'),
          join(dirs[1], failed(inShard1) ? 'errors.ndjson' : 'results.ndjson'),
        ],
      },
    ]);
    expect(existsSync(join(out, 'results.ndjson'))).toBe(false);
    expect(formatMergeReport(r)).toMatch(
      new RegExp(
        `merge FAILED.*\\n.*1 row break the invariant[^]*row ${inShard1} \\(key "${keyOf(inShard1)}"\\): in both`,
      ),
    );
  });

  it('a row in the shard its key does not hash to is reported', async () => {
    const root = tmp();
    const inShard1 = Array.from({ length: TOTAL }, (_, i) => i + 1).find((x) => shardOf(keyOf(x), x, N) === 1)!;
    const dirs = threeShards(root, { 1: { drop: [inShard1] }, 2: { extra: [inShard1] } });
    const r = await mergeOutputs({ dirs, out: join(root, 'm') });
    expect(r.ok).toBe(false);
    expect(r.problems).toEqual([expect.objectContaining({ row: inShard1, problem: 'wrong shard' })]);
  });

  it('a row in no shard, all shards finished, fails with the row numbers', async () => {
    const root = tmp();
    const dirs = threeShards(root, { 3: { drop: Array.from({ length: TOTAL }, (_, i) => i + 1) } });
    const r = await mergeOutputs({ dirs, out: join(root, 'm') });
    expect(r.ok).toBe(false);
    const owned3 = Array.from({ length: TOTAL }, (_, i) => i + 1).filter((x) => shardOf(keyOf(x), x, N) === 3);
    expect(r.missingRows).toEqual({ count: owned3.length, first: owned3 });
    expect(formatMergeReport(r)).toMatch(/are in no shard: rows/);
  });

  it('a row in both results and errors of one shard is a duplicate', async () => {
    const root = tmp();
    const dirs = threeShards(root);
    const res = lines(join(dirs[0], 'results.ndjson'));
    const row = JSON.parse(res[0]).row as number;
    writeFileSync(
      join(dirs[0], 'errors.ndjson'),
      `${readFileSync(join(dirs[0], 'errors.ndjson'), 'utf8')}${JSON.stringify({ row, key: keyOf(row), code: 'X' })}\n`,
    );
    const r = await mergeOutputs({ dirs, out: join(root, 'm') });
    expect(r.ok).toBe(false);
    expect(r.problems[0]).toMatchObject({ row, problem: 'duplicate' });
  });
});

describe('merge: folders that do not belong together (exit 2)', () => {
  const cases: Array<[string, Partial<ShardSpec>, RegExp]> = [
    ['another input', { inputSha: 'other' }, /whose contents differ/],
    ['another pipeline', { pipelineSha: 'other' }, /other contents/],
    ['another shard count', { count: 4 }, /Expected one of 3/],
    [
      'the input read otherwise',
      { reading: { encoding: 'windows-1252', delimiter: ';', decimal_comma: true } },
      /w2 read its input with encoding windows-1252, separator ';' \(semicolon\), --decimal-comma, .*w1 with encoding utf-8, separator ',' \(comma\), no --decimal-comma/,
    ],
  ];
  it.each(cases)('%s', async (_, over, message) => {
    const root = tmp();
    const dirs = threeShards(root, { 2: over });
    const err = await mergeOutputs({ dirs, out: join(root, 'm') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BreError);
    expect((err as BreError).code).toBe('OUTPUT_MISMATCH');
    expect((err as BreError).message).toMatch(message);
  });

  it('the same shard twice, an unsharded run, a folder without manifest', async () => {
    const root = tmp();
    const dirs = threeShards(root);
    await expect(mergeOutputs({ dirs: [dirs[0], dirs[0]], out: join(root, 'm') })).rejects.toThrow(
      /shard 1\/3 given twice/,
    );
    const plain = join(root, 'plain');
    mkdirSync(plain);
    writeFileSync(
      join(plain, 'manifest.json'),
      JSON.stringify({ ...JSON.parse(readFileSync(join(dirs[0], 'manifest.json'), 'utf8')), shard: null }),
    );
    await expect(mergeOutputs({ dirs: [dirs[0], plain], out: join(root, 'm') })).rejects.toThrow(/not a shard/);
    await expect(mergeOutputs({ dirs: [dirs[0], root], out: join(root, 'm') })).rejects.toThrow(
      /not a bre-batch output folder: Expected .*manifest.json, got no such file/,
    );
  });
});

it('the merged folder is private where the shards held secrets', async () => {
  const root = tmp();
  const dirs = threeShards(root);
  writeFileSync(join(dirs[0], 'secrets.ndjson'), '{"row":1,"secrets":[]}\n', { mode: 0o600 });
  await mergeOutputs({ dirs, out: join(root, 'm') });
  expect(statSync(resolve(root, 'm', 'secrets.ndjson')).mode & 0o777).toBe(0o600);
});

describe('bre-batch merge (the yargs command the CLI wires in)', () => {
  it('parses <dirs..> --out and sets the exit code: 0 merged, 1 invariant broken', async () => {
    const { default: yargs } = await import('yargs');
    const { mergeCommand } = await import('../../src/cli/merge.js');
    const root = tmp();
    const dirs = threeShards(root);
    const saved = process.exitCode;
    const write = process.stdout.write.bind(process.stdout);
    const errWrite = process.stderr.write.bind(process.stderr);
    let printed = '';
    process.stdout.write = ((t: string) => {
      printed += t;
      return true;
    }) as typeof process.stdout.write;
    process.stderr.write = ((t: string) => {
      printed += t;
      return true;
    }) as typeof process.stderr.write;
    try {
      await yargs(['merge', ...dirs, '--out', join(root, 'm')])
        .command(mergeCommand as never)
        .strict()
        .parseAsync();
      expect(process.exitCode).toBe(0);
      expect(printed).toMatch(/Merged 3 of 3 shards/);
      const inShard1 = Array.from({ length: TOTAL }, (_, i) => i + 1).find((x) => shardOf(keyOf(x), x, N) === 1)!;
      const bad = threeShards(tmp(), { 3: { extra: [inShard1] } });
      await yargs(['merge', ...bad, '--out', join(root, 'm2')])
        .command(mergeCommand as never)
        .strict()
        .parseAsync();
      expect(process.exitCode).toBe(1);
      expect(printed).toMatch(/merge FAILED/);
    } finally {
      process.stdout.write = write;
      process.stderr.write = errWrite;
      process.exitCode = saved;
    }
  });
});
