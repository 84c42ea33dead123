/**
 * kill -9 of a run with a PostgreSQL --sink at seeded random moments (so many lines in results.ndjson, so
 * many rows in the table, so many batches committed), then the same command: the table holds each key once
 * and equals results.ndjson, NAME_errors equals errors.ndjson. After every kill the commit table's position
 * says exactly what the tables hold: the keys of the journal's lines before it, each written once. The killed
 * runs are spawned CLIs; the same command after the kills is the CLI's code in this process (runInProcess).
 */
import { join } from 'node:path';
import { beforeAll, describe, expect } from 'vitest';
import { runArgs, startCli, waitForLines, type RunningCli } from '../helpers/cli.js';
import { runInProcess } from '../helpers/cli-in-process.js';
import { available, freshDatabase, itDb } from '../helpers/db.js';
import { loadRows } from '../helpers/db-load.js';
import { countLines, invariantProblems, readOutput } from '../helpers/output.js';
import { aaRows, keysWithin, loadsRows, locationRows, prng, waitForTable } from '../helpers/sink-inputs.js';
import { readTable, sinkProblems } from '../helpers/sink-tables.js';
import { tempDir } from '../helpers/temp.js';

// Rows cost CPU, the rate sets how long a run lasts: 250 rows at 100/s are as long as twice as many at 200/s,
// and a session of them spools and rebuilds its files without a thread's start-up.
const N = 250;
/** Rows whose latitude is out of range: row errors, so that NAME_errors is followed too. */
const BAD = [3, 63, 64, 194, 249];

