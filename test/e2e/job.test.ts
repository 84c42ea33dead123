/**
 * Several workers, one job (`run --job NAME --sink postgres://...`, issue 30), each on its own loopback address
 * (127.0.0.2-5) against a sandbox whose sliding window is per caller address, each worker at that limit. Checked
 * from the sink's tables, the workers' own folders and the sandbox's counts per caller:
 * - kill -9 of one worker at a seeded moment: every key once in the sink, each row as one of the workers
 *   journalled it within its committed position; rows sent twice (the sandbox's admitted calls beyond one a key)
 *   at most what the dead worker had answered and not committed; a 4th worker started then claims at once;
 * - a worker stalled past its lease (SIGSTOP, SIGCONT) writes nothing of the chunk taken from it;
 * - SIGTERM hands the chunk back at its committed position and nothing is sent twice;
 * - a worker with another pipeline, input or rate is refused (exit 2, naming it); one on a finished job exits 0;
 * - `job status` while the job runs and after, `job report`.
 */
import { readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { CallerStats } from '../../src/sandbox/index.js';
import { runArgs, spawnCli, startCli, waitForLines, type CliResult, type RunningCli } from '../helpers/cli.js';
import { available, freshDatabase, itDb } from '../helpers/db.js';
import { loadRows } from '../helpers/db-load.js';
import { locationRows, prng } from '../helpers/sink-inputs.js';
import { journalExists, journalText } from '../helpers/output.js';
import { query } from '../helpers/sink.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const PER_SECOND = 15;
const N = 450;
const why = (r: CliResult) => `exit ${r.code} ${r.signal ?? ''}\n${r.stderr.slice(-3000)}`;

interface Line {
  readonly row: number;
  readonly key: string;
  readonly stages?: Record<string, Record<string, unknown>>;
}

/** The one folder a worker wrote under its --out (a job's worker makes a new one per session). */
function folderOf(base: string): string {
  const dirs = existsSync(base) ? readdirSync(base) : [];
  if (dirs.length !== 1) throw new Error(`expected one folder under ${base}, got ${dirs.join(', ')}`);
  return join(base, dirs[0]);
}

function journal(path: string, bytes = Infinity): Line[] {
  if (!journalExists(path)) return [];
  // A worker's finished folder has its journal gzip'ed: positions count its plain bytes.
  const text = Buffer.from(journalText(path))
    .subarray(0, Number.isFinite(bytes) ? bytes : undefined)
    .toString('utf8');
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Line);
}

const requestId = (stages: unknown): string =>
  String((stages as Record<string, Record<string, unknown>>).location.request_id);

