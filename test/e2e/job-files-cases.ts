/**
 * A job on a file input on a folder every worker sees (`run --job NAME --input shared/file.csv`), the same cases
 * on PostgreSQL and on MariaDB from one table (`JOB_FILE_CASES`; ./job-files.test.ts and
 * ./job-files-mariadb.test.ts run it, one file a database so that the two run side by side): the first worker
 * cuts the file into ranges of records (src/input/ranges.ts), each worker reads only the ranges it claims.
 * Against the sandbox's per-caller windows, each worker on its own loopback address:
 * - a CSV whose quoted fields hold newlines (CR LF among them) where a cut every so many lines would fall,
 *   broken rows and rows that fail validation; 3 workers, one killed -9 mid-chunk at a seeded moment, a 4th
 *   started then: every key once in the sink as a worker committed it, rows sent twice at most what the dead
 *   one answered and had not committed, every row in error once with the file's own line number;
 * - the chunks start where records start, not where lines do;
 * - a worker with another file (or the file changed after the split) is refused, naming the input; a gzip'ed
 *   file is refused, saying what to do;
 * - NDJSON (ranges of lines) and Parquet (ranges of rows), two workers each.
 */
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { DialectName } from '../../src/db/index.js';
import type { CallerStats } from '@bre-batch/sandbox';
import { runArgs, spawnCli, startCli, waitForLines, type RunningCli } from '../helpers/cli.js';
import { available, freshDatabase, itDb } from '../helpers/db.js';
import {
  expectEachKeyOnceAsCommitted,
  folderOf,
  jobFlags,
  jobQuery,
  jobStatus,
  journal,
  waitForChunkHeld,
  waitForFolder,
  why,
} from '../helpers/job.js';
import { locationParquet } from '../helpers/location-parquet.js';
import { locationKey } from '../helpers/output.js';
import { locationRows, prng } from '../helpers/sink-inputs.js';
import { quote } from '../helpers/sink.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

/** The sandbox's limit per caller address, and the NDJSON and Parquet workers' rate: no assertion depends on it. */
const PER_SECOND = 40;
const N = 300;
/** The lease of a case that takes no chunk over: no heartbeat late on a busy machine lapses it. */
const NO_TAKEOVER_LEASE = '20s';
/** Rows whose latitude is out of range: row errors, never called. */
const INVALID = [17, 90, 151, 260];
/** A record with two cells of six, after this row: a broken row (MALFORMED_ROW), its key still named. */
const SHORT_AFTER = 120;

interface SharedCsv {
  readonly path: string;
  /** The key of every row, in the file's order. */
  readonly keys: string[];
  /** Key -> the line its record starts on. */
  readonly lines: Map<string, number>;
}

/**
 * The location rows as a CSV with a sixth column, `note`: every third row's is quoted and spans lines (CR LF
 * or LF, one of them holding a whole record's text), so a cut every so many lines would land inside one.
 */
function sharedCsv(dir: string): SharedCsv {
  const cols = ['reference_id', 'user_id', 'lead_id', 'latitude', 'longitude'] as const;
  const out = [`${cols.join(',')},note`];
  const keys: string[] = [];
  const lines = new Map<string, number>();
  let line = 2;
  const add = (key: string, text: string) => {
    keys.push(key);
    lines.set(key, line);
    out.push(text);
    line += text.split('\n').length;
  };
  locationRows(N, INVALID).forEach((r, i) => {
    const note =
      i % 3 === 0
        ? i % 2 === 0
          ? `"first line\r\nLOC-999999,u,l,1,2,""not a row""\r\nthird"`
          : `"two\nlines, a comma"`
        : 'plain';
    add(String(r.reference_id), `${cols.map((c) => String(r[c])).join(',')},${note}`);
    if (i + 1 === SHORT_AFTER) add('LOC-SHORT', 'LOC-SHORT,user-short');
  });
  const path = join(dir, 'applicants.csv');
  writeFileSync(path, `${out.join('\n')}\n`);
  return { path, keys, lines };
}

/**
 * Which database runs which case: the kill on both (each its own seed), the refusals and NDJSON on both, Parquet
 * (a matter of the reader's ranges, not of the database) on PostgreSQL; shared out to keep the suite's time.
 */
const JOB_FILE_CASES: Record<
  DialectName,
  { readonly kill: readonly number[]; readonly mismatch: boolean; readonly parquet: boolean; readonly ndjson: boolean }
> = {
  postgres: { kill: [11], mismatch: true, parquet: true, ndjson: true },
  mysql: { kill: [19], mismatch: true, parquet: false, ndjson: true },
};

const LABEL: Record<DialectName, string> = { postgres: 'PostgreSQL', mysql: 'MariaDB' };

