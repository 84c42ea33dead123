/**
 * The sink's column names through the CLI on PostgreSQL and MariaDB: result fields in plain columns a query
 * names unquoted (`location_decision`), `loaded_at` an instant; a table an earlier bre-batch made with dotted
 * columns is refused before any call (exit 2, SINK_TABLE_MISMATCH) with the RENAME statements, which fix it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect } from 'vitest';
import { ROOT, runArgs, spawnCli } from '../helpers/cli.js';
import { available, freshDatabase, itDb } from '../helpers/db.js';
import { loadSample } from '../helpers/db-load.js';
import { readOutput } from '../helpers/output.js';
import { query, quote } from '../helpers/sink.js';
import { exitErrorCode, logLines, readTable, sinkProblems } from '../helpers/sink-tables.js';
import { tempDir } from '../helpers/temp.js';

const SAMPLE = join(ROOT, 'samples', 'location.csv');

for (const dialect of ['postgres', 'mysql'] as const) {
  describe.runIf(available[dialect] || process.env.CI === 'true')(`sink column names on ${dialect}`, () => {
    let source: string;
    let sink: string;
    let rows: number;
    beforeAll(async () => {
      source = await freshDatabase(dialect, `bre_e2e_sinkn_src_${dialect}`);
      sink = await freshDatabase(dialect, `bre_e2e_sinkn_dst_${dialect}`);
      rows = (await loadSample(source, 'loc', SAMPLE)).rows.length;
    });
    const run = (out: string) =>
      spawnCli(
        runArgs(
          'location',
          source,
          out,
          '--table',
          'loc',
          '--sink',
          sink,
          '--sink-table',
          'named',
          '--rate',
          'off',
          '--log-format',
          'json',
        ),
      );

    itDb(dialect)(
      'result fields are plain columns a query names unquoted; loaded_at is an instant; an old dotted table is refused with its fix',
      async () => {
        const out = join(tempDir(`bre-e2e-sinkn-${dialect}-`), 'out');
        const r = await run(out);
        expect(r.code, r.stderr).toBe(0);
        expect(readOutput(out).results.length + readOutput(out).errors.length).toBe(rows);
        expect(await sinkProblems(sink, { table: 'named', dirs: [out] })).toEqual([]);
        const t = await readTable(sink, 'named');
        const cols = [...t.types.keys()];
        expect(cols).toContain('location_decision');
        for (const c of cols) expect(c).toMatch(/^[a-z_][a-z0-9_]*$/);
        expect(t.types.get('loaded_at')).toBe(dialect === 'postgres' ? 'timestamp with time zone' : 'datetime(3)');
        const counts = await query<{ location_decision: string; n: unknown }>(
          sink,
          'SELECT location_decision, count(*) AS n FROM named GROUP BY location_decision',
        );
        expect(counts.reduce((s, c) => s + Number(c.n), 0)).toBe(readOutput(out).results.length);

        // As an earlier bre-batch left it: the result columns named as in results.csv.
        const old = cols.filter((c) => c.startsWith('location_'));
        for (const c of old)
          await query(
            sink,
            `ALTER TABLE named RENAME COLUMN ${c} TO ${quote(sink, c.replace('location_', 'location.'))}`,
          );
        const again = join(tempDir(`bre-e2e-sinkn-${dialect}-old-`), 'out');
        const refused = await run(again);
        expect(refused.code, refused.stderr).toBe(2);
        expect(exitErrorCode(refused.stderr)).toBe('SINK_TABLE_MISMATCH');
        const message =
          logLines(refused.stderr)
            .filter((l) => l.code === 'SINK_TABLE_MISMATCH')
            .at(-1)?.message ?? '';
        expect(message).toContain('--sink-table');
        expect(existsSync(again)).toBe(false);
        const statements = message.match(/ALTER TABLE [^;]+ RENAME COLUMN [^;]+;/g) ?? [];
        expect(statements).toHaveLength(old.length);
        expect(statements.join(' ')).toContain('TO location_decision;');

        // The statements the message gives are the fix: the same command then runs, into the same columns.
        for (const s of statements) await query(sink, s);
        const fixed = await run(again);
        expect(fixed.code, fixed.stderr).toBe(0);
        expect([...(await readTable(sink, 'named')).types.keys()].sort()).toEqual([...cols].sort());
      },
    );
  });
}
