/**
 * A finished night that fits on disk (issue 33): once a run has finished, its journal (results.ndjson,
 * errors.ndjson, .state/transactions.ndjson) is gzip'ed in place, 0600 kept (src/output/journal/compact.ts), and
 * every command that reads a folder still reads it (packages/formats/src/journal-file.ts): report, --plan, the same
 * command re-run (nothing sent), --retry-errors, merge of two shards, compare, load into PostgreSQL (after a
 * run with --sink, nothing written again: the compacted journal keeps the plain one's identity). An
 * interrupted run is not compacted; its resume is, at its end. A compaction or an expansion cut between its
 * steps (both forms whole, or a temp half-written) is read as the plain journal and tidied by the next writer.
 * --keep-journal leaves the journal as it is.
 * The runs whose folder is the point, and `report`, `merge` and `load`, run the CLI's code in this process
 * (runInProcess: the same options and handlers, without a CLI's start-up each); spawned stay the runs under a
 * umask of their own (a process's) and the killed one.
 */
import { cpSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runArgs, spawnCli, startCli, waitForLines } from '../helpers/cli.js';
import { runInProcess } from '../helpers/cli-in-process.js';
import { available, freshDatabase, itDb } from '../helpers/db.js';
import { invariantProblems, journalText, locationCsv, readOutput } from '../helpers/output.js';
import { loadsRows } from '../helpers/sink-inputs.js';
import { sinkProblems } from '../helpers/sink-tables.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

const JOURNALS = ['results.ndjson', 'errors.ndjson', '.state/transactions.ndjson'];

/** Which form each journal is in: 'gz', 'plain', 'both' or 'none'. */
function forms(out: string, names = JOURNALS): Record<string, string> {
  return Object.fromEntries(
    names.map((n) => {
      const plain = existsSync(join(out, n));
      const gz = existsSync(join(out, `${n}.gz`));
      return [n, plain && gz ? 'both' : plain ? 'plain' : gz ? 'gz' : 'none'];
    }),
  );
}

/** Leftovers of a step cut short (X.gz.tmp, X.gunzip.tmp) anywhere in the folder. */
function temps(out: string): string[] {
  return readdirSync(out, { recursive: true })
    .map(String)
    .filter((f) => /\.(gz|gunzip)\.tmp$/.test(f));
}

