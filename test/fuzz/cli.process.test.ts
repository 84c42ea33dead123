/**
 * Bad input at scale through the real CLI: generated broken CSV and NDJSON files run with `--dry-run` (and
 * two real runs against the sandbox). The process never crashes (exit 0 or 1; 2 for a file with no data
 * row, INPUT_EMPTY), and every data row the
 * reader produces is accounted for: valid + would-fail = read for a dry run; the output invariant for a
 * real run. A header that cannot be read is exit 2, before the output folder is touched. The first dry run
 * and the first header of each kind are spawned CLIs, as are the 9 MiB and 50 000-deep lines (a process of
 * their own bears them); the other runs, whose counts and folders are the point, are the CLI's code in this
 * process (runInProcess; hence a file in a process of its own, *.process.test.ts).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_RECORD_BYTES } from '@bre-batch/formats/input/read';
import { runArgs, spawnCli } from '../helpers/cli.js';
import { runInProcess } from '../helpers/cli-in-process.js';
import { invariantProblems, readOutput } from '../helpers/output.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { BROKEN_HEADERS, csvFile, ndjsonFile, readAll } from './inputs.js';

const csvSamples = fc.sample(csvFile({ maxRows: 60 }), { numRuns: 4, seed: 11 });
const ndjsonSamples = fc.sample(ndjsonFile(60), { numRuns: 4, seed: 12 });

async function rowsIn(buf: Buffer, format: 'csv' | 'ndjson'): Promise<number> {
  const out = await readAll([buf], format, DEFAULT_MAX_RECORD_BYTES);
  expect(out.thrown).toBeUndefined();
  return out.rows.length;
}

/** A fresh folder with `buf` as its input file: the file, its data rows, and where the run writes. */
async function brokenFile(buf: Buffer, ext: 'csv' | 'ndjson'): Promise<{ input: string; n: number; out: string }> {
  const dir = tempDir();
  const input = join(dir, `in.${ext}`);
  writeFileSync(input, buf);
  return { input, n: await rowsIn(buf, ext), out: join(dir, 'out') };
}

function dryRunCounts(stdout: string): { read: number; valid: number; fail: number } {
  const m = /rows: (\d+) read, (\d+) valid, (\d+) would fail/.exec(stdout);
  if (!m) throw new Error(`no dry-run counts in: ${stdout}`);
  return { read: Number(m[1]), valid: Number(m[2]), fail: Number(m[3]) };
}

const cases = [
  ...csvSamples.map((buf, i) => ({ name: `csv #${i + 1}`, ext: 'csv' as const, buf })),
  ...ndjsonSamples.map((buf, i) => ({ name: `ndjson #${i + 1}`, ext: 'ndjson' as const, buf })),
];

