/**
 * The sink on MariaDB through mysql://, input and sink in different databases of the local server: shipped
 * pipelines' samples from a table into the sink equal their folders (results, errors, transactions) value for
 * value; kill -9 at seeded moments then the same command; the sink's connections killed once (the run
 * carries on) and the sink gone past --sink-retry (a proxy of the test's own cut: exit 3, then the same
 * command finishes with nothing lost). The killed, cut and stopped runs are spawned CLIs; the runs whose tables
 * are the point, and the same command after kill -9, are the CLI's code in this process (runInProcess). The
 * cases run side by side (each waits on its runs at their rate), each with a sink table and folder of its own;
 * the one that kills the sink's connections has a sink database of its own.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { ROOT, runArgs, spawnCli, startCli, waitForLines } from '../helpers/cli.js';
import { fromBuild, runInProcess } from '../helpers/cli-in-process.js';
import { available, freshDatabase, itDb, killConnections } from '../helpers/db.js';
import { loadRows, loadSample } from '../helpers/db-load.js';
import { countLines, invariantProblems, readOutput } from '../helpers/output.js';
import { aaRows, keysWithin, loadsRows, locationRows, prng, waitForTable } from '../helpers/sink-inputs.js';
import { exitErrorCode, readTable, sinkProblems } from '../helpers/sink-tables.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

// The runner's pipeline loader and stage kinds from the build, as the runs in this process load them.
const { loadPipeline } = await fromBuild<typeof import('../../src/config/pipeline.js')>('config/pipeline.js');
const { declaredHeaders } = await fromBuild<typeof import('../../src/stages/index.js')>('stages/index.js');

const SAMPLES = join(ROOT, 'samples');
// Rows cost CPU, the rates set how long a run lasts: few rows at modest rates keep the kills mid-run.
const N = 300;
const BAD = [9, 200];

describe.runIf(available.mysql || process.env.CI === 'true').concurrent('the sink on MariaDB (mysql://)', () => {
  let source: string;
  let sink: string;
  beforeAll(async () => {
    source = await freshDatabase('mysql', 'bre_e2e_sinkm_src');
    sink = await freshDatabase('mysql', 'bre_e2e_sinkm_dst');
    await loadRows(source, 'loc', locationRows(N, BAD));
    // The run the sink leaves for good: long enough (7.5 s at 40/s) to be stopped well before its end.
    await loadRows(source, 'loc_long', locationRows(N, BAD));
  });

  itDb('mysql').each(['location', 'bank', 'aa_transactions', 'rescore'])(
    '%s: its sample from a table into the sink: the tables equal the folder',
    async (p) => {
      const sample = join(SAMPLES, existsSync(join(SAMPLES, `${p}.csv`)) ? `${p}.csv` : `${p}.ndjson`);
      const { rows } = await loadSample(source, p, sample);
      const out = join(tempDir(`bre-e2e-sinkm-${p}-`), 'out');
      // The tables are the point: the CLI's code in this process (test/helpers/cli-in-process.ts).
      const r = await runInProcess(
        runArgs(p, source, out, '--table', p, '--sink', sink, '--rate', 'off', '--files-root', SAMPLES),
      );
      expect(r.code, r.stderr).toBe(0);
      expect(readOutput(out).results).toHaveLength(rows.length);
      // Every declared field has its column, null in every row or not (rescore's repayment_date is).
      const declared = declaredHeaders(loadPipeline(join(ROOT, 'pipelines', `${p}.yaml`)).stages).map((d) => d.header);
      expect(
        await sinkProblems(sink, { table: p, dirs: [out], transactions: p === 'aa_transactions', declared }),
      ).toEqual([]);
    },
  );

  itDb('mysql')(
    'an account pipeline killed twice, then the same command: NAME_transactions equals transactions.csv',
    async () => {
      await loadRows(source, 'aa_many', aaRows(60));
      const out = join(tempDir('bre-e2e-sinkm-aakill-'), 'out');
      const args = runArgs(
        'aa_transactions',
        source,
        out,
        '--table',
        'aa_many',
        '--sink',
        sink,
        '--sink-table',
        'aa_kill',
        '--rate',
        'account=60/s',
        '--concurrency',
        '4',
      );
      for (const n of [12, 30]) {
        const run = startCli(args);
        await waitForLines(run, join(out, 'results.ndjson'), n, 60_000);
        run.child.kill('SIGKILL');
        expect((await run.done).signal).toBe('SIGKILL');
      }
      const last = await runInProcess(args);
      expect(last.code, last.stderr).toBe(0);
      expect(await sinkProblems(sink, { table: 'aa_kill', dirs: [out], transactions: true })).toEqual([]);
    },
    90_000,
  );

  itDb('mysql').each([7, 19])(
    'location, seed %i: kill -9 at seeded moments, then the same command: every key once, the tables equal the folder',
    async (seed) => {
      const random = prng(seed);
      const table = `loc_${seed}`;
      const out = join(tempDir(`bre-e2e-sinkm-kill-${seed}-`), 'out');
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
        'workflow=125/s',
        '--concurrency',
        '8',
      );
      for (let k = 0; k < 2; k += 1) {
        const run = startCli(args);
        const done = countLines(join(out, 'results.ndjson'));
        const target = Math.min(N - 100, done + 40 + Math.floor(random() * (N - done) * 0.5));
        // One kill by the journal, one by the table.
        if (k === 0) await waitForLines(run, join(out, 'results.ndjson'), target, 60_000);
        else
          await waitForTable<{ n: string | number }>(
            run,
            sink,
            `SELECT count(*) AS n FROM \`${table}\``,
            (r) => Number(r[0]?.n ?? 0) >= Math.min(target, N - 150),
            `${target} rows in ${table}`,
          );
        run.child.kill('SIGKILL');
        expect((await run.done).signal).toBe('SIGKILL');
        // The tables hold exactly the journal's lines before the committed position.
        const mark = (await loadsRows(sink)).find((r) => r.sink_table === table);
        const committed = keysWithin(join(out, 'results.ndjson'), mark?.results_bytes ?? 0).sort();
        expect((await readTable(sink, table)).rows.map((r) => String(r.reference_id)).sort()).toEqual(committed);
        expect(await sinkProblems(sink, { table, dirs: [out], partial: true })).toEqual([]);
      }
      const last = await runInProcess(args);
      expect(last.code, last.stderr).toBe(1);
      expect(invariantProblems(N, readOutput(out))).toEqual([]);
      expect(await sinkProblems(sink, { table, dirs: [out] })).toEqual([]);
    },
    90_000,
  );

  itDb('mysql')(
    "the sink's connections killed once: the run connects again by itself and finishes, the tables whole",
    async () => {
      // Every connection to the sink's database is killed: a database no other case writes.
      const own = await freshDatabase('mysql', 'bre_e2e_sinkm_kc');
      const out = join(tempDir('bre-e2e-sinkm-killconn-'), 'out');
      const run = startCli(
        runArgs(
          'location',
          source,
          out,
          '--table',
          'loc',
          '--sink',
          own,
          '--sink-table',
          'killed',
          '--rate',
          'workflow=75/s',
        ),
      );
      await waitForTable<{ n: string | number }>(
        run,
        own,
        'SELECT count(*) AS n FROM killed',
        (r) => Number(r[0]?.n ?? 0) >= 100,
        '100 rows in the sink',
      );
      const ownDb = new URL(own).pathname.slice(1);
      await waitFor(async () => (await killConnections('mysql', ownDb)) >= 1, 10_000, "the sink's connection killed");
      const res = await run.done;
      expect(res.code, res.stderr).toBe(1);
      const o = readOutput(out);
      expect(invariantProblems(N, o)).toEqual([]);
      expect(o.summary.sink.reconnects).toBeGreaterThanOrEqual(1);
      expect(await sinkProblems(own, { table: 'killed', dirs: [out] })).toEqual([]);
    },
    90_000,
  );

  describe('a sink that stays away', () => {
    let proxy: TcpProxy;
    let proxied: string;
    beforeAll(async () => {
      const u = new URL(sink);
      proxy = await startTcpProxy(u.hostname, Number(u.port));
      u.port = String(proxy.port);
      proxied = u.href;
    });
    afterAll(async () => proxy?.close());

    itDb('mysql')(
      'past --sink-retry: exit 3 (SINK_UNAVAILABLE) naming the sink; back again, the same command finishes with nothing lost',
      async () => {
        const out = join(tempDir('bre-e2e-sinkm-away-'), 'out');
        const cmd = runArgs(
          'location',
          source,
          out,
          '--table',
          'loc_long',
          '--sink',
          proxied,
          '--sink-table',
          'away',
          '--rate',
          'workflow=40/s',
          '--sink-retry',
          '1s',
          '--log-format',
          'json',
        );
        const run = startCli(cmd);
        await waitForTable<{ n: string | number }>(
          run,
          sink,
          'SELECT count(*) AS n FROM away',
          (r) => Number(r[0]?.n ?? 0) >= 30,
          '30 rows in the sink',
        );
        await proxy.down();
        const res = await run.done;
        expect(res.code, res.stderr).toBe(3);
        expect(exitErrorCode(res.stderr)).toBe('SINK_UNAVAILABLE');
        expect(res.stderr).toContain(`MySQL/MariaDB at ${proxied.replace(/\/$/, '')}`);
        expect(res.stderr).toMatch(/re-run the same command/);
        const stopped = readOutput(out);
        expect(stopped.results.length + stopped.errors.length).toBeLessThan(N);
        await proxy.up();
        const again = await spawnCli(cmd);
        expect(again.code, again.stderr).toBe(1);
        expect(invariantProblems(N, readOutput(out))).toEqual([]);
        expect(await sinkProblems(sink, { table: 'away', dirs: [out] })).toEqual([]);
      },
      90_000,
    );
  });
});