describe('compaction of a finished run', () => {
  let sb: TestSandbox;
  const calls = () => {
    const s = sb.sandbox.stats().services;
    return s.workflow.requests + s.bureau.requests + s.account.requests;
  };
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: null, bureau: null, account: null }, seed: 11 });
  });
  afterAll(async () => {
    await sb?.close();
  }, 300_000);

  it('gzips the journal in place, 0600 kept; report, --plan, the same command, --retry-errors read it', async () => {
    const dir = tempDir('bre-e2e-compact-');
    const input = locationCsv(dir, 120);
    const out = join(dir, 'out');
    const args = runArgs('location', input, out, '--rate', 'off', '--max-attempts', '1');
    sb.sandbox.setFaults({ 503: 0.25 });
    const run = await spawnCli(args, sb.env(), { umask: '000' });
    sb.sandbox.setFaults({});
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toMatch(
      /journal: compacted [\d.]+ [KM]?B -> [\d.]+ [KM]?B \(results\.ndjson\.gz, errors\.ndjson\.gz;/,
    );
    expect(forms(out, ['results.ndjson', 'errors.ndjson'])).toEqual({ 'results.ndjson': 'gz', 'errors.ndjson': 'gz' });
    // The closing lines name the files as the folder holds them once compacted.
    expect(run.stdout).toContain('\n  files: results.ndjson.gz, errors.ndjson.gz, results.csv, results.parquet,');
    for (const n of ['results.ndjson.gz', 'errors.ndjson.gz']) expect(statSync(join(out, n)).mode & 0o777).toBe(0o600);
    // A standard gzip file, its header naming the plain size.
    const text = gunzipSync(readFileSync(join(out, 'results.ndjson.gz'))).toString('utf8');
    expect(
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).row).length,
    ).toBeGreaterThan(50);
    const first = readOutput(out);
    expect(invariantProblems(120, first)).toEqual([]);
    expect(first.errors.length).toBeGreaterThan(0);
    // report.html was drawn from the compacted folder: its errors counted, the journal named as it is on disk.
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toContain('<code>results.ndjson.gz</code>');
    const byCode = `<code>SERVER_UNAVAILABLE</code></td><td class="n">${first.errors.length}</td>`;
    expect(html).toContain(byCode);
    const again = await runInProcess(['report', out]);
    expect(again.code, again.stderr).toBe(0);
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain(byCode);

    // --plan counts the rows the compacted journal holds as done.
    const plan = await runInProcess([...args, '--plan'], sb.env());
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain('rows to do: 0 (120 already done in the output folder)');
    expect(plan.stdout).toMatch(
      /left once finished: about [\d.]+ [KMG]?B \([\d.]+ [KMG]?B of journal, gzip'ed at the end/,
    );

    // The same command again: done, nothing sent, compacted again.
    const before = calls();
    const same = await runInProcess(args, sb.env());
    expect(same.code, same.stderr).toBe(1);
    expect(same.stdout).toMatch(/120 already done before \(resumed\)/);
    expect(calls()).toBe(before);
    expect(forms(out, ['results.ndjson', 'errors.ndjson'])).toEqual({ 'results.ndjson': 'gz', 'errors.ndjson': 'gz' });
    expect(readOutput(out).results).toEqual(first.results);

    // --retry-errors on the compacted folder: only the failed rows are sent; every row once; compacted after.
    const retry = await spawnCli([...args, '--retry-errors'], sb.env(), { umask: '000' });
    expect(retry.code, retry.stderr).toBe(0);
    expect(calls() - before).toBe(first.errors.length);
    const done = readOutput(out);
    expect(invariantProblems(120, done)).toEqual([]);
    expect(done.errors).toEqual([]);
    expect(done.results).toHaveLength(120);
    expect(forms(out, ['results.ndjson'])).toEqual({ 'results.ndjson': 'gz' });
    expect(statSync(join(out, 'results.ndjson.gz')).mode & 0o777).toBe(0o600);
    expect(temps(out)).toEqual([]);
  }, 300_000);

  it("an account pipeline's transactions journal too; --keep-journal leaves everything plain", async () => {
    const dir = tempDir('bre-e2e-compact-aa-');
    const input = join(ROOT, 'samples', 'aa_transactions.csv');
    const out = join(dir, 'out');
    const run = await runInProcess(runArgs('aa_transactions', input, out, '--rate', 'off'), sb.env());
    expect(run.code, run.stderr).toBe(0);
    expect(forms(out)).toEqual({
      'results.ndjson': 'gz',
      'errors.ndjson': 'plain', // empty: a gzip header would be larger
      '.state/transactions.ndjson': 'gz',
    });
    expect(run.stdout).toContain('\n  files: results.ndjson.gz, errors.ndjson, results.csv,');
    const kept = join(dir, 'kept');
    const plain = await runInProcess(
      runArgs('aa_transactions', input, kept, '--rate', 'off', '--keep-journal'),
      sb.env(),
    );
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).not.toContain('journal: compacted');
    expect(plain.stdout).toContain('\n  files: results.ndjson, errors.ndjson, results.csv,');
    expect(forms(kept)).toEqual({
      'results.ndjson': 'plain',
      'errors.ndjson': 'plain',
      '.state/transactions.ndjson': 'plain',
    });
    // The same rows either way (the sandbox answers a row from the row alone); the journal is in the order rows
    // finished, which two runs need not share.
    const rows = (o: string) =>
      readOutput(o)
        .results.map((l) => [l.row, l.key] as const)
        .sort((a, b) => a[0] - b[0]);
    expect(rows(out)).toEqual(rows(kept));
    expect(journalText(join(out, '.state/transactions.ndjson')).split('\n').length).toBe(
      journalText(join(kept, '.state/transactions.ndjson')).split('\n').length,
    );
    // transactions.csv follows its journal, in the order rows finished: the same lines, in either order.
    const lines = (o: string) => {
      const [header, ...body] = readFileSync(join(o, 'transactions.csv'), 'utf8').split('\n');
      return [header, ...body.sort()];
    };
    expect(lines(out)).toEqual(lines(kept));
  }, 300_000);

  it('merge of two compacted shards, and compare of compacted folders', async () => {
    const dir = tempDir('bre-e2e-compact-merge-');
    const input = locationCsv(dir, 80);
    for (const k of [1, 2]) {
      const r = await runInProcess(
        runArgs('location', input, join(dir, `s${k}`), '--rate', 'off', '--shard', `${k}/2`),
        sb.env(),
      );
      expect(r.code, r.stderr).toBe(0);
      expect(forms(join(dir, `s${k}`), ['results.ndjson'])).toEqual({ 'results.ndjson': 'gz' });
    }
    const merged = join(dir, 'merged');
    const m = await runInProcess(['merge', join(dir, 's1'), join(dir, 's2'), '--out', merged]);
    expect(m.code, m.stderr).toBe(0);
    const folder = readOutput(merged);
    expect(invariantProblems(80, folder)).toEqual([]);
    expect(folder.summary.finished).toBe(true);
    // Every shard, finished: the merged folder is a finished night, compacted too.
    expect(m.stdout).toMatch(/journal: compacted .*results\.ndjson\.gz/);
    expect(forms(merged, ['results.ndjson'])).toEqual({ 'results.ndjson': 'gz' });
    const kept = join(dir, 'merged-kept');
    const k = await runInProcess(['merge', join(dir, 's1'), join(dir, 's2'), '--out', kept, '--keep-journal']);
    expect(k.code, k.stderr).toBe(0);
    expect(forms(kept, ['results.ndjson'])).toEqual({ 'results.ndjson': 'plain' });
    expect(readOutput(kept).results).toEqual(folder.results);
    const whole = join(dir, 'whole');
    const w = await runInProcess(runArgs('location', input, whole, '--rate', 'off'), sb.env());
    expect(w.code, w.stderr).toBe(0);
    const cmp = await runInProcess(['compare', whole, join(dir, 's1'), '--out', join(dir, 'cmp')]);
    expect(cmp.code, cmp.stderr).toBe(0);
    const shard1 = readOutput(join(dir, 's1')).results.length;
    expect(cmp.stdout).toMatch(new RegExp(`^compared ${shard1} keys; only in A ${80 - shard1}, only in B 0`));
  }, 300_000);

  it('an interrupted run is not compacted; its resume is, at its end', async () => {
    const dir = tempDir('bre-e2e-compact-kill-');
    const input = locationCsv(dir, 300);
    const out = join(dir, 'out');
    const args = runArgs('location', input, out, '--rate', 'workflow=40/s');
    const first = startCli(args, sb.env());
    await waitForLines(first, join(out, 'results.ndjson'), 30);
    first.child.kill('SIGKILL');
    await first.done;
    expect(forms(out, ['results.ndjson'])).toEqual({ 'results.ndjson': 'plain' });
    const done = readOutput(out).results.length;
    const before = calls();
    const resumed = await runInProcess(runArgs('location', input, out, '--rate', 'off'), sb.env());
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(forms(out, ['results.ndjson'])).toEqual({ 'results.ndjson': 'gz' });
    expect(invariantProblems(300, readOutput(out))).toEqual([]);
    // The rows done before the kill were not sent again (those in flight at it may be).
    expect(calls() - before).toBeLessThanOrEqual(300 - done + 64);
  }, 300_000);

  it('a compaction or expansion cut between its steps: both forms, or a half-written temp, read as the plain journal', async () => {
    const dir = tempDir('bre-e2e-compact-crash-');
    const input = locationCsv(dir, 40);
    const base = join(dir, 'base');
    const r = await runInProcess(runArgs('location', input, base, '--rate', 'off'), sb.env());
    expect(r.code, r.stderr).toBe(0);
    const plain = gunzipSync(readFileSync(join(base, 'results.ndjson.gz')));
    const reference = readOutput(base);

    // Killed after the rename, before removing X: both whole. Killed while writing the temp: half a gzip file.
    const both = join(dir, 'both');
    cpSync(base, both, { recursive: true });
    writeFileSync(join(both, 'results.ndjson'), plain);
    writeFileSync(join(both, 'results.ndjson.gz.tmp'), readFileSync(join(base, 'results.ndjson.gz')).subarray(0, 40));
    // Killed while expanding: X.gz whole, a half-written plain temp beside it.
    const expanding = join(dir, 'expanding');
    cpSync(base, expanding, { recursive: true });
    writeFileSync(join(expanding, 'results.ndjson.gunzip.tmp'), plain.subarray(0, 100));

    for (const out of [both, expanding]) {
      expect(readOutput(out).results).toEqual(reference.results);
      const report = await runInProcess(['report', out]);
      expect(report.code, report.stderr).toBe(0);
      const plan = await runInProcess([...runArgs('location', input, out), '--plan'], sb.env());
      expect(plan.stdout).toContain('rows to do: 0 (40 already done in the output folder)');
      // The next writer tidies: nothing sent, one form left, no temp.
      const before = calls();
      const again = await runInProcess(runArgs('location', input, out, '--rate', 'off'), sb.env());
      expect(again.code, again.stderr).toBe(0);
      expect(calls()).toBe(before);
      expect(forms(out, ['results.ndjson'])).toEqual({ 'results.ndjson': 'gz' });
      expect(temps(out)).toEqual([]);
      expect(readOutput(out).results).toEqual(reference.results);
    }
  }, 300_000);
});

