/**
 * Every shipped pipeline runs on its sample, against the built-in sandbox (no base URL set), as a user would:
 * so pipelines, samples and the contract's output schema cannot drift apart. The folders are the point: the
 * runs are the CLI's code in this process (test/helpers/cli-in-process.ts: the same options, resolution and
 * executeRun), without a CLI's start-up each, and so are `--dry-run` and a refusal after the first; what only
 * the process shows (the bin's listing, stdin, a usage error's exit through main.ts) is the spawned CLI.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, spawnCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { convertSamples } from '../../scripts/convert-samples.mjs';
import { journalText } from '../helpers/output.js';
import { runInProcess } from '../helpers/cli-in-process.js';

/** The CLI with no base URL and no credentials: the built-in sandbox. */
const cli = (args: string[], stdin?: string) => spawnCli(args, {}, { stdin });

function dataRows(sample: string): number {
  const text = readFileSync(sample, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  return sample.endsWith('.csv') ? text.length - 1 : text.length;
}

const pipelines = readdirSync(join(ROOT, 'pipelines'))
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => f.replace(/\.yaml$/, ''));
/** Output folder of each pipeline's run on its sample (compared below with the Parquet and gzip runs). */
const sampleRuns = new Map<string, string>();

describe('shipped pipelines on their samples', () => {
  it('each pipeline has a sample input', () => {
    for (const p of pipelines) {
      const sample = readdirSync(join(ROOT, 'samples')).find((f) => f.startsWith(`${p}.`));
      expect(sample, `samples/${p}.csv or .ndjson`).toBeDefined();
    }
  });

  it.each(pipelines)('%s: every row in results, the contract schema, exit 0', async (p) => {
    const sample = join(ROOT, 'samples', readdirSync(join(ROOT, 'samples')).find((f) => f.startsWith(`${p}.`))!);
    const out = tempDir(`bre-e2e-${p}-`);
    const r = await runInProcess(['run', p, '--input', sample, '--out', out, '--rate', 'off']);
    sampleRuns.set(p, out);
    expect(r.stderr).toMatch(/using the built-in sandbox at http:\/\/127\.0\.0\.1:\d+/);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const results = journalText(join(out, 'results.ndjson'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(results).toHaveLength(dataRows(sample));
    expect(new Set(results.map((x) => x.row)).size).toBe(results.length);
    const runId = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')).run_id;
    expect(runId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    for (const line of results) {
      // The run and the session that wrote the row, after its key.
      expect(Object.keys(line)).toEqual(['row', 'key', 'run_id', 'run_session', 'stages']);
      expect([line.run_id, line.run_session]).toEqual([runId, 1]);
      expect(typeof line.key).toBe('string');
    }
    expect(journalText(join(out, 'errors.ndjson'))).toBe('');
    const csv = readFileSync(join(out, 'results.csv'), 'utf8').trim().split('\n');
    expect(csv[0].startsWith('row,key,')).toBe(true);
    expect(csv[0].endsWith(',run_id,run_session')).toBe(true);
    expect(csv).toHaveLength(results.length + 1);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    expect(summary.rows.succeeded).toBe(results.length);
    expect(summary.finished).toBe(true);
    // Decisions are counted once a row (a short run's rows are read back from the journal at the end too).
    for (const [stage, counts] of Object.entries<Record<string, number>>(summary.decisions)) {
      const seen: Record<string, number> = {};
      for (const line of results) {
        const st = line.stages[stage];
        const d = st?.skipped === true ? '(skipped)' : st?.decision;
        if (typeof d === 'string') seen[d] = (seen[d] ?? 0) + 1;
      }
      expect(counts, `${p}: decisions of stage ${stage}`).toEqual(seen);
    }
    const first = results[0].stages;
    for (const [id, st] of Object.entries<Record<string, unknown>>(first)) {
      const pipelineText = readFileSync(join(ROOT, 'pipelines', `${p}.yaml`), 'utf8');
      if (new RegExp(`id: ${id}\\n\\s+kind: workflow`).test(pipelineText) && st.skipped !== true) {
        for (const f of [
          'decision',
          'decision_reason',
          'loan_amount',
          'repayment_date',
          'emi_decision',
          'loan_offers',
          'offers_count',
          'rule_engine_name',
          'rules_version',
          'rules_failed',
          'workflow',
          'workflow_version',
          'request_id',
        ]) {
          expect(st, `${p}.${id}.${f}`).toHaveProperty([f]);
        }
      }
    }
    if (['aa_transactions', 'bsa_transactions'].includes(p)) {
      const tx = readFileSync(join(out, 'transactions.csv'), 'utf8').split('\n');
      expect(tx[0]).toBe('key,source,account,txn_id,timestamp,value_date,type,amount,balance,mode,narration');
      expect(tx.length).toBeGreaterThan(10);
    } else {
      expect(existsSync(join(out, 'transactions.csv'))).toBe(false);
    }
    expect(r.stdout).toMatch(new RegExp(`output: ${out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  });

  it('`pipelines` lists every pipeline with its columns', async () => {
    const r = await cli(['pipelines']);
    expect(r.code).toBe(0);
    for (const p of pipelines) expect(r.stdout).toMatch(new RegExp(`^${p}`, 'm'));
    expect(r.stdout).toMatch(/required: .*latitude/);
  });

  it('--dry-run validates everything and calls nothing', async () => {
    const out = tempDir('bre-e2e-dry-');
    const r = await runInProcess([
      'run',
      'location',
      '--input',
      join(ROOT, 'samples', 'location.csv'),
      '--out',
      out,
      '--dry-run',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/sandbox/);
    expect(r.stdout).toMatch(/12 valid, 0 would fail/);
    expect(existsSync(join(out, 'results.ndjson'))).toBe(false);
  });

  it('reads stdin with --input - (and needs --input-format for it)', async () => {
    const out = tempDir('bre-e2e-stdin-');
    const text = readFileSync(join(ROOT, 'samples', 'location.csv'), 'utf8');
    const r = await cli(
      ['run', 'location', '--input', '-', '--input-format', 'csv', '--out', out, '--rate', 'off'],
      text,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(journalText(join(out, 'results.ndjson')).trim().split('\n')).toHaveLength(12);
    const bare = await cli(['run', 'location', '--input', '-'], text);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(
      /Expected --input-format csv, tsv or ndjson \(gzip'ed: csv.gz, tsv.gz, ndjson.gz\) when reading stdin/,
    );
  });

  it('usage errors exit 2 with Expected/got', async () => {
    const r = await cli([
      'run',
      'location',
      '--input',
      join(ROOT, 'samples', 'location.csv'),
      '--rate',
      'workflow=fast',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Expected --rate SERVICE=N\/UNIT.*got 'workflow=fast'/);
    expect((await runInProcess(['run', 'nope', '--input', 'x.csv'])).stderr).toMatch(/no pipeline named 'nope'/);
    expect((await cli(['frobnicate'])).code).toBe(2);
  });
});

/**
 * results.ndjson as comparable between two runs, its lines sorted: what the service stamps on each call (its
 * 32-hex request ids, the times of the run) is masked.
 */
function comparableResults(dir: string): string[] {
  const now = Date.now();
  const dateTime = /\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?/g;
  const mask = (s: string) =>
    s
      .replace(/\b[0-9a-f]{32}\b/g, '<id>')
      .replace(dateTime, (m) => (Math.abs(Date.parse(m.replace(' ', 'T')) - now) < 10 * 86_400_000 ? '<now>' : m));
  // Each folder is a run of its own: its id is the same in every line (checked), and compared as '<run>'.
  const runId = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')).run_id as string;
  return journalText(join(dir, 'results.ndjson'))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const line = JSON.parse(l, (_k, v: unknown) => (typeof v === 'string' ? mask(v) : v)) as Record<string, unknown>;
      expect(line.run_id).toBe(runId);
      return JSON.stringify({ ...line, run_id: '<run>' });
    })
    .sort();
}

// The readers are the point here, not the process: the same run in this process, as above.
describe('shipped pipelines on their samples as Parquet and gzip (scripts/convert-samples.mjs)', () => {
  const dir = tempDir('bre-e2e-converted-');
  const converted = convertSamples(dir);

  it.each(pipelines)('%s: the same results.ndjson from .parquet and from .gz as from the sample', async (p) => {
    const files = converted[p];
    expect(files, `a converted sample for ${p}`).toBeDefined();
    let csvOut = sampleRuns.get(p);
    if (!csvOut) {
      csvOut = tempDir(`bre-e2e-${p}-`);
      expect(
        (await runInProcess(['run', p, '--input', files.sample, '--out', csvOut, '--rate', 'off', '--no-progress']))
          .code,
      ).toBe(0);
    }
    const runs = await Promise.all(
      [files.parquet, files.gz].map(async (input) => {
        const out = tempDir(`bre-e2e-${p}-conv-`);
        const r = await runInProcess(['run', p, '--input', input, '--out', out, '--rate', 'off', '--no-progress']);
        return { input, out, ...r };
      }),
    );
    const expected = comparableResults(csvOut);
    expect(expected.length).toBeGreaterThan(0);
    for (const run of runs) {
      expect(run.code, `${run.input}: ${run.stderr}`).toBe(0);
      expect(journalText(join(run.out, 'errors.ndjson'))).toBe('');
      expect(comparableResults(run.out), run.input).toEqual(expected);
    }
  });
});