describe('broken inputs through the CLI', () => {
  it.each(cases)(
    '--dry-run $name: exit 0/1, read = valid + would fail = rows of the file',
    async ({ ext, buf }) => {
      const { input, n, out } = await brokenFile(buf, ext);
      const run = await (buf === cases[0].buf ? spawnCli : runInProcess)(
        runArgs('location', input, out, '--dry-run'),
        {},
      );
      if (n === 0) {
        // No data rows (a header only, blank lines): INPUT_EMPTY, exit 2, as for a real run.
        expect(run.code, run.stderr).toBe(2);
        expect(run.stderr).toContain('Expected data rows in the input');
        return;
      }
      expect([0, 1], run.stderr).toContain(run.code);
      const c = dryRunCounts(run.stdout);
      expect(c.read).toBe(n);
      expect(c.valid + c.fail).toBe(n);
      // Written only when a row would fail: a clean dry run makes no folder.
      expect(existsSync(join(out, 'dry-run-errors.ndjson'))).toBe(c.fail > 0);
      const errors =
        c.fail === 0
          ? []
          : readFileSync(join(out, 'dry-run-errors.ndjson'), 'utf8')
              .split('\n')
              .filter((l) => l !== '')
              .map((l) => JSON.parse(l) as { row: number });
      expect(errors).toHaveLength(c.fail);
      const rows = errors.map((e) => e.row);
      expect(new Set(rows).size).toBe(rows.length);
      expect(rows.every((r) => r >= 1 && r <= n)).toBe(true);
    },
    30_000,
  );

  it('a 9 MiB line (past the record limit) and a deeply nested line are row errors, the rest runs', async () => {
    const dir = tempDir();
    const input = join(dir, 'in.ndjson');
    const good = (i: number) =>
      JSON.stringify({ reference_id: `R${i}`, user_id: `u${i}`, lead_id: `l${i}`, latitude: 19.07, longitude: 72.87 });
    const deep = `${'{"reference_id":"deep","a":'.repeat(50_000)}1${'}'.repeat(50_000)}`;
    writeFileSync(
      input,
      [good(1), `{"reference_id":"big","user_id":"${'x'.repeat(9 * 1024 * 1024)}"}`, good(3), deep, good(5)].join(
        '\n',
      ) + '\n',
    );
    const out = join(dir, 'out');
    const run = await spawnCli(runArgs('location', input, out, '--dry-run'), {});
    expect(run.code, run.stderr).toBe(1);
    expect(dryRunCounts(run.stdout)).toEqual({ read: 5, valid: 3, fail: 2 });
  }, 30_000);

  it.each(BROKEN_HEADERS)(
    'header %s: exit 2, says which line, no output folder',
    async (header) => {
      const dir = tempDir();
      const input = join(dir, 'in.csv');
      writeFileSync(input, `${header}\nA,B\n`);
      const out = join(dir, 'out');
      const run = await (header === BROKEN_HEADERS[0] ? spawnCli : runInProcess)(runArgs('location', input, out), {});
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/line 1: .*header/);
      expect(existsSync(join(out, 'manifest.json'))).toBe(false);
    },
    30_000,
  );
});

describe('broken inputs, real runs against the sandbox', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: null } });
  });
  afterAll(async () => {
    await sb?.close();
  });

  it('rows nested 50 000 deep (in any field, the key included) are row errors, not a stop', async () => {
    const dir = tempDir();
    const input = join(dir, 'in.ndjson');
    const good = (i: number) =>
      JSON.stringify({ reference_id: `R${i}`, user_id: `u${i}`, lead_id: `l${i}`, latitude: 19.07, longitude: 72.87 });
    const arr = `${'['.repeat(50_000)}${']'.repeat(50_000)}`;
    writeFileSync(
      input,
      [
        good(1),
        `${'{"reference_id":"deep","a":'.repeat(50_000)}1${'}'.repeat(50_000)}`,
        `{"reference_id":${arr},"user_id":"u","lead_id":"l","latitude":19.0,"longitude":72.8}`,
        `{"reference_id":"R4","user_id":"u","lead_id":"l","latitude":${arr},"longitude":72.8}`,
        good(5),
      ].join('\n') + '\n',
    );
    const out = join(dir, 'out');
    const run = await spawnCli(runArgs('location', input, out, '--rate', 'workflow=100/s'), sb.env());
    expect(run.code, run.stderr).toBe(1);
    const folder = readOutput(out);
    expect(invariantProblems(5, folder)).toEqual([]);
    expect(folder.results.map((r) => r.row)).toEqual([1, 5]);
    expect(folder.errors.map((e) => [e.row, e.code])).toEqual([
      [2, 'INVALID_ROW'],
      [3, 'INVALID_ROW'],
      [4, 'INVALID_ROW'],
    ]);
  }, 60_000);

  it.each([
    { name: 'csv', ext: 'csv' as const, buf: fc.sample(csvFile({ maxRows: 80 }), { numRuns: 1, seed: 21 })[0] },
    { name: 'ndjson', ext: 'ndjson' as const, buf: fc.sample(ndjsonFile(80), { numRuns: 1, seed: 22 })[0] },
  ])(
    '$name: exit 0/1 and every data row once in results or errors',
    async ({ ext, buf }) => {
      const { input, n, out } = await brokenFile(buf, ext);
      const run = await runInProcess(
        runArgs('location', input, out, '--rate', 'workflow=100/s', ...(n === 0 ? ['--allow-empty'] : [])),
        sb.env(),
      );
      expect([0, 1], run.stderr).toContain(run.code);
      const folder = readOutput(out);
      expect(invariantProblems(n, folder)).toEqual([]);
      expect(folder.summary.rows.read).toBe(n);
    },
    60_000,
  );
});