describe.runIf(available.postgres || process.env.CI === 'true')('load of a compacted folder (PostgreSQL)', () => {
  let sb: TestSandbox;
  let sink: string;
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: null, bureau: null, account: null }, seed: 5 });
    sink = await freshDatabase('postgres', 'bre_e2e_compact');
  });
  afterAll(async () => {
    await sb?.close();
  }, 300_000);

  itDb('postgres')(
    'loads equal to its journal; after a run with --sink, the load writes nothing again',
    async () => {
      const dir = tempDir('bre-e2e-compact-load-');
      const input = locationCsv(dir, 150);
      const out = join(dir, 'out');
      const run = await runInProcess(runArgs('location', input, out, '--rate', 'off'), sb.env());
      expect(run.code, run.stderr).toBe(0);
      expect(forms(out, ['results.ndjson'])).toEqual({ 'results.ndjson': 'gz' });
      const load = await runInProcess(['load', out, '--sink', sink, '--sink-table', 'compacted']);
      expect(load.code, load.stderr).toBe(0);
      expect(load.stdout).toMatch(/150 results and 0 errors written/);
      expect(await sinkProblems(sink, { table: 'compacted', dirs: [out] })).toEqual([]);
      // Loaded again: the position is in the compacted journal's plain bytes, nothing is read again.
      const second = await runInProcess(['load', out, '--sink', sink, '--sink-table', 'compacted']);
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout).toMatch(/0 results and 0 errors written/);

      // A run that wrote its own sink, then was compacted: the commit table knows the plain file; load finds it.
      const sunk = join(dir, 'sunk');
      const withSink = await runInProcess(
        runArgs('location', input, sunk, '--rate', 'off', '--sink', sink, '--sink-table', 'night'),
        sb.env(),
      );
      expect(withSink.code, withSink.stderr).toBe(0);
      expect(forms(sunk, ['results.ndjson'])).toEqual({ 'results.ndjson': 'gz' });
      const mark = (await loadsRows(sink)).find((x) => x.sink_table === 'night');
      const after = await runInProcess(['load', sunk, '--sink', sink, '--sink-table', 'night']);
      expect(after.code, after.stderr).toBe(0);
      expect(after.stdout).toMatch(/0 results and 0 errors written/);
      expect((await loadsRows(sink)).find((x) => x.sink_table === 'night')).toEqual(mark);
      expect(await sinkProblems(sink, { table: 'night', dirs: [sunk] })).toEqual([]);
    },
    300_000,
  );
});
