/**
 * A PostgreSQL sink that goes away mid-run, its input in another database that keeps working: made
 * unconnectable (ALLOW_CONNECTIONS false, its backends terminated) the run stops after --sink-retry with
 * exit 3 (SINK_UNAVAILABLE) naming the sink and saying a re-run resumes; once it is back the same command
 * finishes and the tables equal the folder, nothing lost. Its connections killed once, the run connects again
 * by itself and finishes with every row in the tables.
 *
 * Each case has a sink database of its own (the one it cuts) and the two run side by side: they wait on the
 * run's pace and on the sink's retry, not on the CPU.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect } from 'vitest';
import { runArgs, spawnCli, startCli } from '../helpers/cli.js';
import { adminSession, available, freshDatabase, itDb, killConnections } from '../helpers/db.js';
import { loadRows } from '../helpers/db-load.js';
import { invariantProblems, readOutput } from '../helpers/output.js';
import { locationRows, waitForTable } from '../helpers/sink-inputs.js';
import { exitErrorCode, logLines, sinkProblems } from '../helpers/sink-tables.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

// Rows cost CPU, the rate sets how long a run lasts: few rows at a modest rate keep the cuts mid-run.
const N = 300;
const BAD = [7, 150];
/** The input of the run the sink leaves for good: long enough (6 s at 75/s) that the run is stopped well before its end. */
const LONG = 450;

describe.runIf(available.postgres || process.env.CI === 'true')(
  'a PostgreSQL sink that goes away mid-run',
  { concurrent: true },
  () => {
    let source: string;
    beforeAll(async () => {
      source = await freshDatabase('postgres', 'bre_e2e_sinkf_src');
      await loadRows(source, 'loc', locationRows(N, BAD));
      await loadRows(source, 'loc_long', locationRows(LONG, BAD));
    });

    /** The case's own sink database, its URL and its name. */
    async function sinkFor(): Promise<{ sink: string; sinkDb: string }> {
      const sink = await freshDatabase('postgres', 'bre_e2e_sinkf_dst');
      return { sink, sinkDb: new URL(sink).pathname.slice(1) };
    }

    async function allowConnections(sinkDb: string, allow: boolean): Promise<void> {
      const admin = await adminSession('postgres');
      try {
        await admin.query(`ALTER DATABASE "${sinkDb}" ALLOW_CONNECTIONS ${allow}`);
      } finally {
        await admin.close();
      }
    }

    /** 75 rows/s (4 s for N rows): the sink is cut while the run goes on. */
    const args = (sink: string, out: string, input: string, table: string, ...more: string[]) =>
      runArgs(
        'location',
        source,
        out,
        '--table',
        input,
        '--sink',
        sink,
        '--sink-table',
        table,
        '--rate',
        'workflow=75/s',
        '--log-format',
        'json',
        ...more,
      );
    const rowsIn = (table: string) => `SELECT count(*) AS n FROM "${table}"`;

    itDb('postgres')(
      'unconnectable past --sink-retry: exit 3 naming the sink; back again, the same command finishes with nothing lost',
      async (t) => {
        const { sink, sinkDb } = await sinkFor();
        // Whatever the case did, its database takes connections again (the file's clean-up drops it).
        t.onTestFinished(() => allowConnections(sinkDb, true));
        const out = join(tempDir('bre-e2e-sinkf-away-'), 'out');
        const cmd = args(sink, out, 'loc_long', 'away', '--sink-retry', '1s');
        const run = startCli(cmd);
        await waitForTable<{ n: string }>(
          run,
          sink,
          rowsIn('away'),
          (r) => Number(r[0]?.n ?? 0) >= 30,
          '30 rows in the sink',
        );
        await allowConnections(sinkDb, false);
        await waitFor(
          async () => (await killConnections('postgres', sinkDb)) >= 1,
          10_000,
          "the sink's connection terminated",
        );
        const res = await run.done;
        expect(res.code, res.stderr).toBe(3);
        expect(exitErrorCode(res.stderr)).toBe('SINK_UNAVAILABLE');
        const errors = logLines(res.stderr)
          .filter((l) => l.level === 'error')
          .map((l) => l.message)
          .join('\n');
        expect(errors).toContain(`PostgreSQL at ${sink.replace(/\/$/, '')}`);
        expect(errors).toMatch(/did not come back within --sink-retry \(1 s\)/);
        expect(errors).toMatch(/re-run the same command/);
        const stopped = readOutput(out);
        expect(stopped.summary.stopped.code).toBe('SINK_UNAVAILABLE');
        expect(stopped.results.length + stopped.errors.length).toBeLessThan(LONG);

        await allowConnections(sinkDb, true);
        const again = await spawnCli(cmd);
        expect(again.code, again.stderr).toBe(1);
        const o = readOutput(out);
        expect(invariantProblems(LONG, o)).toEqual([]);
        // The rows done before the stop (written to the folder, not yet to the sink) are caught up first.
        expect(o.summary.sink.results_written).toBeGreaterThan(LONG - BAD.length - stopped.results.length);
        expect(await sinkProblems(sink, { table: 'away', dirs: [out] })).toEqual([]);
      },
      90_000,
    );

    itDb('postgres')(
      'its connections killed once: the run connects again by itself and finishes, the tables whole',
      async () => {
        const { sink, sinkDb } = await sinkFor();
        const out = join(tempDir('bre-e2e-sinkf-kill-'), 'out');
        const run = startCli(args(sink, out, 'loc', 'killed'));
        await waitForTable<{ n: string }>(
          run,
          sink,
          rowsIn('killed'),
          (r) => Number(r[0]?.n ?? 0) >= 100,
          '100 rows in the sink',
        );
        await waitFor(
          async () => (await killConnections('postgres', sinkDb)) >= 1,
          10_000,
          "the sink's connection terminated",
        );
        const res = await run.done;
        expect(res.code, res.stderr).toBe(1);
        const o = readOutput(out);
        expect(invariantProblems(N, o)).toEqual([]);
        expect(o.summary.stopped).toBeNull();
        expect(await sinkProblems(sink, { table: 'killed', dirs: [out] })).toEqual([]);
        expect(o.summary.sink.reconnects).toBeGreaterThanOrEqual(1);
      },
      90_000,
    );
  },
);