describe.runIf(available.postgres || process.env.CI === 'true')(
  'run --job: elastic workers on one PostgreSQL sink',
  () => {
    let sb: TestSandbox;
    let source: string;
    let sink: string;
    beforeAll(async () => {
      sb = await startTestSandbox({ rate: { workflow: { limit: PER_SECOND, windowMs: 1000 } } });
      source = await freshDatabase('postgres', 'bre_e2e_job_src');
      sink = await freshDatabase('postgres', 'bre_e2e_job_dst');
      await loadRows(source, 'apps', locationRows(N));
      await loadRows(source, 'other', locationRows(30));
    });
    afterAll(async () => {
      await sb?.close();
    });

    const callers = (): Readonly<Record<string, CallerStats>> => sb.sandbox.stats().services.workflow.callers;
    const admitted = (c: Readonly<Record<string, CallerStats>>, address: string) => c[address]?.admitted ?? 0;

    function worker(job: string, table: string, out: string, address: string, rate = PER_SECOND): RunningCli {
      return startCli(
        runArgs(
          'location',
          source,
          out,
          '--table',
          'apps',
          '--sink',
          sink,
          '--sink-table',
          table,
          '--job',
          job,
          '--job-chunk-rows',
          '25',
          '--job-lease',
          '2s',
          '--job-heartbeat',
          '500ms',
          '--rate',
          `workflow=${rate}/s`,
          '--rate-slack',
          '2s',
          '--local-address',
          address,
        ),
        sb.env(),
        { timeoutMs: 180_000 },
      );
    }

    async function sinkKeys(table: string): Promise<Map<string, string>> {
      const rows = await query<{ reference_id: string; result: unknown }>(
        sink,
        `SELECT reference_id, result FROM "${table}"`,
      );
      const out = new Map<string, string>();
      for (const r of rows) {
        if (out.has(r.reference_id)) throw new Error(`${table} holds ${r.reference_id} twice`);
        out.set(r.reference_id, requestId(typeof r.result === 'string' ? JSON.parse(r.result) : r.result));
      }
      return out;
    }

    /** The results a folder committed: its journal's lines before the commit table's position. */
    async function committed(folder: string): Promise<Line[]> {
      const mark = await query<{ results_bytes: string }>(
        sink,
        'SELECT results_bytes FROM bre_batch_loads WHERE path = $1',
        [(await import('node:fs')).realpathSync(folder)],
      );
      return journal(join(folder, 'results.ndjson'), Number(mark[0]?.results_bytes ?? 0));
    }

    async function status(job: string): Promise<Record<string, unknown>> {
      const r = await spawnCli(['job', 'status', job, '--sink', sink, '--json']);
      expect(r.code, why(r)).toBe(0);
      return JSON.parse(r.stdout) as Record<string, unknown>;
    }

    itDb('postgres').each([7, 23])(
      'seed %i: 3 workers, one killed -9 mid-chunk, a 4th joins: every key once, as the workers wrote it; re-sent rows within what the dead one answered and had not committed',
      async (seed) => {
        const random = prng(seed);
        const job = `kill${seed}`;
        const table = `loc_kill${seed}`;
        const dir = tempDir(`bre-e2e-job-${seed}-`);
        const before = callers();
        const addresses = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];
        // Slower than the sandbox allows, so that the job is still running when the 4th worker has started.
        const rate = 4;
        const runs = addresses.map((a, i) => worker(job, table, join(dir, `w${i}`), a, rate));
        const victim = 1 + Math.floor(random() * 2);
        // The seeded moment: so many results in the victim's journal (its rows come a chunk at a time, so it is mid-chunk).
        const lines = 10 + Math.floor(random() * 60);
        await waitFor(() => existsSync(join(dir, `w${victim}`)), 60_000, "the victim's folder");
        await waitForLines(runs[victim], join(folderOf(join(dir, `w${victim}`)), 'results.ndjson'), lines, 60_000);
        runs[victim].child.kill('SIGKILL');
        await runs[victim].done;
        // A 4th worker, started now, claims a chunk at once (no shard to wait for).
        const fourth = worker(job, table, join(dir, 'w3'), '127.0.0.5', rate);

        // Status while it runs: chunks not all done, the dead worker's still held until its lease lapses.
        const during = await status(job);
        expect(during.state).toBe('running');
        expect((during.chunks as { done: number; total: number }).done).toBeLessThan(
          (during.chunks as { total: number }).total,
        );
        expect((during.workers as unknown[]).length).toBeGreaterThanOrEqual(3);

        await waitFor(
          async () => {
            if (fourth.child.exitCode !== null)
              throw new Error(`the 4th worker exited before it held a chunk:\n${fourth.stderr()}`);
            return (
              (
                await query(sink, 'SELECT 1 FROM bre_batch_chunks WHERE job = $1 AND holder LIKE $2', [
                  job,
                  `%:${fourth.child.pid}:%`,
                ])
              ).length > 0
            );
          },
          60_000,
          'the 4th worker holding a chunk',
        );
        const results = await Promise.all([...runs.filter((_, i) => i !== victim), fourth].map((r) => r.done));
        for (const r of results) expect(r.code, why(r)).toBe(0);
        expect(
          results.some((r) => r.stderr.includes('took over chunk')),
          "a worker took over the dead one's chunk",
        ).toBe(true);

        // Every key once, each as some worker journalled it within what it committed.
        const inSink = await sinkKeys(table);
        expect(inSink.size).toBe(N);
        expect([...inSink.keys()].sort()).toEqual(
          locationRows(N)
            .map((r) => String(r.reference_id))
            .sort(),
        );
        const written = new Map<string, Set<string>>();
        const folders = [0, 1, 2, 3].map((i) => folderOf(join(dir, `w${i}`)));
        for (const f of folders) {
          for (const l of await committed(f)) {
            if (!written.has(l.key)) written.set(l.key, new Set());
            written.get(l.key)!.add(requestId(l.stages));
          }
        }
        expect([...written.keys()].sort()).toEqual([...inSink.keys()].sort());
        for (const [key, id] of inSink)
          expect(written.get(key)?.has(id), `${key}'s row in the sink is one a worker committed`).toBe(true);
        expect(journal(join(folders[3], 'results.ndjson')).length, 'the 4th worker did rows').toBeGreaterThan(0);

        // Sent twice: calls admitted beyond one a key; at most what the dead worker answered and did not commit.
        const after = callers();
        const calls = [...addresses, '127.0.0.5'].reduce((n, a) => n + admitted(after, a) - admitted(before, a), 0);
        const victimAnswered = admitted(after, addresses[victim]) - admitted(before, addresses[victim]);
        const victimCommitted = (await committed(folders[victim])).length;
        expect(calls - N).toBeGreaterThanOrEqual(0);
        expect(
          calls - N,
          `${calls} calls for ${N} keys; the dead worker answered ${victimAnswered}, committed ${victimCommitted}`,
        ).toBeLessThanOrEqual(victimAnswered - victimCommitted);

        const done = await status(job);
        expect(done.state).toBe('done');
        expect(done.results).toBe(N);
        expect(done.chunks).toMatchObject({ done: N / 25, held: 0, waiting: 0 });
        expect(done.takeovers as number).toBeGreaterThan(0);
        expect(typeof done.resent).toBe('number');
        const report = await spawnCli(['job', 'report', job, '--sink', sink]);
        expect(report.code, why(report)).toBe(0);
        expect(report.stdout).toContain(`${N} of ${N} done`);
        // A worker started on the finished job: exit 0 at once, saying so.
        const late = await spawnCli(
          runArgs(
            'location',
            source,
            join(dir, 'late'),
            '--table',
            'apps',
            '--sink',
            sink,
            '--sink-table',
            table,
            '--job',
            job,
            '--job-chunk-rows',
            '25',
            '--job-lease',
            '2s',
            '--job-heartbeat',
            '500ms',
            '--rate',
            `workflow=${rate}/s`,
            '--rate-slack',
            '2s',
          ),
          sb.env(),
        );
        expect(late.code, why(late)).toBe(0);
        expect(late.stderr).toContain(`the job '${job}' is done`);
        expect(existsSync(join(dir, 'late'))).toBe(false);
      },
      240_000,
    );

    itDb('postgres')(
      'a worker stalled past its lease (SIGSTOP, SIGCONT) writes nothing of the chunk taken from it',
      async () => {
        const job = 'stall';
        const table = 'loc_stall';
        const dir = tempDir('bre-e2e-job-stall-');
        const a = worker(job, table, join(dir, 'a'), '127.0.0.2');
        const b = worker(job, table, join(dir, 'b'), '127.0.0.3');
        await waitFor(() => existsSync(join(dir, 'b')), 60_000, 'the folder of b');
        await waitForLines(b, join(folderOf(join(dir, 'b')), 'results.ndjson'), 15, 60_000);
        b.child.kill('SIGSTOP');
        // Its chunks lapse and are taken over by a.
        await waitFor(
          async () =>
            Number(
              (
                await query<{ n: string }>(
                  sink,
                  'SELECT coalesce(sum(takeovers), 0) AS n FROM bre_batch_chunks WHERE job = $1',
                  [job],
                )
              )[0].n,
            ) > 0,
          60_000,
          'a takeover',
        );
        await waitFor(
          async () =>
            Number(
              (
                await query<{ n: string }>(
                  sink,
                  'SELECT count(*) AS n FROM bre_batch_chunks WHERE job = $1 AND takeovers > 0 AND position > 0',
                  [job],
                )
              )[0].n,
            ) > 0,
          60_000,
          'rows committed in a taken chunk',
        );
        b.child.kill('SIGCONT');
        const [ra, rb] = await Promise.all([a.done, b.done]);
        expect(ra.code, why(ra)).toBe(0);
        expect(rb.code, why(rb)).toBe(0);
        expect(rb.stderr).toContain('lost chunk');
        const inSink = await sinkKeys(table);
        expect(inSink.size).toBe(N);
        // Keys both journalled: b's answer came late (its chunk had been taken), so the sink holds a's.
        const byA = new Map(
          journal(join(folderOf(join(dir, 'a')), 'results.ndjson')).map((l) => [l.key, requestId(l.stages)]),
        );
        const both = journal(join(folderOf(join(dir, 'b')), 'results.ndjson')).filter((l) => byA.has(l.key));
        expect(both.length, 'rows b answered around its stall that a sent again').toBeGreaterThan(0);
        for (const l of both)
          expect(inSink.get(l.key), `${l.key}: the sink holds a's answer, not the stalled b's`).toBe(byA.get(l.key));
      },
      240_000,
    );

    itDb('postgres')(
      'SIGTERM hands the chunk back at its committed position: another worker finishes it, nothing is sent twice',
      async () => {
        const job = 'term';
        const table = 'loc_term';
        const dir = tempDir('bre-e2e-job-term-');
        const before = callers();
        const a = worker(job, table, join(dir, 'a'), '127.0.0.2');
        await waitFor(() => existsSync(join(dir, 'a')), 60_000, 'the folder of a');
        await waitForLines(a, join(folderOf(join(dir, 'a')), 'results.ndjson'), 40, 60_000);
        a.child.kill('SIGTERM');
        const ra = await a.done;
        expect(ra.code, why(ra)).toBe(3);
        expect(ra.stderr).toContain('handed back');
        const held = await query(sink, "SELECT chunk FROM bre_batch_chunks WHERE job = $1 AND state = 'held'", [job]);
        expect(held).toEqual([]);
        const resumedAt = await query<{ n: string }>(
          sink,
          "SELECT count(*) AS n FROM bre_batch_chunks WHERE job = $1 AND state = 'waiting' AND position > 0",
          [job],
        );
        const b = await spawnCli(
          runArgs(
            'location',
            source,
            join(dir, 'b'),
            '--table',
            'apps',
            '--sink',
            sink,
            '--sink-table',
            table,
            '--job',
            job,
            '--job-chunk-rows',
            '25',
            '--job-lease',
            '2s',
            '--job-heartbeat',
            '500ms',
            '--rate',
            `workflow=${PER_SECOND}/s`,
            '--rate-slack',
            '2s',
            '--local-address',
            '127.0.0.3',
          ),
          sb.env(),
          { timeoutMs: 180_000 },
        );
        expect(b.code, why(b)).toBe(0);
        expect((await sinkKeys(table)).size).toBe(N);
        const after = callers();
        const calls = ['127.0.0.2', '127.0.0.3'].reduce((n, x) => n + admitted(after, x) - admitted(before, x), 0);
        expect(
          calls,
          `a chunk handed back part-way (${resumedAt[0].n} of them) is resumed after its committed rows`,
        ).toBe(N);
      },
      240_000,
    );

    itDb('postgres')(
      'a worker with another pipeline, input or rate than the job is refused (exit 2, saying which)',
      async () => {
        const job = 'mismatch';
        const dir = tempDir('bre-e2e-job-mm-');
        const common = [
          '--sink',
          sink,
          '--sink-table',
          'loc_mm',
          '--job',
          job,
          '--job-chunk-rows',
          '25',
          '--rate-slack',
          '2s',
        ];
        const first = await spawnCli(
          runArgs('location', source, join(dir, 'a'), '--table', 'other', ...common, '--rate', 'workflow=50/s'),
          sb.env(),
        );
        expect(first.code, why(first)).toBe(0);
        const cases: [string, string[], string][] = [
          [
            'pipeline',
            runArgs('repeat', source, join(dir, 'p'), '--table', 'other', ...common, '--rate', 'workflow=50/s'),
            'the pipeline',
          ],
          [
            'input',
            runArgs('location', source, join(dir, 'i'), '--table', 'apps', ...common, '--rate', 'workflow=50/s'),
            'the input',
          ],
          [
            'rate',
            runArgs('location', source, join(dir, 'r'), '--table', 'other', ...common, '--rate', 'workflow=40/s'),
            'the rate',
          ],
        ];
        for (const [what, args, says] of cases) {
          const r = await spawnCli(args, sb.env());
          expect(r.code, `${what}: ${why(r)}`).toBe(2);
          expect(r.stderr, what).toContain(says);
          expect(existsSync(join(dir, what[0])), `${what}: no folder made`).toBe(false);
        }
      },
      120_000,
    );
  },
);
