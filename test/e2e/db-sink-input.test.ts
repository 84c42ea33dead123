/**
 * Bad input and bad settings with a PostgreSQL --sink, through the CLI: duplicate and missing keys (from a
 * table and from a file) become error rows in NAME_errors and never a second row in NAME; a user's own table
 * of the wrong shape, a password on the command line, a host where nothing answers and a query that does
 * not parse all stop before anything is called or any folder is made (exit 2). The runs whose tables are the
 * point are the CLI's code in this process (test/helpers/cli-in-process.ts); the refusals are processes.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect } from 'vitest';
import { runArgs, spawnCli } from '../helpers/cli.js';
import { runInProcess } from '../helpers/cli-in-process.js';
import { available, freshDatabase, itDb } from '../helpers/db.js';
import { loadRows, sql } from '../helpers/db-load.js';
import { invariantProblems, readOutput } from '../helpers/output.js';
import { startCountingProxy, type CountingProxy } from '../helpers/proxy.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { locationCsvText, locationRows } from '../helpers/sink-inputs.js';
import { exitErrorCode, readTable, sinkProblems, tableNames } from '../helpers/sink-tables.js';
import { tempDir } from '../helpers/temp.js';

describe.runIf(available.postgres || process.env.CI === 'true')(
  'bad input and bad settings with a PostgreSQL sink',
  () => {
    let source: string;
    let sink: string;
    let sb: TestSandbox;
    let proxy: CountingProxy;
    beforeAll(async () => {
      source = await freshDatabase('postgres', 'bre_e2e_sinki_src');
      sink = await freshDatabase('postgres', 'bre_e2e_sinki_dst');
      sb = await startTestSandbox({ rate: { workflow: null } });
      proxy = await startCountingProxy(sb.sandbox.url);
    });
    afterAll(async () => {
      await proxy?.close();
      await sb?.close();
    });
    beforeEach(() => proxy.reset());
    const env = () => sb.env(proxy.url);

    itDb('postgres')(
      'a table with a duplicated key and a NULL key: their error rows reach NAME_errors, NAME holds each other key once',
      async () => {
        const rows = locationRows(8);
        rows.push({ ...rows[2], user_id: 'user-dup' }, { ...rows[5], reference_id: null });
        await loadRows(source, 'bad_keys', rows);
        const out = join(tempDir('bre-e2e-sinki-dbkeys-'), 'out');
        const r = await runInProcess(
          runArgs(
            'location',
            source,
            out,
            '--table',
            'bad_keys',
            '--sink',
            sink,
            '--sink-table',
            'dbkeys',
            '--rate',
            'off',
          ),
          env(),
        );
        expect(r.code, r.stderr).toBe(1);
        const o = readOutput(out);
        expect(invariantProblems(10, o)).toEqual([]);
        expect(await sinkProblems(sink, { table: 'dbkeys', dirs: [out] })).toEqual([]);
        const errors = (await readTable(sink, 'dbkeys_errors')).rows;
        expect(
          errors.map((e) => [e.reference_id, e.code]).sort((a, b) => String(a[1]).localeCompare(String(b[1]))),
        ).toEqual([
          ['LOC-000003', 'DUPLICATE_KEY'],
          ['LOC-000003', 'DUPLICATE_KEY'],
          [null, 'MISSING_KEY'],
        ]);
        // A row read from a table carries its values, to find it by.
        expect(errors.every((e) => (e.input as Record<string, unknown>).lead_id !== undefined)).toBe(true);
        const keys = (await readTable(sink, 'dbkeys')).rows.map((x) => x.reference_id).sort();
        expect(keys).toEqual(
          locationRows(8)
            .map((x) => x.reference_id)
            .filter((k) => k !== 'LOC-000003'),
        );
      },
    );

    itDb('postgres')(
      'a file with a duplicated key and an empty key: DUPLICATE_KEY and MISSING_KEY rows before any call, the first of the key in NAME',
      async () => {
        const dir = tempDir('bre-e2e-sinki-filekeys-');
        const rows = locationRows(8);
        rows.splice(5, 0, { ...rows[2], user_id: 'user-dup' });
        rows.push({ ...rows[6], reference_id: null });
        const input = join(dir, 'input.csv');
        writeFileSync(input, locationCsvText(rows));
        const out = join(dir, 'out');
        const r = await runInProcess(
          runArgs('location', input, out, '--sink', sink, '--sink-table', 'filekeys', '--rate', 'off'),
          env(),
        );
        expect(r.code, r.stderr).toBe(1);
        const o = readOutput(out);
        expect(invariantProblems(10, o)).toEqual([]);
        expect(
          o.errors.map((e) => [e.row, e.key, e.code, e.field]).sort((a, b) => Number(a[0]) - Number(b[0])),
        ).toEqual([
          [6, 'LOC-000003', 'DUPLICATE_KEY', 'reference_id'],
          [10, null, 'MISSING_KEY', 'reference_id'],
        ]);
        // Read whole, so each line shows its row (masked as any error line's input is).
        for (const e of o.errors) expect(e.input, `row ${e.row}'s input`).toHaveProperty('user_id');
        // Neither was sent: eight calls for the eight keys.
        expect(proxy.counts.requests).toBe(8);
        expect(await sinkProblems(sink, { table: 'filekeys', dirs: [out] })).toEqual([]);
        const named = (await readTable(sink, 'filekeys')).rows.find((x) => x.reference_id === 'LOC-000003');
        expect(named?.row).toBe('3');
        const errors = (await readTable(sink, 'filekeys_errors')).rows.sort((a, b) => Number(a.row) - Number(b.row));
        expect(errors.map((e) => [e.row, e.reference_id, e.code])).toEqual([
          ['6', 'LOC-000003', 'DUPLICATE_KEY'],
          ['10', null, 'MISSING_KEY'],
        ]);
        // A file's row is found by its line (the header is line 1).
        expect(errors.map((e) => e.line)).toEqual(['7', '11']);
      },
    );

    itDb('postgres')(
      "a user's own table with a column of the wrong type: exit 2 (SINK_TABLE_MISMATCH) naming the fix, nothing called, no folder, the table untouched",
      async () => {
        await sql(sink, 'CREATE TABLE mine (reference_id text PRIMARY KEY, "row" bigint, result integer, note text)');
        const out = join(tempDir('bre-e2e-sinki-mine-'), 'out');
        const input = join(tempDir('bre-e2e-sinki-mine-in-'), 'input.csv');
        writeFileSync(input, locationCsvText(locationRows(5)));
        const r = await spawnCli(
          runArgs(
            'location',
            input,
            out,
            '--sink',
            sink,
            '--sink-table',
            'mine',
            '--rate',
            'off',
            '--log-format',
            'json',
          ),
          env(),
        );
        expect(r.code, r.stderr).toBe(2);
        expect(exitErrorCode(r.stderr)).toBe('SINK_TABLE_MISMATCH');
        expect(r.stderr).toMatch(/its column result is integer, which cannot hold JSON.*Fix: make it jsonb/);
        expect(proxy.counts.requests).toBe(0);
        expect(existsSync(out)).toBe(false);
        const t = await readTable(sink, 'mine');
        expect([...t.types.keys()].sort()).toEqual(['note', 'reference_id', 'result', 'row']);
        expect(t.rows).toEqual([]);
        expect(await tableNames(sink)).not.toContain('mine_errors');
      },
    );

    itDb('postgres')(
      "a user's own table of the right shape is written into as it is: no column added, the fields it lacks in `result`",
      async () => {
        await sql(
          sink,
          'CREATE TABLE theirs (reference_id varchar(40) PRIMARY KEY, "row" bigint, result jsonb, "location.decision" text, loaded_at timestamp, note text DEFAULT \'x\')',
        );
        const dir = tempDir('bre-e2e-sinki-theirs-');
        const input = join(dir, 'input.csv');
        writeFileSync(input, locationCsvText(locationRows(5)));
        const out = join(dir, 'out');
        const r = await runInProcess(
          runArgs('location', input, out, '--sink', sink, '--sink-table', 'theirs', '--rate', 'off'),
          env(),
        );
        expect(r.code, r.stderr).toBe(0);
        const t = await readTable(sink, 'theirs');
        expect([...t.types.keys()].sort()).toEqual([
          'loaded_at',
          'location.decision',
          'note',
          'reference_id',
          'result',
          'row',
        ]);
        const lines = readOutput(out).results;
        expect(t.rows).toHaveLength(5);
        for (const l of lines) {
          const row = t.rows.find((x) => x.reference_id === l.key)!;
          expect(row.result).toEqual(l.stages);
          expect(row['location.decision']).toBe(
            (l.stages as Record<string, Record<string, unknown>>).location.decision,
          );
          expect(row.note).toBe('x');
        }
      },
    );

    itDb('postgres')(
      'settings that cannot work: exit 2 before any folder or call (a password on the command line, nothing answering, a query that does not parse)',
      async () => {
        const dir = tempDir('bre-e2e-sinki-fail-');
        const input = join(dir, 'input.csv');
        writeFileSync(input, locationCsvText(locationRows(3)));
        const before = await tableNames(sink);
        const cases: { name: string; args: string[]; code: string }[] = [
          {
            name: 'password',
            args: ['--input', input, '--sink', 'postgres://u:Secr3tSinkPw@127.0.0.1/db'],
            code: 'USAGE',
          },
          {
            name: 'unreachable',
            args: ['--input', input, '--sink', 'postgres://postgres@127.0.0.1:1/db'],
            code: 'DB_UNREACHABLE',
          },
          {
            name: 'query',
            args: ['--input', source, '--query', 'SELEC * FROM bad_keys', '--sink', sink],
            code: 'DB_QUERY_FAILED',
          },
        ];
        for (const c of cases) {
          const out = join(dir, c.name);
          const r = await spawnCli(
            ['run', 'location', ...c.args, '--out', out, '--no-progress', '--log-format', 'json'],
            env(),
          );
          expect(r.code, `${c.name}: ${r.stderr}`).toBe(2);
          expect(exitErrorCode(r.stderr), `${c.name}: ${r.stderr}`).toBe(c.code);
          expect(existsSync(out), `${c.name} made ${out}`).toBe(false);
          expect(r.stdout + r.stderr).not.toContain('Secr3tSinkPw');
        }
        expect(proxy.counts.requests).toBe(0);
        // Nothing made in the sink either.
        expect(await tableNames(sink)).toEqual(before);
        expect(readFileSync(input, 'utf8')).toContain('LOC-000001');
      },
    );
  },
);
