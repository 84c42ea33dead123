/**
 * --retry-errors with a PostgreSQL --sink: the errors.ndjson a retry starts is a new file, read into
 * NAME_errors from its start; a row that now succeeds leaves NAME_errors and appears in NAME (in the same
 * transaction), a row that fails again keeps its row with its latest error. A retry killed mid-way resumes
 * with the same command, the tables equal to the folder at the end. The runs whose tables are the point are the
 * CLI's code in this process (test/helpers/cli-in-process.ts); the one killed is a process.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { runArgs, startCli } from '../helpers/cli.js';
import { runInProcess } from '../helpers/cli-in-process.js';
import { available, freshDatabase, itDb } from '../helpers/db.js';
import { invariantProblems, locationCsv, readOutput } from '../helpers/output.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { waitForTable } from '../helpers/sink-inputs.js';
import { readTable, sinkProblems } from '../helpers/sink-tables.js';
import { tempDir } from '../helpers/temp.js';

describe.runIf(available.postgres || process.env.CI === 'true')('--retry-errors with a PostgreSQL sink', () => {
  let sb: TestSandbox;
  let sink: string;
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: null }, seed: 11 });
    sink = await freshDatabase('postgres', 'bre_e2e_sinkr');
  });
  afterAll(async () => sb?.close());

  const errorRows = async (table: string) =>
    (await readTable(sink, `${table}_errors`)).rows.map((r) => Number(r.row)).sort((a, b) => a - b);
  const keys = async (table: string) => (await readTable(sink, table)).rows.map((r) => String(r.reference_id)).sort();

  itDb('postgres')(
    'rows that now succeed leave NAME_errors and appear in NAME; those failing again keep their latest error',
    async () => {
      const dir = tempDir('bre-e2e-sinkr-');
      const rows = 200;
      const input = locationCsv(dir, rows);
      const out = join(dir, 'out');
      const args = runArgs(
        'location',
        input,
        out,
        '--rate',
        'workflow=400/s',
        '--max-attempts',
        '1',
        '--sink',
        sink,
        '--sink-table',
        'retry',
      );

      sb.sandbox.setFaults({ 503: 0.3 });
      const first = await runInProcess(args, sb.env());
      expect(first.code, first.stderr).toBe(1);
      const failed = readOutput(out);
      expect(failed.errors.length).toBeGreaterThan(20);
      expect(await sinkProblems(sink, { table: 'retry', dirs: [out] })).toEqual([]);
      expect(await errorRows('retry')).toEqual(failed.errors.map((e) => e.row).sort((a, b) => a - b));

      // Half of them fail again, another way: their rows in NAME_errors take the latest error.
      sb.sandbox.setFaults({ malformed: 0.5 });
      const second = await runInProcess([...args, '--retry-errors'], sb.env());
      expect(second.code, second.stderr).toBe(1);
      const mid = readOutput(out);
      expect(invariantProblems(rows, mid)).toEqual([]);
      expect(mid.errors.length).toBeGreaterThan(0);
      expect(mid.errors.length).toBeLessThan(failed.errors.length);
      expect(await sinkProblems(sink, { table: 'retry', dirs: [out] })).toEqual([]);
      const codes = (await readTable(sink, 'retry_errors')).rows.map((r) => r.code);
      expect(new Set(codes)).toEqual(new Set(['BAD_RESPONSE']));

      sb.sandbox.setFaults({});
      const third = await runInProcess([...args, '--retry-errors'], sb.env());
      expect(third.code, third.stderr).toBe(0);
      const done = readOutput(out);
      expect(done.errors).toEqual([]);
      expect(await sinkProblems(sink, { table: 'retry', dirs: [out] })).toEqual([]);
      expect(await errorRows('retry')).toEqual([]);
      expect(await keys('retry')).toHaveLength(rows);
    },
    90_000,
  );

  itDb('postgres')(
    'a retry killed mid-way, then the same command: the tables equal the folder',
    async () => {
      const dir = tempDir('bre-e2e-sinkr-kill-');
      const rows = 400;
      const input = locationCsv(dir, rows);
      const out = join(dir, 'out');
      const args = (rate: string) =>
        runArgs(
          'location',
          input,
          out,
          '--rate',
          `workflow=${rate}`,
          '--max-attempts',
          '1',
          '--sink',
          sink,
          '--sink-table',
          'retry_kill',
        );
      sb.sandbox.setFaults({ 503: 0.5 });
      const first = await runInProcess(args('800/s'), sb.env());
      expect(first.code, first.stderr).toBe(1);
      const failed = readOutput(out).errors.length;
      expect(failed).toBeGreaterThan(120);
      expect(await sinkProblems(sink, { table: 'retry_kill', dirs: [out] })).toEqual([]);

      sb.sandbox.setFaults({});
      const before = (await keys('retry_kill')).length;
      // Slow (100/s), so that it is killed part-way once some of the retried rows have reached NAME.
      const retryArgs = [...args('100/s'), '--retry-errors'];
      const retry = startCli(retryArgs, sb.env());
      await waitForTable<{ n: string }>(
        retry,
        sink,
        'SELECT count(*) AS n FROM retry_kill',
        (r) => Number(r[0]?.n ?? 0) >= before + 30,
        '30 retried rows in the sink',
      );
      retry.child.kill('SIGKILL');
      expect((await retry.done).signal).toBe('SIGKILL');
      // A row that succeeded left NAME_errors in the transaction that put it in NAME: never in both.
      const inNames = new Set((await readTable(sink, 'retry_kill')).rows.map((r) => Number(r.row)));
      const pending = await errorRows('retry_kill');
      expect(pending.filter((row) => inNames.has(row))).toEqual([]);
      expect(inNames.size + pending.length).toBe(rows);

      const again = await runInProcess(retryArgs, sb.env());
      expect(again.code, again.stderr).toBe(0);
      expect(invariantProblems(rows, readOutput(out))).toEqual([]);
      expect(await sinkProblems(sink, { table: 'retry_kill', dirs: [out] })).toEqual([]);
      expect(await errorRows('retry_kill')).toEqual([]);
    },
    90_000,
  );
});
