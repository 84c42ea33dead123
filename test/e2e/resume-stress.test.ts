/**
 * Killed again and again: the two-stage `rescore` pipeline (bureau features, then a workflow) under injected
 * faults, `kill -9`-ed five times at different points, then run to the end with the same command. Every row
 * once, and no successful call of either stage repeated beyond the calls in flight at each kill. The two cases,
 * each on a sandbox of its own, run side by side: they wait on the sandbox's latency and back-off more than on the
 * CPU.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { windowSize } from '../../src/pipeline/window.js';
import { perService } from '@bre-batch/core/types';
import { ROOT, runArgs, spawnCli, startCli, waitForLines } from '../helpers/cli.js';
import { runInProcess } from '../helpers/cli-in-process.js';
import { countLines, invariantProblems, readOutput, journalPath, journalText, rescoreCsv } from '../helpers/output.js';
import { startCountingProxy, type CountingProxy } from '../helpers/proxy.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const CONCURRENCY = 6;
/** The run's window of rows in flight for rescore's two services (bureau, workflow) at CONCURRENCY calls each. */
const WINDOW = windowSize(
  perService(() => CONCURRENCY),
  new Set(['bureau', 'workflow']),
);

describe.concurrent('repeated kill -9 of a two-stage pipeline under faults', () => {
  let sb: TestSandbox;
  let proxy: CountingProxy;
  beforeAll(async () => {
    sb = await startTestSandbox({
      rate: { workflow: null, bureau: null },
      latencyMs: 60,
      faults: { 429: 0.03, 503: 0.03, reset: 0.02, malformed: 0.02 },
      seed: 99,
    });
    proxy = await startCountingProxy(sb.sandbox.url);
  });
  afterAll(async () => {
    await proxy?.close();
    await sb?.close();
  });

  it('five kills, then the same command finishes: every row once, repeats bounded by what was in flight', async () => {
    const dir = tempDir();
    // The kills come by the 50th line (two at 25 more lines each, three as a run's first calls go out), so the
    // last run does 70 rows, each of its service's 429s a pause of at least a second for all of them (240 rows
    // drew twice as many pauses, for the same kills).
    const rows = 120;
    const input = rescoreCsv(dir, rows);
    const out = join(dir, 'out');
    const args = runArgs(
      'rescore',
      input,
      out,
      '--files-root',
      join(ROOT, 'samples'),
      '--rate',
      'bureau=60/s',
      '--rate',
      'workflow=60/s',
      '--concurrency',
      String(CONCURRENCY),
      '--max-attempts',
      '8',
    );
    const results = join(out, 'results.ndjson');
    const kills = 5;
    for (let k = 0; k < kills; k += 1) {
      const run = startCli(args, sb.env(proxy.url));
      const before = countLines(results);
      const requestsBefore = proxy.counts.requests;
      // Kill at varied points: as the run's first calls go out (1, 5, 9 of them), or once more rows are done.
      if (k % 2 === 0)
        await waitFor(
          () => proxy.counts.requests >= requestsBefore + 1 + 2 * k,
          30_000,
          `call ${1 + 2 * k} of run ${k + 1}`,
        );
      else await waitForLines(run, results, before + 25);
      run.child.kill('SIGKILL');
      const res = await run.done;
      expect(res.signal, res.stderr).toBe('SIGKILL');
    }
    const partial = readOutput(out);
    expect(partial.results.length + partial.errors.length).toBeLessThan(rows);

    const last = await spawnCli(args, sb.env(proxy.url));
    expect(last.code, last.stderr).toBe(0);
    const done = readOutput(out);
    expect(invariantProblems(rows, done)).toEqual([]);
    expect(
      done.results.every(
        (r) => typeof (r.stages as any)?.decision?.decision === 'string' && (r.stages as any)?.bureau !== undefined,
      ),
    ).toBe(true);
    // Both stages answered successfully for every row. A row is journalled when its last stage is done, so
    // a row in flight at a kill (at most the runner's window of rows in flight, WINDOW) is sent again whole:
    // its bureau call, and its workflow call if that was answered but not yet written.
    const paths = new Set([...proxy.successes.keys()].map((k) => k.split(' ')[0]));
    expect(paths.size).toBe(2);
    expect(proxy.successes.size).toBe(2 * rows);
    const repeated = proxy.repeated();
    console.info(
      `${kills} kills: ${repeated.size} successful calls repeated (bound ${kills * WINDOW}); final run resumed ${done.summary.rows.resumed} rows`,
    );
    expect(repeated.size).toBeLessThanOrEqual(kills * WINDOW);
  }, 120_000);
});

/** The AA sample repeated to `n` rows with fresh keys. */
function aaInput(dir: string, n: number): string {
  const [header, ...rows] = readFileSync(join(ROOT, 'samples', 'aa_transactions.csv'), 'utf8')
    .trimEnd()
    .split('\n');
  const out = [header];
  for (let i = 0; i < n; i += 1) {
    const cells = rows[i % rows.length].split(',');
    cells[0] = `AA-${String(i + 1).padStart(6, '0')}`;
    out.push(cells.join(','));
  }
  const path = join(dir, 'aa.csv');
  writeFileSync(path, `${out.join('\n')}\n`);
  return path;
}

/** transactions.csv lines per key (the first column). */
function transactionsPerKey(out: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const line of readFileSync(join(out, 'transactions.csv'), 'utf8').trimEnd().split('\n').slice(1)) {
    const key = line.split(',')[0];
    m.set(key, (m.get(key) ?? 0) + 1);
  }
  return m;
}

describe.concurrent('kill -9 of an account pipeline', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { account: null }, latencyMs: 40 });
  });
  afterAll(async () => {
    await sb?.close();
  });

  it('transactions.csv and secrets.ndjson hold each done row once, as in a run that was never killed', async () => {
    const dir = tempDir();
    const rows = 60;
    const input = aaInput(dir, rows);
    const args = (out: string) =>
      runArgs('aa_transactions', input, out, '--rate', 'account=40/s', '--concurrency', '4');
    // The run never killed, for reference: its folder is the point, so in this process (runInProcess), beside
    // the killed ones.
    const clean = join(dir, 'clean');
    const reference = runInProcess(args(clean), sb.env());

    const out = join(dir, 'killed');
    for (const n of [10, 30]) {
      const run = startCli(args(out), sb.env());
      await waitForLines(run, join(out, 'results.ndjson'), n);
      run.child.kill('SIGKILL');
      await run.done;
    }
    const last = await spawnCli(args(out), sb.env());
    expect(last.code, last.stderr).toBe(0);
    const ref = await reference;
    expect(ref.code, ref.stderr).toBe(0);
    expect(invariantProblems(rows, readOutput(out))).toEqual([]);
    expect(transactionsPerKey(out)).toEqual(transactionsPerKey(clean));
    const secretRows = (o: string) =>
      journalText(join(o, 'secrets.ndjson'))
        .trimEnd()
        .split('\n')
        .map((l) => (JSON.parse(l) as { row: number }).row)
        .sort((a, b) => a - b);
    // A row killed after its secrets line but before its result runs again: its old line is dropped.
    expect(secretRows(out)).toEqual(secretRows(clean));
    expect(statSync(journalPath(join(out, 'secrets.ndjson'))).mode & 0o777).toBe(0o600);
  }, 120_000);
});