// The cases side by side (each waits on its runs at their rate): each its own sink table and folder.
describe
  .runIf(available.postgres || process.env.CI === 'true')
  .concurrent('kill -9 of a run with a PostgreSQL sink', () => {
    let source: string;
    let sink: string;
    beforeAll(async () => {
      source = await freshDatabase('postgres', 'bre_e2e_sinkk_src');
      sink = await freshDatabase('postgres', 'bre_e2e_sinkk_dst');
      await loadRows(source, 'loc', locationRows(N, BAD));
      await loadRows(source, 'aa', aaRows(120));
    });

    /** Exactly once at this moment: the tables hold the journals' lines before the committed position, no more, no less, each as written. */
    async function committedProblems(out: string, table: string): Promise<string[]> {
      const mark = (await loadsRows(sink)).find((r) => r.sink_table === table);
      const resultKeys = new Set(keysWithin(join(out, 'results.ndjson'), mark?.results_bytes ?? 0));
      const errorRows = new Set(keysWithin(join(out, 'errors.ndjson'), mark?.errors_bytes ?? 0, 'row'));
      const t = await readTable(sink, table);
      const e = await readTable(sink, `${table}_errors`);
      const problems: string[] = [];
      const inTable = new Set(t.rows.map((r) => String(r.reference_id)));
      if (inTable.size !== t.rows.length) problems.push(`${table} holds a key twice`);
      for (const k of resultKeys)
        if (!inTable.has(k)) problems.push(`${k} is before the committed position but not in ${table}`);
      for (const k of inTable)
        if (!resultKeys.has(k))
          problems.push(`${k} is in ${table} but after the committed position ${mark?.results_bytes}`);
      const errRows = new Set(e.rows.map((r) => String(r.row)));
      for (const r of errorRows)
        if (!errRows.has(r))
          problems.push(`error row ${r} is before the committed position but not in ${table}_errors`);
      for (const r of errRows)
        if (!errorRows.has(r)) problems.push(`error row ${r} is in ${table}_errors but after the committed position`);
      problems.push(...(await sinkProblems(sink, { table, dirs: [out], partial: true })));
      return problems.slice(0, 20);
    }

    /** Waits for the seeded moment: more lines in the journal, more rows in the table, or more batches committed. */
    async function seededMoment(
      run: RunningCli,
      out: string,
      table: string,
      random: () => number,
      total: number,
      mode: number,
    ): Promise<string> {
      const done = countLines(join(out, 'results.ndjson'));
      const more = 20 + Math.floor(random() * Math.max(1, (total - done) * 0.6));
      if (mode === 0) {
        const target = Math.min(done + more, total - 50);
        await waitForLines(run, join(out, 'results.ndjson'), target, 60_000);
        return `${target} lines in results.ndjson`;
      }
      if (mode === 1) {
        const target = Math.min(done + more, total - 75);
        await waitForTable<{ n: string }>(
          run,
          sink,
          `SELECT count(*) AS n FROM "${table}"`,
          (r) => Number(r[0]?.n ?? 0) >= target,
          `${target} rows in ${table}`,
        );
        return `${target} rows in ${table}`;
      }
      const before = (await loadsRows(sink)).find((r) => r.sink_table === table)?.batches ?? 0;
      const target = before + 1 + Math.floor(random() * 4);
      await waitForTable<{ batches: string }>(
        run,
        sink,
        `SELECT batches FROM bre_batch_loads WHERE sink_table = '${table}'`,
        (r) => Number(r[0]?.batches ?? 0) >= target,
        `batch ${target} committed`,
      );
      return `batch ${target} committed`;
    }

    itDb('postgres').each([3, 17, 28, 41])(
      'location, seed %i: two kills at seeded moments, then the same command: every key once, the tables equal the folder',
      async (seed) => {
        const random = prng(seed);
        const table = `loc_${seed}`;
        const out = join(tempDir(`bre-e2e-sinkk-${seed}-`), 'out');
        // About 3 s of work in all: killed twice part-way.
        const args = runArgs(
          'location',
          source,
          out,
          '--table',
          'loc',
          '--sink',
          sink,
          '--sink-table',
          table,
          '--rate',
          'workflow=100/s',
          '--concurrency',
          '8',
        );
        const moments: string[] = [];
        for (let k = 0; k < 2; k += 1) {
          const run = startCli(args);
          // Each kind of moment in turn across the seeds; how far into the run, at random.
          moments.push(await seededMoment(run, out, table, random, N, (seed + k) % 3));
          run.child.kill('SIGKILL');
          const res = await run.done;
          expect(res.signal, res.stderr).toBe('SIGKILL');
          expect(await committedProblems(out, table), `after the kill at ${moments.at(-1)}`).toEqual([]);
          const mark = (await loadsRows(sink)).find((r) => r.sink_table === table);
          moments[moments.length - 1] +=
            ` (${countLines(join(out, 'results.ndjson'))} lines, ${(await readTable(sink, table)).rows.length} rows, batch ${mark?.batches ?? 0})`;
        }
        console.info(`seed ${seed}: killed at ${moments.join('; ')}`);
        const last = await runInProcess(args);
        expect(last.code, last.stderr).toBe(1);
        const o = readOutput(out);
        expect(invariantProblems(N, o)).toEqual([]);
        expect(o.errors.map((e) => e.row).sort((a, b) => a - b)).toEqual(BAD);
        expect(await sinkProblems(sink, { table, dirs: [out] }), `kills at ${moments.join(', ')}`).toEqual([]);
        const t = await readTable(sink, table);
        expect(t.rows).toHaveLength(N - BAD.length);
      },
      120_000,
    );

    itDb('postgres')(
      "an account pipeline killed twice: NAME_transactions equals transactions.csv, each key's transactions once",
      async () => {
        const random = prng(5);
        const table = 'aa_kill';
        const total = 120;
        const out = join(tempDir('bre-e2e-sinkk-aa-'), 'out');
        const args = runArgs(
          'aa_transactions',
          source,
          out,
          '--table',
          'aa',
          '--sink',
          sink,
          '--sink-table',
          table,
          '--rate',
          'account=60/s',
          '--concurrency',
          '4',
        );
        for (let k = 0; k < 2; k += 1) {
          const run = startCli(args);
          const done = countLines(join(out, 'results.ndjson'));
          await waitForLines(
            run,
            join(out, 'results.ndjson'),
            Math.min(total - 20, done + 10 + Math.floor(random() * 30)),
            60_000,
          );
          run.child.kill('SIGKILL');
          expect((await run.done).signal).toBe('SIGKILL');
          expect(await committedProblems(out, table)).toEqual([]);
        }
        const last = await runInProcess(args);
        expect(last.code, last.stderr).toBe(0);
        expect(invariantProblems(total, readOutput(out))).toEqual([]);
        expect(await sinkProblems(sink, { table, dirs: [out], transactions: true })).toEqual([]);
      },
      120_000,
    );
  });
