/**
 * The cases of the database input's e2e tests, one file per dialect (db-source-postgres.test.ts,
 * db-source-mysql.test.ts). A database as the input, through the real CLI against the local PostgreSQL and
 * MariaDB (each test file its own databases, dropped afterwards), as a user runs it: shipped pipelines' samples loaded into tables give
 * the same results as the files; kill -9 at seeded moments, then the same command: every key once, and the
 * resume starts after the frontier instead of the start; NULL and duplicate keys; a missing table, a query
 * that does not parse, an unreachable host, a password on the command line; connections killed mid-run and a
 * source that stays away; another source refused; the table changed behind a retry. A run whose folder,
 * message or exit code is the point (a reference run from the file, a first session to resume, the same command
 * after a kill or a stop, `--plan`, `--dry-run`, `verify` and `merge`) is the CLI's code in this process
 * (test/helpers/cli-in-process.ts); a process is spawned for what only one shows: kill -9, a connection cut
 * under it, a run stopped by its source going away, and the first of a test's refusals (its exit code through
 * main.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { DialectName } from '../../../src/db/index.js';
import { ROOT, runArgs, spawnCli, startCli, waitForLines } from '../../helpers/cli.js';
import { runInProcess } from '../../helpers/cli-in-process.js';
import { available, freshDatabase, itDb, killConnections } from '../../helpers/db.js';
import { loadRows, loadSample, sql, type SampleRow } from '../../helpers/db-load.js';
import {
  countLines,
  filesUnder,
  invariantProblems,
  readOutput,
  type RunFolder,
  journalText,
  searchableText,
} from '../../helpers/output.js';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy.js';
import { tempDir } from '../../helpers/temp.js';
import { waitFor } from '../../helpers/wait.js';
import { mulberry32 } from '@bre-batch/sandbox/logic/hash';

const SAMPLES = join(ROOT, 'samples');
/** File columns (bureau_report_path...) of a database input resolve against where the command runs. */
const inSamples = { cwd: SAMPLES };

/** results.ndjson by key, what the service stamps on each call (request ids, times of the run) masked. */
function resultsByKey(dir: string): Map<string, string> {
  const now = Date.now();
  const dateTime = /\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?/g;
  const mask = (s: string) =>
    s
      .replace(/\b[0-9a-f]{32}\b/g, '<id>')
      .replace(dateTime, (m) => (Math.abs(Date.parse(m.replace(' ', 'T')) - now) < 10 * 86_400_000 ? '<now>' : m));
  const out = new Map<string, string>();
  for (const line of journalText(join(dir, 'results.ndjson'))
    .split('\n')
    .filter((l) => l !== '')) {
    const v = JSON.parse(line, (_k, x: unknown) => (typeof x === 'string' ? mask(x) : x)) as {
      key: string;
      stages: unknown;
    };
    expect(out.has(v.key), `key ${v.key} twice in ${dir}`).toBe(false);
    out.set(v.key, JSON.stringify(v.stages));
  }
  return out;
}

/** Every key of `keys` exactly once across results and errors, and rows 1..n once (the contract's invariant). */
function keyProblems(out: RunFolder, keys: readonly (string | null)[]): string[] {
  const problems = invariantProblems(keys.length, out);
  const seen = new Map<string, number>();
  for (const l of [...out.results, ...out.errors]) seen.set(String(l.key), (seen.get(String(l.key)) ?? 0) + 1);
  const want = new Map<string, number>();
  for (const k of keys) want.set(String(k), (want.get(String(k)) ?? 0) + 1);
  for (const [k, n] of want) if (seen.get(k) !== n) problems.push(`key ${k}: ${seen.get(k) ?? 0} lines, expected ${n}`);
  for (const k of seen.keys()) if (!want.has(k)) problems.push(`key ${k} is not in the input`);
  return problems;
}