/**
 * A case on each of its variants; not there at all where the table gives this database none. Every case runs
 * beside the others (they wait on their workers' pace, not on the CPU), each with its own job, tables and caller
 * addresses: the kill case counts the calls of its own four.
 */
function caseOf<T>(dialect: DialectName, variants: readonly T[]) {
  return (name: string, test: (variant: T) => Promise<void>, timeoutMs: number): void => {
    if (variants.length > 0)
      itDb(dialect).concurrent.each(variants as T[])(name, test as (...v: T[]) => Promise<void>, timeoutMs);
  };
}

export function jobFileCases(dialect: DialectName): void {
  describe.runIf(available[dialect] || process.env.CI === 'true')(
    `run --job on a file on a shared folder, a ${LABEL[dialect]} sink: chunks at record boundaries`,
    () => {
      const cases = JOB_FILE_CASES[dialect];
      const q = (id: string) => quote(sink, id);
      let sb: TestSandbox;
      let sink: string;
      let shared: string;
      let csv: SharedCsv;
      beforeAll(async () => {
        sb = await startTestSandbox({ rate: { workflow: { limit: PER_SECOND, windowMs: 1000 } } });
        sink = await freshDatabase(dialect, 'bre_e2e_jobfile_dst');
        shared = tempDir('bre-e2e-jobfile-shared-');
        csv = sharedCsv(shared);
      });
      afterAll(async () => {
        await sb?.close();
      });

      const callers = (): Readonly<Record<string, CallerStats>> => sb.sandbox.stats().services.workflow.callers;
      const admitted = (c: Readonly<Record<string, CallerStats>>, address: string) => c[address]?.admitted ?? 0;

      function worker(
        input: string,
        job: string,
        table: string,
        out: string,
        address: string,
        rate: number,
        lease?: string,
      ): RunningCli {
        return startCli(
          runArgs('location', input, out, ...jobFlags({ sink, table, job, rate, address, lease })),
          sb.env(),
          {
            timeoutMs: 180_000,
          },
        );
      }

      caseOf(dialect, cases.kill)(
        "seed %i: 3 workers, one killed -9 mid-chunk, a 4th joins: every key once, errors on the file's lines, re-sent rows within what the dead one answered and had not committed",
        async (seed) => {
          const random = prng(seed);
          const job = `file${seed}`;
          const table = `loc_file${seed}`;
          const dir = tempDir(`bre-e2e-jobfile-${seed}-`);
          const before = callers();
          const addresses = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];
          // Slower than the sandbox allows, so that the job still runs when the 4th worker starts: with the victim
          // killed by its 45th line, chunks of 25 rows are still waiting, 3 s each for one of the 2 living workers.
          const rate = 8;
          const runs = addresses.map((a, i) => worker(csv.path, job, table, join(dir, `w${i}`), a, rate));
          const victim = 1 + Math.floor(random() * 2);
          const lines = 5 + Math.floor(random() * 40);
          const victimFolder = await waitForFolder(join(dir, `w${victim}`), 'the victim');
          await waitForLines(runs[victim], join(victimFolder, 'results.ndjson'), lines, 60_000);
          runs[victim].child.kill('SIGKILL');
          await runs[victim].done;
          const fourth = worker(csv.path, job, table, join(dir, 'w3'), '127.0.0.5', rate);
          await waitForChunkHeld(sink, job, fourth, 'the 4th worker');
          const results = await Promise.all([...runs.filter((_, i) => i !== victim), fourth].map((r) => r.done));
          // Exit 1: finished, some of its rows in errors (the job's broken rows fall to whoever reads them).
          for (const r of results) expect([0, 1], why(r)).toContain(r.code);
          expect(results.some((r) => r.stderr.includes('took over chunk'))).toBe(true);

          const bad = new Set([...INVALID.map((i) => locationKey(i)), 'LOC-SHORT']);
          const good = csv.keys.filter((k) => !bad.has(k));
          const folders = [0, 1, 2, 3].map((i) => folderOf(join(dir, `w${i}`)));
          const committed = await expectEachKeyOnceAsCommitted(sink, table, folders, good);
          expect(journal(join(folders[3], 'results.ndjson')).length, 'the 4th worker did rows').toBeGreaterThan(0);

          // Each row in error once, on the line of the file its record starts on, whichever worker read it.
          const errors = await jobQuery<{ reference_id: string; row: string; line: string; code: string }>(
            sink,
            `SELECT reference_id, ${q('row')} AS ${q('row')}, ${q('line')} AS ${q('line')}, code FROM ${q(`${table}_errors`)} ORDER BY ${q('row')}`,
          );
          expect(errors.map((e) => e.reference_id).sort()).toEqual([...bad].sort());
          for (const e of errors) {
            expect(Number(e.line), `${e.reference_id}'s line`).toBe(csv.lines.get(e.reference_id));
            expect(Number(e.row), `${e.reference_id}'s row`).toBe(csv.keys.indexOf(e.reference_id) + 1);
          }
          expect(errors.find((e) => e.reference_id === 'LOC-SHORT')?.code).toBe('MALFORMED_ROW');

          // Sent twice: calls beyond one a good key; at most what the dead worker answered and did not commit.
          const after = callers();
          const calls = [...addresses, '127.0.0.5'].reduce((n, a) => n + admitted(after, a) - admitted(before, a), 0);
          const victimAnswered = admitted(after, addresses[victim]) - admitted(before, addresses[victim]);
          expect(calls - good.length).toBeGreaterThanOrEqual(0);
          expect(calls - good.length, `${calls} calls for ${good.length} keys`).toBeLessThanOrEqual(
            victimAnswered - committed[victim].length,
          );

          // The chunks start where records start: after a newline, at a key; lines and rows part ways (a cut
          // every so many lines would have fallen inside a quoted field).
          const bytes = readFileSync(csv.path);
          const chunks = await jobQuery<{
            first_row: string;
            first_line: string;
            byte_start: string;
            byte_end: string;
          }>(
            sink,
            'SELECT first_row, first_line, byte_start, byte_end FROM bre_batch_chunks WHERE job = $1 ORDER BY chunk',
            [job],
          );
          expect(chunks.length).toBe(Math.ceil(csv.keys.length / 25));
          for (const c of chunks) {
            const at = Number(c.byte_start);
            expect(bytes[at - 1], `the byte before chunk at ${at}`).toBe(0x0a);
            expect(bytes.subarray(at, at + 4).toString(), `chunk at ${at}`).toBe('LOC-');
            expect(Number(c.first_line)).toBe(csv.lines.get(csv.keys[Number(c.first_row) - 1]));
          }
          expect(Number(chunks.at(-1)!.byte_end)).toBe(bytes.length);
          expect(chunks.some((c) => Number(c.first_line) > Number(c.first_row) + 1)).toBe(true);
          // Cut every 25 lines instead (a record a line), some chunk would start inside a quoted note.
          const starts = new Set(csv.lines.values());
          expect(chunks.some((c) => !starts.has(Number(c.first_row) + 1))).toBe(true);

          const done = await jobStatus(sink, job);
          expect(done.state).toBe('done');
          expect(done.results).toBe(good.length);
        },
        240_000,
      );

      caseOf(dialect, cases.mismatch ? [null] : [])(
        "a worker with another file, or the file changed after the split, is refused naming the input; a gzip'ed file is refused saying what to do",
        async () => {
          const dir = tempDir('bre-e2e-jobfile-mm-');
          const input = join(dir, 'first.csv');
          copyFileSync(csv.path, input);
          const job = 'filemm';
          const args = (file: string, out: string) =>
            runArgs(
              'location',
              file,
              join(dir, out),
              ...jobFlags({ sink, table: 'loc_filemm', job, rate: 50, lease: NO_TAKEOVER_LEASE }),
            );
          const first = startCli(args(input, 'a'), sb.env(), { timeoutMs: 120_000 });
          // Another file while the job runs: the same rows but one byte.
          // (The job's tables appear with the first worker: until then, not split.)
          await waitFor(
            async () =>
              (
                await jobQuery(sink, "SELECT 1 FROM bre_batch_jobs WHERE job = $1 AND state <> 'splitting'", [
                  job,
                ]).catch(() => [])
              ).length > 0,
            60_000,
            'the job split',
          );
          const other = join(dir, 'other.csv');
          writeFileSync(other, readFileSync(input, 'utf8').replace('LOC-000002', 'LOC-000003'));
          const r = await spawnCli(args(other, 'b'), sb.env());
          expect(r.code, why(r)).toBe(2);
          expect(r.stderr).toContain('the input: the job reads file of');
          expect(existsSync(join(dir, 'b')), 'no folder made').toBe(false);
          // Its worker is not needed further: SIGTERM hands its chunk back (exit 3, resumable).
          first.child.kill('SIGTERM');
          const a = await first.done;
          expect([0, 1, 3], why(a)).toContain(a.code);

          // The job's own file, changed after it was split (a row added): refused the same way, whatever the job's state.
          writeFileSync(input, `${readFileSync(input, 'utf8')}LOC-900001,u,l,12.5,77.5,plain\n`);
          const changed = await spawnCli(args(input, 'c'), sb.env());
          expect(changed.code, why(changed)).toBe(2);
          expect(changed.stderr).toContain('the input: the job reads file of');

          const gz = join(dir, 'first.csv.gz');
          writeFileSync(gz, gzipSync(readFileSync(input)));
          const zipped = await spawnCli(
            runArgs(
              'location',
              gz,
              join(dir, 'z'),
              ...jobFlags({ sink, table: 'loc_filegz', job: 'filegz', rate: 50 }),
            ),
            sb.env(),
          );
          expect(zipped.code, why(zipped)).toBe(2);
          expect(zipped.stderr).toContain('gunzip -k');
          expect(zipped.stderr).toContain('--shard K/N');
          expect(existsSync(join(dir, 'z'))).toBe(false);
        },
        180_000,
      );

      caseOf(dialect, cases.parquet ? [null] : [])(
        'Parquet: chunks are ranges of rows; two workers, every key once',
        async () => {
          const dir = tempDir('bre-e2e-jobfile-pq-');
          const path = locationParquet(shared, 120, 'applicants.parquet');
          const job = 'parquet';
          const table = 'loc_filepq';
          const runs = ['127.0.0.6', '127.0.0.7'].map((a, i) =>
            worker(path, job, table, join(dir, `w${i}`), a, PER_SECOND, NO_TAKEOVER_LEASE),
          );
          const done = await Promise.all(runs.map((r) => r.done));
          for (const r of done) expect(r.code, why(r)).toBe(0);
          // A worker that starts on a job already done makes no folder.
          const folders = [0, 1]
            .map((i) => join(dir, `w${i}`))
            .filter((d) => existsSync(d))
            .map(folderOf);
          await expectEachKeyOnceAsCommitted(
            sink,
            table,
            folders,
            Array.from({ length: 120 }, (_, i) => locationKey(i + 1)),
          );
          const chunks = await jobQuery<{ first_row: string; rows: number }>(
            sink,
            `SELECT first_row, ${q('rows')} AS ${q('rows')} FROM bre_batch_chunks WHERE job = $1 ORDER BY chunk`,
            [job],
          );
          expect(chunks.map((c) => [Number(c.first_row), Number(c.rows)])).toEqual(
            [0, 1, 2, 3, 4].map((i) => [1 + i * 25, i < 4 ? 25 : 20]),
          );
        },
        180_000,
      );

      caseOf(dialect, cases.ndjson ? [null] : [])(
        "NDJSON: chunks are ranges of lines; two workers, every key once, broken lines in errors on the file's lines",
        async () => {
          const dir = tempDir('bre-e2e-jobfile-nd-');
          const rows = locationRows(90);
          // Blank lines and a CR LF among the records; a line that is not JSON after the 40th, on line 43.
          const lines: string[] = [];
          rows.forEach((r, i) => {
            lines.push(`${JSON.stringify(r)}${i % 7 === 0 ? '\r' : ''}`);
            if (i % 10 === 4) lines.push('');
            if (i === 39) lines.push('{"reference_id": "LOC-BROKEN",');
          });
          const path = join(shared, 'applicants.ndjson');
          writeFileSync(path, `${lines.join('\n')}\n`);
          const brokenLine = lines.indexOf('{"reference_id": "LOC-BROKEN",') + 1;
          const job = 'ndjson';
          const table = 'loc_filend';
          const runs = ['127.0.0.9', '127.0.0.10'].map((a, i) =>
            worker(path, job, table, join(dir, `w${i}`), a, PER_SECOND, NO_TAKEOVER_LEASE),
          );
          const done = await Promise.all(runs.map((r) => r.done));
          for (const r of done) expect([0, 1], why(r)).toContain(r.code);
          const folders = [0, 1]
            .map((i) => join(dir, `w${i}`))
            .filter((d) => existsSync(d))
            .map(folderOf);
          await expectEachKeyOnceAsCommitted(
            sink,
            table,
            folders,
            rows.map((r) => String(r.reference_id)),
          );
          const errors = await jobQuery<{ row: string; line: string; code: string }>(
            sink,
            `SELECT ${q('row')} AS ${q('row')}, ${q('line')} AS ${q('line')}, code FROM ${q(`${table}_errors`)}`,
          );
          expect(errors.map((e) => [Number(e.row), Number(e.line), e.code])).toEqual([
            [41, brokenLine, 'MALFORMED_ROW'],
          ]);
          expect(
            Number(
              (
                await jobQuery<{ n: string }>(sink, 'SELECT count(*) AS n FROM bre_batch_chunks WHERE job = $1', [job])
              )[0].n,
            ),
          ).toBe(4);
        },
        180_000,
      );
    },
  );
}
