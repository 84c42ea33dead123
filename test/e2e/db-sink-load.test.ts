/**
 * `bre-batch load OUT --sink URL`, and several workers writing one table: a folder from a run without --sink
 * loads into PostgreSQL equal to its results.ndjson and errors.ndjson (transactions too); a second load writes
 * nothing; a merged folder of two --shard workers loads; two --shard workers with the same --sink table at
 * the same time, no merge, leave every key once, equal to the union of their folders. The first load is a
 * spawned CLI, as are the two workers at once; the other runs, loads and the merge are the CLI's code in this
 * process (test/helpers/cli-in-process.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect } from 'vitest';
import { ROOT, runArgs, spawnCli, startCli } from '../helpers/cli.js';
import { runInProcess } from '../helpers/cli-in-process.js';
import { available, freshDatabase, itDb } from '../helpers/db.js';
import { invariantProblems, readOutput } from '../helpers/output.js';
import { loadsRows, locationCsvText, locationRows } from '../helpers/sink-inputs.js';
import { readTable, sinkProblems } from '../helpers/sink-tables.js';
import { tempDir } from '../helpers/temp.js';

const N = 300;
const BAD = [5, 77, 250];

describe.runIf(available.postgres || process.env.CI === 'true')(
  'bre-batch load, and several workers into one table (PostgreSQL)',
  () => {
    let sink: string;
    let input: string;
    beforeAll(async () => {
      sink = await freshDatabase('postgres', 'bre_e2e_sinkl');
      input = join(tempDir('bre-e2e-sinkl-in-'), 'input.csv');
      writeFileSync(input, locationCsvText(locationRows(N, BAD)));
    });

    itDb('postgres')(
      'a folder from a run without --sink loads equal to its journals; loaded again, nothing is written',
      async () => {
        const out = join(tempDir('bre-e2e-sinkl-plain-'), 'out');
        // The folder is what is loaded: made by the CLI's code in this process (test/helpers/cli-in-process.ts).
        const run = await runInProcess(runArgs('location', input, out, '--rate', 'off'));
        expect(run.code, run.stderr).toBe(1);
        const first = await spawnCli(['load', out, '--sink', sink, '--sink-table', 'loaded']);
        expect(first.code, first.stderr).toBe(0);
        expect(first.stdout).toMatch(new RegExp(`${N - BAD.length} results and ${BAD.length} errors written`));
        // A first load has nothing it did not read again (issue 31): it does not say so.
        expect(first.stdout).not.toContain('not read again');
        expect(await sinkProblems(sink, { table: 'loaded', dirs: [out] })).toEqual([]);
        const stamps = new Map((await readTable(sink, 'loaded')).rows.map((r) => [r.reference_id, r.loaded_at]));
        const mark = (await loadsRows(sink)).find((r) => r.sink_table === 'loaded');

        const second = await runInProcess(['load', out, '--sink', sink, '--sink-table', 'loaded']);
        expect(second.code, second.stderr).toBe(0);
        expect(second.stdout).toMatch(/0 results and 0 errors written/);
        expect(second.stdout).toContain('rows the tables already had from this folder were not read again');
        // Not written again: no row's loaded_at moved, the commit table's row is as it was.
        expect(new Map((await readTable(sink, 'loaded')).rows.map((r) => [r.reference_id, r.loaded_at]))).toEqual(
          stamps,
        );
        expect((await loadsRows(sink)).find((r) => r.sink_table === 'loaded')).toEqual(mark);
        expect(await sinkProblems(sink, { table: 'loaded', dirs: [out] })).toEqual([]);
      },
    );

    itDb('postgres')(
      "an account pipeline's folder loads its transactions too (default table: the pipeline's name)",
      async () => {
        const out = join(tempDir('bre-e2e-sinkl-aa-'), 'out');
        const run = await runInProcess(
          runArgs('aa_transactions', join(ROOT, 'samples', 'aa_transactions.csv'), out, '--rate', 'off'),
        );
        expect(run.code, run.stderr).toBe(0);
        const load = await runInProcess(['load', out, '--sink', sink]);
        expect(load.code, load.stderr).toBe(0);
        expect(await sinkProblems(sink, { table: 'aa_transactions', dirs: [out], transactions: true })).toEqual([]);
      },
    );

    itDb('postgres')('a merged folder of two --shard workers loads: every key once', async () => {
      const dir = tempDir('bre-e2e-sinkl-merged-');
      for (const k of [1, 2]) {
        const r = await runInProcess(
          runArgs('location', input, join(dir, `s${k}`), '--rate', 'off', '--shard', `${k}/2`),
        );
        expect(r.code, r.stderr).toBe(1);
      }
      const m = await runInProcess(['merge', join(dir, 's1'), join(dir, 's2'), '--out', join(dir, 'merged')]);
      expect(m.code, m.stderr).toBe(0);
      expect(invariantProblems(N, readOutput(join(dir, 'merged')))).toEqual([]);
      const load = await runInProcess(['load', join(dir, 'merged'), '--sink', sink, '--sink-table', 'merged']);
      expect(load.code, load.stderr).toBe(0);
      expect(await sinkProblems(sink, { table: 'merged', dirs: [join(dir, 'merged')] })).toEqual([]);
      expect(await sinkProblems(sink, { table: 'merged', dirs: [join(dir, 's1'), join(dir, 's2')] })).toEqual([]);
      expect((await readTable(sink, 'merged')).rows).toHaveLength(N - BAD.length);
    });

    itDb('postgres')(
      'several workers, one table: --shard 1/2 and 2/2 at the same time with the same --sink table, no merge',
      async () => {
        const dir = tempDir('bre-e2e-sinkl-shared-');
        // Slow enough that both write the table at the same time (and both make it, if it is not there yet).
        const runs = [1, 2].map((k) =>
          startCli(
            runArgs(
              'location',
              input,
              join(dir, `s${k}`),
              '--rate',
              'workflow=150/s',
              '--shard',
              `${k}/2`,
              '--sink',
              sink,
              '--sink-table',
              'shared',
            ),
          ),
        );
        const results = await Promise.all(runs.map((r) => r.done));
        for (const r of results) expect(r.code, r.stderr).toBe(1);
        const dirs = [join(dir, 's1'), join(dir, 's2')];
        for (const d of dirs) expect(readOutput(d).summary.rows.out_of_shard).toBeGreaterThan(0);
        expect(await sinkProblems(sink, { table: 'shared', dirs })).toEqual([]);
        expect((await readTable(sink, 'shared')).rows).toHaveLength(N - BAD.length);
        expect((await readTable(sink, 'shared_errors')).rows.map((r) => Number(r.row)).sort((a, b) => a - b)).toEqual(
          BAD,
        );
        // Each worker's folder has its own row in the commit table.
        expect(
          (await loadsRows(sink))
            .filter((r) => r.sink_table === 'shared')
            .map((r) => r.path)
            .sort(),
        ).toEqual(dirs.sort());
      },
    );
  },
);