/** `n` rows for the location pipeline, keys LOC-000001... (a few with a latitude out of range when `bad`). */
function locationRows(n: number, bad: readonly number[] = []): SampleRow[] {
  return Array.from({ length: n }, (_, j) => {
    const i = j + 1;
    const id = String(i).padStart(6, '0');
    const lat = bad.includes(i) ? '999.0000' : (10 + ((i * 7919) % 2000) / 100).toFixed(4);
    return {
      reference_id: `LOC-${id}`,
      user_id: `user${id}`,
      lead_id: `lead${id}`,
      latitude: lat,
      longitude: (72 + ((i * 104729) % 1600) / 100).toFixed(4),
    };
  });
}

/** A seeded PRNG (the sandbox's mulberry32): the kill points are random but the same on every run of the test. */
const prng = (seed: number): (() => number) => mulberry32(seed);

function frontierOf(out: string): { row: number; key: string | null } | undefined {
  const path = join(out, '.state', 'source-frontier.json');
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as { row: number; key: string | null }) : undefined;
}

/** The database input's tests on one dialect: one test file per dialect, so that both run at once. */
export function databaseInputTests(dialect: DialectName): void {
  const scheme = dialect === 'postgres' ? 'postgres' : 'mysql';
  // Side by side: each case has tables and folders of its own (the runs in this process take turns, the spawned
  // ones and their waits overlap); the two that kill or cut connections have a database or a proxy of their own,
  // so no other case's run sees a reconnect.
  describe.runIf(available[dialect] || process.env.CI === 'true').concurrent(`database input: ${dialect}`, () => {
    let url: string;
    beforeAll(async () => {
      url = await freshDatabase(dialect, 'bre_e2e_src');
      expect(url.startsWith(`${scheme}://`)).toBe(true);
    });

    const pipelines =
      dialect === 'postgres' ? ['location', 'rescore', 'bank', 'aa_transactions'] : ['location', 'bank'];
    itDb(dialect).each(pipelines)(
      '%s: its sample as a table gives the results of the sample file, by key',
      async (p) => {
        const sample = join(SAMPLES, existsSync(join(SAMPLES, `${p}.csv`)) ? `${p}.csv` : `${p}.ndjson`);
        const { rows } = await loadSample(url, p, sample);
        const dir = tempDir(`bre-e2e-db-${p}-`);
        const fromFile = await runInProcess(runArgs(p, sample, join(dir, 'file'), '--rate', 'off'));
        expect(fromFile.code, fromFile.stderr).toBe(0);
        // A database has no folder: its rows' report and bank files are read inside --files-root.
        const fromDb = await runInProcess(
          runArgs(p, url, join(dir, 'db'), '--table', p, '--rate', 'off', '--files-root', SAMPLES),
        );
        expect(fromDb.code, fromDb.stderr).toBe(0);
        const out = readOutput(join(dir, 'db'));
        expect(
          keyProblems(
            out,
            rows.map((r) => String(r.reference_id)),
          ),
        ).toEqual([]);
        expect(out.errors).toEqual([]);
        expect(resultsByKey(join(dir, 'db'))).toEqual(resultsByKey(join(dir, 'file')));
        expect(out.summary.source).toMatchObject({
          table: p,
          query: null,
          key: 'reference_id',
          started_after_row: 0,
          rows_read: rows.length,
          reconnects: 0,
        });
        expect(out.summary.source.url).toMatch(new RegExp(`^${dialect}://[^:@]+@127\\.0\\.0\\.1:\\d+/bre_e2e_src_`));
        if (p === 'aa_transactions')
          expect(readFileSync(join(dir, 'db', 'transactions.csv'), 'utf8')).toBe(
            readFileSync(join(dir, 'file', 'transactions.csv'), 'utf8'),
          );
      },
    );

    itDb(dialect)(
      'a table naming report files needs --files-root: exit 2 before anything is called or written',
      async () => {
        const sample = join(SAMPLES, 'rescore.csv');
        await loadSample(url, 'rescore_noroot', sample);
        const dir = tempDir('bre-e2e-db-noroot-');
        const r = await spawnCli(
          runArgs('rescore', url, join(dir, 'out'), '--table', 'rescore_noroot', '--rate', 'off'),
          {},
          inSamples,
        );
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toMatch(/bureau_report_path/);
        expect(r.stderr).toMatch(/--files-root/);
        expect(existsSync(join(dir, 'out'))).toBe(false);
      },
    );

    itDb(dialect)(
      'a sample drawn from a table: the same keys and weights as from the file, and --plan beside the whole table',
      async () => {
        const sample = join(SAMPLES, 'champion_challenger.csv');
        await loadSample(url, 'cc_sample', sample);
        const dir = tempDir('bre-e2e-db-sample-');
        const opts = ['--sample-share', '0.2', '--stratify-by', 'application_date:month', '--rate', 'off'];
        const fromFile = await runInProcess(runArgs('champion_challenger', sample, join(dir, 'file'), ...opts));
        expect(fromFile.code, fromFile.stderr).toBe(0);
        const fromDb = await runInProcess(
          runArgs('champion_challenger', url, join(dir, 'db'), '--table', 'cc_sample', ...opts),
        );
        expect(fromDb.code, fromDb.stderr).toBe(0);
        const weights = (d: string) =>
          new Map(
            readOutput(join(dir, d)).results.map((l) => [
              l.key,
              `${(l as { stratum?: string }).stratum}:${(l as { weight?: number }).weight}`,
            ]),
          );
        expect(weights('db').size).toBe(300);
        expect(weights('db')).toEqual(weights('file'));
        const plan = await runInProcess([
          'run',
          'champion_challenger',
          '--input',
          url,
          '--table',
          'cc_sample',
          '--plan',
          ...opts.slice(0, 4),
        ]);
        expect(plan.code, plan.stderr).toBe(0);
        expect(plan.stdout).toMatch(/a sample of 300 of 1,500 rows, 16 strata/);
        expect(plan.stdout).toMatch(/beside it, the whole input: 1,500 rows/);
      },
    );

    itDb(dialect)(
      '--query reads what the query selects, in key order; --dry-run and --plan read the same',
      async () => {
        await loadRows(url, 'q_loc', locationRows(30));
        const query = "SELECT * FROM q_loc WHERE user_id <> 'user000007'";
        const dir = tempDir('bre-e2e-db-query-');
        const r = await runInProcess(
          runArgs('location', url, join(dir, 'out'), '--query', query, '--rate', 'off', '--input-page-rows', '7'),
        );
        expect(r.code, r.stderr).toBe(0);
        const out = readOutput(join(dir, 'out'));
        expect(
          keyProblems(
            out,
            locationRows(30)
              .filter((x) => x.user_id !== 'user000007')
              .map((x) => String(x.reference_id)),
          ),
        ).toEqual([]);
        // Row numbers follow key order.
        expect(out.results.sort((a, b) => a.row - b.row).map((l) => l.key)).toEqual(
          out.results.map((l) => l.key).sort(),
        );
        expect(out.summary.source).toMatchObject({ query, table: null });
        const dry = await runInProcess([
          'run',
          'location',
          '--input',
          url,
          '--query',
          query,
          '--out',
          join(dir, 'dry'),
          '--dry-run',
          '--no-progress',
        ]);
        expect(dry.code, dry.stderr).toBe(0);
        expect(dry.stdout).toMatch(/29 valid, 0 would fail/);
        const plan = await runInProcess([
          'run',
          'location',
          '--input',
          url,
          '--query',
          query,
          '--plan',
          '--out',
          join(dir, 'out'),
        ]);
        expect(plan.code, plan.stderr).toBe(0);
        expect(plan.stdout).toMatch(/rows to do: 0 \(29 already done in the output folder\)/);
        const fresh = await runInProcess([
          'run',
          'location',
          '--input',
          url,
          '--table',
          'q_loc',
          '--plan',
          '--limit',
          '12',
        ]);
        expect(fresh.stdout).toMatch(/rows to do: 12\b/);
      },
    );

    itDb(dialect)('a NULL key and a duplicated key are row errors naming the key column; the rest run', async () => {
      const rows = locationRows(8);
      rows.push({ ...rows[2], user_id: 'user-dup' }, { ...rows[5], reference_id: null });
      await loadRows(url, 'bad_keys', rows);
      const out = tempDir('bre-e2e-db-keys-');
      const r = await runInProcess(runArgs('location', url, out, '--table', 'bad_keys', '--rate', 'off'));
      expect(r.code, r.stderr).toBe(1);
      const o = readOutput(out);
      expect(invariantProblems(10, o)).toEqual([]);
      const missing = o.errors.filter((e) => e.code === 'MISSING_KEY');
      expect(missing).toHaveLength(1);
      expect(missing[0]).toMatchObject({
        row: 1,
        key: null,
        field: 'reference_id',
        expected: 'a value in reference_id',
      });
      expect((missing[0].input as Record<string, unknown>).user_id).toBeDefined();
      const dup = o.errors.filter((e) => e.code === 'DUPLICATE_KEY');
      expect(dup.map((e) => e.key)).toEqual(['LOC-000003', 'LOC-000003']);
      expect(dup[0]).toMatchObject({ field: 'reference_id', expected: 'one row per reference_id' });
      expect(String(dup[0].message)).toMatch(/2 rows of the input have reference_id 'LOC-000003'/);
      expect(o.results.map((l) => l.key).sort()).toEqual(
        locationRows(8)
          .map((x) => x.reference_id)
          .filter((k) => k !== 'LOC-000003')
          .sort(),
      );

      // verify reads the table again: every row once by its key (the keyless and the duplicated ones too).
      const ok = await runInProcess(['verify', out]);
      expect(ok.code, ok.stdout + ok.stderr).toBe(0);
      expect(ok.stdout).toMatch(/checked: table bad_keys at \S+: 10 rows read again, their keys each once/);
      // A row gone from the table and one added since: exit 1 naming both keys and the count.
      const q = (id: string) => (dialect === 'postgres' ? `"${id}"` : `\`${id}\``);
      const p = (i: number) => (dialect === 'postgres' ? `$${i}` : '?');
      await sql(url, `DELETE FROM ${q('bad_keys')} WHERE ${q('reference_id')} = ${p(1)}`, ['LOC-000005']);
      await sql(url, `INSERT INTO ${q('bad_keys')} (${q('reference_id')}, ${q('user_id')}) VALUES (${p(1)}, ${p(2)})`, [
        'LOC-000099',
        'user99',
      ]);
      const changed = await runInProcess(['verify', out]);
      expect(changed.code, changed.stdout + changed.stderr).toBe(1);
      expect(changed.stdout).toContain(
        'DIFFERS: 1 keys of table bad_keys are in neither results nor errors: "LOC-000099"',
      );
      expect(changed.stdout).toContain(
        'DIFFERS: 1 rows of the folder have keys that table bad_keys does not hold: "LOC-000005"',
      );
      // --input names the database to read again; another one is refused.
      const other = await spawnCli(['verify', out, '--input', url.replace(/\/[^/]+$/, '/other_db')]);
      expect(other.code, other.stderr).toBe(2);
      expect(other.stderr).toContain('Expected --input to name the database the run read');
    });

    itDb(dialect)(
      'failures before the run: exit 2 naming what failed, no output folder, never a password',
      async () => {
        const dir = tempDir('bre-e2e-db-fail-');
        const cases: [string[], RegExp][] = [
          [['--input', url, '--table', 'no_such_table'], /cannot read table no_such_table from .*bre_e2e_src_/],
          [
            ['--input', url, '--query', 'SELEC reference_id FROM bad_keys'],
            /cannot read the query SELEC reference_id FROM bad_keys .*(syntax|42601|ER_PARSE_ERROR)/,
          ],
          [
            ['--input', `${scheme}://nobody@127.0.0.1:9/x`, '--table', 't'],
            /cannot connect to .* at .*127\.0\.0\.1:9\/x: nothing answers/,
          ],
          [
            ['--input', `${scheme}://nobody:hunter2secret@127.0.0.1/x`, '--table', 't'],
            /refusing a password on the command line \(--input\)/,
          ],
          [['--input', url, '--table', 't', '--delimiter', ';'], /Expected no --delimiter with a database --input/],
          [['--input', url], /Expected --table NAME or --query/],
          [['--input', join(SAMPLES, 'location.csv'), '--table', 't'], /Expected --table only with a database --input/],
        ];
        for (const [i, [args, message]] of cases.entries()) {
          const out = join(dir, `out${i}`);
          // The first through main.ts in a process of its own, the others the same code in this process.
          const command = ['run', 'location', ...args, '--out', out, '--no-progress'];
          const r = await (i === 0 ? spawnCli(command) : runInProcess(command));
          expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
          expect(r.stderr).toMatch(message);
          expect(r.stderr).not.toContain('hunter2secret');
          expect(existsSync(out), `${args.join(' ')} made ${out}`).toBe(false);
        }
      },
      // On a loaded machine a process's start alone can take seconds.
      180_000,
    );

    itDb(dialect)('a password in env:VAR is used and never written to the folder', async () => {
      await loadRows(url, 'env_loc', locationRows(5));
      const u = new URL(url);
      // Trust authentication takes any password: what is checked is where it goes.
      u.password = 'S3cretPassw0rd';
      const out = tempDir('bre-e2e-db-env-');
      const r = await runInProcess(
        runArgs('location', 'env:BRE_TEST_SOURCE_URL', out, '--table', 'env_loc', '--rate', 'off'),
        { BRE_TEST_SOURCE_URL: u.href, ...(dialect === 'mysql' ? { MYSQL_PWD: undefined } : {}) },
      );
      if (dialect === 'mysql') {
        // MariaDB's root refuses a password it does not have: the refusal names the URL without it.
        expect(r.code).toBe(2);
        expect(r.stderr).toMatch(/refused the user or password/);
      } else {
        expect(r.code, r.stderr).toBe(0);
        expect(readOutput(out).results).toHaveLength(5);
        for (const f of filesUnder(out)) expect(searchableText(f.path).includes('S3cretPassw0rd'), f.path).toBe(false);
      }
      expect(r.stdout + r.stderr).not.toContain('S3cretPassw0rd');
    });

    describe('resuming', () => {
      const N = 240;
      let table = '';
      beforeAll(async () => {
        table = 'resume_loc';
        await loadRows(url, table, locationRows(N));
      });
      // Slow enough to be killed mid-run (60 rows/s), pages small enough that a run reads many.
      const slow = ['--rate', 'workflow=60/s', '--concurrency', '6', '--input-page-rows', '25'];

      itDb(dialect).each(dialect === 'postgres' ? [11, 23, 37] : [5])(
        'kill -9 at seeded moments (seed %i), then the same command: every key once, the resume starts after the frontier',
        async (seed) => {
          const random = prng(seed);
          const out = join(tempDir(`bre-e2e-db-kill-${seed}-`), 'out');
          const args = runArgs('location', url, out, '--table', table, ...slow);
          const results = join(out, 'results.ndjson');
          for (let k = 0; k < 2; k += 1) {
            // 70 to 140 more lines: over a second at 60/s, so the frontier has been written at least once.
            const target = Math.min(countLines(results) + 70 + Math.floor(random() * 70), N - 15);
            if (target <= countLines(results)) break;
            const run = startCli(args);
            await waitForLines(run, results, target);
            run.child.kill('SIGKILL');
            const res = await run.done;
            expect(res.signal, res.stderr).toBe('SIGKILL');
            // The frontier never covers a row the journal lacks.
            const f = frontierOf(out);
            expect(f, 'a frontier after over a second of work').toBeDefined();
            const done = new Set([...readOutput(out).results, ...readOutput(out).errors].map((l) => l.row));
            for (let r = 1; r <= f!.row; r += 1)
              expect(done.has(r), `row ${r} is at or before the frontier ${f!.row} but not in the journal`).toBe(true);
          }
          const before = frontierOf(out)!;
          expect(before.row).toBeGreaterThan(0);
          const last = await runInProcess(args);
          expect(last.code, last.stderr).toBe(0);
          expect(last.stderr).toMatch(new RegExp(`resuming after row ${before.row} \\(reference_id 'LOC-\\d{6}'\\)`));
          const o = readOutput(out);
          expect(
            keyProblems(
              o,
              locationRows(N).map((x) => String(x.reference_id)),
            ),
          ).toEqual([]);
          // Not read from the start: the database was asked for the rows after the frontier only.
          expect(o.summary.source).toMatchObject({
            started_after_row: before.row,
            rows_read: N - before.row,
            reconnects: 0,
          });
          expect(o.summary.source.rows_fetched).toBeLessThan(N - before.row + 20);
          expect(o.summary.rows.read).toBe(N - before.row);
          // Rows in flight at the kills (after the frontier, already in the journal) are skipped, not sent again.
          expect(o.summary.rows.resumed).toBeGreaterThanOrEqual(0);
          expect(o.summary.rows.processed_this_session + o.summary.rows.resumed).toBe(N - before.row);
        },
        120_000,
      );

      itDb(dialect)('--limit, then the same folder without it: carries on after the limit', async () => {
        const out = tempDir('bre-e2e-db-limit-');
        const a = await runInProcess(runArgs('location', url, out, '--table', table, '--rate', 'off', '--limit', '15'));
        expect(a.code, a.stderr).toBe(0);
        expect(readOutput(out).results.map((l) => l.key)).toEqual(locationRows(15).map((x) => x.reference_id));
        expect(frontierOf(out)).toMatchObject({ row: 15, key: 'LOC-000015' });
        const b = await runInProcess(runArgs('location', url, out, '--table', table, '--rate', 'off'));
        expect(b.code, b.stderr).toBe(0);
        const o = readOutput(out);
        expect(
          keyProblems(
            o,
            locationRows(N).map((x) => String(x.reference_id)),
          ),
        ).toEqual([]);
        expect(o.summary.source).toMatchObject({ started_after_row: 15, rows_read: N - 15 });
      });

      itDb(dialect)('connections killed mid-run: the run connects again and finishes', async () => {
        const own = await freshDatabase(dialect, 'bre_e2e_srck');
        await loadRows(own, table, locationRows(N));
        const out = tempDir('bre-e2e-db-killconn-');
        const name = new URL(own).pathname.slice(1);
        // Pages of 10 at 30 rows/s: the reader asks for its last page about 6 s in (the window of 16 rows and two
        // pages ahead before the 240 rows end), the kill comes after 10 lines; at 60 rows/s, pages of 25 and 40
        // lines, a kill delayed past 2 s under the suite's load found every page read (CI, 2026-11-29: no reconnect).
        const paced = ['--rate', 'workflow=30/s', '--concurrency', '6', '--input-page-rows', '10'];
        const run = startCli(runArgs('location', own, out, '--table', table, ...paced));
        await waitForLines(run, join(out, 'results.ndjson'), 10);
        await waitFor(async () => (await killConnections(dialect, name)) >= 1, 10_000, "the run's connection killed");
        // The kill came with pages still to read, else the case shows nothing of a reconnect.
        expect(countLines(join(out, 'results.ndjson'))).toBeLessThan(N - 16 - 20);
        const res = await run.done;
        expect(res.code, res.stderr).toBe(0);
        const o = readOutput(out);
        expect(
          keyProblems(
            o,
            locationRows(N).map((x) => String(x.reference_id)),
          ),
        ).toEqual([]);
        expect(o.summary.source.reconnects).toBeGreaterThanOrEqual(1);
        expect(res.stderr).toMatch(/the input database (went away|connection was lost)/);
      });

      describe('a source that stays away', () => {
        let proxy: TcpProxy;
        let proxied: string;
        beforeAll(async () => {
          const u = new URL(url);
          proxy = await startTcpProxy(u.hostname, Number(u.port));
          u.port = String(proxy.port);
          proxied = u.href;
        });
        afterAll(async () => proxy?.close());

        itDb(dialect)('stops with exit 3 (SOURCE_UNAVAILABLE), nothing lost; the same command resumes', async () => {
          const out = tempDir('bre-e2e-db-away-');
          const args = runArgs('location', proxied, out, '--table', table, ...slow, '--input-retry', '1s');
          const run = startCli(args);
          await waitForLines(run, join(out, 'results.ndjson'), 40);
          await proxy.down();
          const res = await run.done;
          expect(res.code, res.stderr).toBe(3);
          expect(res.stderr).toMatch(/the input database went away and did not come back within 1 s/);
          expect(res.stderr).toMatch(/re-run the same command to resume/);
          const stopped = readOutput(out);
          expect(stopped.summary.stopped.code).toBe('SOURCE_UNAVAILABLE');
          expect(stopped.results.length).toBeLessThan(N);
          await proxy.up();
          const again = await runInProcess(args);
          expect(again.code, again.stderr).toBe(0);
          expect(
            keyProblems(
              readOutput(out),
              locationRows(N).map((x) => String(x.reference_id)),
            ),
          ).toEqual([]);
        });
      });

      itDb(dialect)(
        'a resume with another table or a query instead is refused (OUTPUT_MISMATCH), saying what differs',
        async () => {
          await loadRows(url, 'other_loc', locationRows(3));
          const out = tempDir('bre-e2e-db-mismatch-');
          expect(
            (await runInProcess(runArgs('location', url, out, '--table', 'other_loc', '--rate', 'off'))).code,
          ).toBe(0);
          const r = await spawnCli(runArgs('location', url, out, '--table', table, '--rate', 'off'));
          expect(r.code).toBe(2);
          expect(r.stderr).toMatch(/refusing to resume into .*: it read table other_loc, now table resume_loc/);
          const q = await runInProcess(
            runArgs('location', url, out, '--query', 'SELECT * FROM other_loc', '--rate', 'off'),
          );
          expect(q.code).toBe(2);
          expect(q.stderr).toMatch(/it read table other_loc, now the query SELECT \* FROM other_loc/);
          const f = await runInProcess(runArgs('location', join(SAMPLES, 'location.csv'), out, '--rate', 'off'));
          expect(f.code).toBe(2);
          expect(f.stderr).toMatch(/it was made from the database .*, now from the file/);
        },
      );
    });

    itDb(dialect)(
      '--retry-errors reads from the start and runs the failed keys again; a table changed behind it stops the run (SOURCE_CHANGED, exit 2)',
      async () => {
        await loadRows(url, 'retry_loc', locationRows(20, [4, 12]));
        const dir = tempDir('bre-e2e-db-retry-');
        const out = join(dir, 'out');
        const first = await runInProcess(runArgs('location', url, out, '--table', 'retry_loc', '--rate', 'off'));
        expect(first.code, first.stderr).toBe(1);
        expect(
          readOutput(out)
            .errors.map((e) => e.key)
            .sort(),
        ).toEqual(['LOC-000004', 'LOC-000012']);
        await sql(
          url,
          `UPDATE retry_loc SET latitude = 19.5 WHERE reference_id = ${dialect === 'postgres' ? '$1' : '?'}`,
          ['LOC-000004'],
        );
        const retry = await runInProcess(
          runArgs('location', url, out, '--table', 'retry_loc', '--rate', 'off', '--retry-errors'),
        );
        expect(retry.code, retry.stderr).toBe(1);
        const o = readOutput(out);
        expect(invariantProblems(20, o)).toEqual([]);
        expect(o.results.find((l) => l.key === 'LOC-000004')?.row).toBe(4);
        expect(o.errors.map((e) => e.key)).toEqual(['LOC-000012']);
        expect(o.summary.source.started_after_row).toBe(0);

        // A row before the failed one goes: every later row number now names the next key.
        await sql(url, `DELETE FROM retry_loc WHERE reference_id = ${dialect === 'postgres' ? '$1' : '?'}`, [
          'LOC-000002',
        ]);
        const changed = await runInProcess(
          runArgs('location', url, out, '--table', 'retry_loc', '--rate', 'off', '--retry-errors'),
        );
        expect(changed.code, changed.stderr).toBe(2);
        expect(changed.stderr).toMatch(
          /row 2 of table retry_loc .* now has reference_id 'LOC-000003', but the output folder's line for row 2 has another key: the input changed behind the run/,
        );
        expect(changed.stderr).toMatch(/use a new --out/);
        // Nothing of the folder was lost: the rows done stay done, the failed one is still to retry.
        const after = readOutput(out);
        expect(after.results.map((l) => l.key).sort()).toEqual(o.results.map((l) => l.key).sort());
      },
    );

    itDb(dialect)('--shard K/N over a database input, then merge: every key once', async () => {
      const rows = locationRows(40);
      await loadRows(url, 'shard_loc', rows);
      const dir = tempDir('bre-e2e-db-shard-');
      for (const k of [1, 2]) {
        const r = await runInProcess(
          runArgs(
            'location',
            url,
            join(dir, `s${k}`),
            '--table',
            'shard_loc',
            '--rate',
            'off',
            '--shard',
            `${k}/2`,
            '--input-page-rows',
            '9',
          ),
        );
        expect(r.code, r.stderr).toBe(0);
        expect(readOutput(join(dir, `s${k}`)).summary.rows.out_of_shard).toBeGreaterThan(0);
        // Another shard's rows are settled for this one: its frontier reaches the last row.
        expect(frontierOf(join(dir, `s${k}`))).toMatchObject({ row: 40, key: 'LOC-000040' });
      }
      const m = await runInProcess(['merge', join(dir, 's1'), join(dir, 's2'), '--out', join(dir, 'merged')]);
      expect(m.code, m.stderr).toBe(0);
      // Each shard's keys and the merged folder's against the table read again.
      for (const f of ['s1', 's2', 'merged']) {
        const v = await runInProcess(['verify', join(dir, f)]);
        expect(v.code, `${f}: ${v.stdout}${v.stderr}`).toBe(0);
        expect(v.stdout).toMatch(f === 'merged' ? /40 rows read again/ : /\(shard \d\/2\): \d+ rows read again/);
      }
      expect(
        keyProblems(
          readOutput(join(dir, 'merged')),
          rows.map((x) => String(x.reference_id)),
        ),
      ).toEqual([]);
      // Shards of different tables are not merged.
      await loadRows(url, 'shard_other', rows);
      const other = await runInProcess(
        runArgs('location', url, join(dir, 'o2'), '--table', 'shard_other', '--rate', 'off', '--shard', '2/2'),
      );
      expect(other.code).toBe(0);
      const bad = await spawnCli(['merge', join(dir, 's1'), join(dir, 'o2'), '--out', join(dir, 'bad')]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/it read table shard_loc, now table shard_other/);
    });
  });
}
