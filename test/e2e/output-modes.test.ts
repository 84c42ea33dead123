/**
 * Owner-only output (issue 33): under a umask that opens everything (000), every folder and file the CLI
 * writes (run, a --retry-errors rewrite, merge, compare --out) is its owner's only, 0700 / 0600; report.html
 * and the metrics file of a run, which hold no applicant's data, are 0644 (compare's folder, which lists keys,
 * stays the owner's whole); `--output-mode 0750` opens the folders to
 * the group (files 0640) even under a umask of 077; a mode that is not one is exit 2.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runArgs, spawnCli } from '../helpers/cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

/** Every path under `dir` (itself included) with its permission bits. */
function modes(dir: string): Map<string, number> {
  const out = new Map<string, number>([[dir, statSync(dir).mode & 0o777]]);
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) for (const [k, v] of modes(p)) out.set(k, v);
    else out.set(p, statSync(p).mode & 0o777);
  }
  return out;
}

/** The paths whose mode is not the expected one (folders `dirMode`, files `fileMode`, the readable ones 0644). */
function wrongModes(dir: string, dirMode: number, fileMode: number, readable = ['report.html']): string[] {
  const wrong: string[] = [];
  for (const [p, m] of modes(dir)) {
    const want = statSync(p).isDirectory() ? dirMode : readable.some((r) => p.endsWith(`/${r}`)) ? 0o644 : fileMode;
    if (m !== want) wrong.push(`${p}: ${m.toString(8)}, expected ${want.toString(8)}`);
  }
  return wrong;
}

describe('owner-only output', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox({
      rate: { workflow: null, bureau: null, account: null },
      faults: { 503: 0.3 },
      seed: 7,
    });
  });
  afterAll(async () => {
    await sb?.close();
  });

  it('under umask 000: run, --retry-errors, merge and compare write 0700 folders and 0600 files; report and metrics 0644', async () => {
    const dir = tempDir();
    const out = join(dir, 'nightly', 'aa');
    const metrics = join(dir, 'bre.prom');
    const run = await spawnCli(
      runArgs(
        'aa_transactions',
        join(ROOT, 'samples', 'aa_transactions.csv'),
        out,
        '--rate',
        'off',
        '--max-attempts',
        '1',
        '--metrics-file',
        metrics,
        '--shard',
        '1/2',
      ),
      sb.env(),
      { umask: '000' },
    );
    expect([0, 1], run.stderr).toContain(run.code);
    const files = [...modes(out).keys()].map((p) => p.slice(out.length + 1));
    // The journal gzip'ed once the run has finished, unless it is empty (every row of the shard failed).
    expect(files.filter((f) => f === 'results.ndjson' || f === 'results.ndjson.gz')).toHaveLength(1);
    for (const f of ['results.csv', 'results.parquet', 'transactions.csv', 'summary.json', 'report.html', '.state'])
      expect(files).toContain(f);
    expect(wrongModes(out, 0o700, 0o600)).toEqual([]);
    // The folder made on the way (`nightly`) too: nothing of the night is listed by others.
    expect(statSync(join(dir, 'nightly')).mode & 0o777).toBe(0o700);
    expect(statSync(metrics).mode & 0o777).toBe(0o644);

    // --retry-errors rewrites the journals (kept rows only): still the owner's.
    const retry = await spawnCli(
      runArgs(
        'aa_transactions',
        join(ROOT, 'samples', 'aa_transactions.csv'),
        out,
        '--rate',
        'off',
        '--retry-errors',
        '--shard',
        '1/2',
      ),
      sb.env(),
      { umask: '000' },
    );
    expect([0, 1], retry.stderr).toContain(retry.code);
    expect(wrongModes(out, 0o700, 0o600)).toEqual([]);

    const other = join(dir, 'nightly', 'aa-2');
    const second = await spawnCli(
      runArgs(
        'aa_transactions',
        join(ROOT, 'samples', 'aa_transactions.csv'),
        other,
        '--rate',
        'off',
        '--shard',
        '2/2',
      ),
      sb.env(),
      { umask: '000' },
    );
    expect([0, 1], second.stderr).toContain(second.code);
    const merged = join(dir, 'merged');
    const m = await spawnCli(['merge', out, other, '--out', merged], {}, { umask: '000' });
    expect(m.code, m.stderr).toBe(0);
    expect(wrongModes(merged, 0o700, 0o600)).toEqual([]);

    const cmp = join(dir, 'cmp');
    const c = await spawnCli(['compare', out, merged, '--out', cmp], {}, { umask: '000' });
    expect(c.code, c.stderr).toBe(0);
    // compare's folder lists keys (its CSV files): all of it the owner's, its report.html included.
    expect(wrongModes(cmp, 0o700, 0o600, [])).toEqual([]);
  }, 120_000);

  it('--output-mode 0750 opens folders to the group (files 0640) whatever the umask; a bad mode is exit 2', async () => {
    const dir = tempDir();
    const out = join(dir, 'out');
    const run = await spawnCli(
      runArgs(
        'location',
        join(ROOT, 'samples', 'location.csv'),
        out,
        '--rate',
        'off',
        '--max-attempts',
        '1',
        '--output-mode',
        '0750',
      ),
      sb.env(),
      { umask: '077' },
    );
    expect([0, 1], run.stderr).toContain(run.code);
    expect(wrongModes(out, 0o750, 0o640)).toEqual([]);
    for (const bad of ['755x', '0640', '9']) {
      const r = await spawnCli(
        runArgs('location', join(ROOT, 'samples', 'location.csv'), join(dir, `bad-${bad}`), '--output-mode', bad),
        sb.env(),
      );
      expect(r.code, bad).toBe(2);
      expect(r.stderr).toContain(`Expected --output-mode`);
      expect(r.stderr).toContain(`got '${bad}'`);
    }
  }, 120_000);
});
