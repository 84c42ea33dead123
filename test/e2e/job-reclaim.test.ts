/**
 * A job's worker that gets back a chunk it had lost (PostgreSQL and MariaDB). Its chunk 0 is taken over while
 * the chunk's rows are in its hands (by a made-up worker, `ghost`: the chunk's token one up, as a claim leaves
 * it); the rows it answered and had not committed are refused at commit (their token is the old one), and those
 * it had not sent yet are not sent once it hears of the loss (test/e2e/job-stalled.test.ts); the ghost's lease
 * lapses (a stall, a death) and the worker claims chunk 0 back. The refused rows must be sent again, not taken for
 * done because the worker's own folder has their lines (its folder holds answers, not commits). Each step is
 * waited for (the worker stopped holding no lock while chunk 0 is taken, the loss heard, the other chunks done)
 * and the ghost's lease is the test's to end: nothing rests on the clock. Checked: every key once in the sink, the
 * job done, and chunk 0's rows not committed before the ghost sent exactly once more.
 */
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import type { DialectName } from '../../src/db/index.js';
import { runArgs, startCli } from '../helpers/cli.js';
import { available, itDb } from '../helpers/db.js';
import { jobFlags, jobQuery, jobSetting, jobStatus, journal, sinkKeys, waitForFolder, why } from '../helpers/job.js';
import { stopHoldingNoLock } from '../helpers/job-stop.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Chunk 0 and one more (of 5 rows), which the worker does while the ghost holds chunk 0: what the case needs of
 * the other chunks is that they are done before the ghost's lease ends, not how many rows they hold.
 */
const N = 30;
const CHUNK_ROWS = 25;
/** Slow enough that the worker is stopped with chunk 0 still held (checked: else the case proves nothing). */
const RATE = 5;

const chunkRowsAnswered = (folder: string): Set<number> =>
  new Set(
    ['results.ndjson', 'errors.ndjson']
      .flatMap((f) => journal(join(folder, f)))
      .map((l) => l.row)
      .filter((r) => r <= CHUNK_ROWS),
  );

for (const dialect of ['postgres', 'mysql'] as DialectName[]) {
  // The two databases side by side: each case waits on its worker's pace, not on the CPU.
  describe
    .runIf(available[dialect] || process.env.CI === 'true')
    .concurrent(`run --job on ${dialect}: a chunk lost, then claimed back`, () => {
      const setting = jobSetting(dialect, 'reclaim', N);

      itDb(dialect)(
        'the rows refused at commit while it was taken are sent again: every key once, the job done',
        async () => {
          const { sb, source, sink } = setting;
          const job = 'reclaim';
          const table = 'loc_reclaim';
          const dir = tempDir('bre-e2e-job-reclaim-');
          const calls = () =>
            Object.values(sb.sandbox.stats().services.workflow.callers).reduce((n, c) => n + c.requests, 0);
          const a = startCli(
            [
              ...runArgs('location', source, join(dir, 'a'), '--table', 'apps'),
              ...jobFlags({ sink, table, job, rate: RATE, chunkRows: CHUNK_ROWS, lease: '20s' }),
            ],
            sb.env(),
            { timeoutMs: 180_000 },
          );
          const folder = await waitForFolder(join(dir, 'a'), 'the worker');
          const chunk0 = async () =>
            (
              await jobQuery<Record<string, unknown>>(
                sink,
                'SELECT state, holder, sent_to, rows_results + rows_errors AS n FROM bre_batch_chunks WHERE job = $1 AND chunk = 0',
                [job],
              )
            )[0];
          // Chunk 0 handed whole to the run (and that reported at a heartbeat) and a few of its rows answered.
          await waitFor(
            async () => Number((await chunk0()).sent_to) === CHUNK_ROWS && chunkRowsAnswered(folder).size >= 3,
            60_000,
            'chunk 0 handed out and rows of it answered',
          );
          // Another worker takes chunk 0 (its token one up) and holds it with a live lease, while this one is stopped.
          await stopHoldingNoLock(sink, a, [table, `${table}_errors`]);
          expect((await chunk0()).state, 'chunk 0 still held when the worker is stopped').toBe('held');
          await jobQuery(
            sink,
            `UPDATE bre_batch_chunks SET token = token + 1, holder = 'ghost', lease_until = '2999-01-01 00:00:00', takeovers = takeovers + 1
           WHERE job = $1 AND chunk = 0 AND state = 'held'`,
            [job],
          );
          a.child.kill('SIGCONT');
          expect((await chunk0()).holder).toBe('ghost');
          // The worker hears it lost the chunk: from then on it sends none of the chunk's rows it had in hand (the
          // answers of those already sent the fence refuses); it does the other chunks and waits for the ghost's.
          await waitFor(() => a.stderr().includes('lost chunk 0'), 60_000, 'the worker losing chunk 0');
          await waitFor(
            async () =>
              Number(
                (
                  await jobQuery<{ n: string }>(
                    sink,
                    "SELECT count(*) AS n FROM bre_batch_chunks WHERE job = $1 AND state = 'done'",
                    [job],
                  )
                )[0].n,
              ) ===
              Math.ceil(N / CHUNK_ROWS) - 1,
            60_000,
            'the other chunks done',
          );
          const committedBefore = Number((await chunk0()).n);
          const sent = calls();
          // The ghost's lease lapses: the worker claims chunk 0 back.
          await jobQuery(
            sink,
            `UPDATE bre_batch_chunks SET lease_until = '2000-01-01 00:00:00' WHERE job = $1 AND chunk = 0 AND holder = 'ghost'`,
            [job],
          );
          const r = await a.done;
          expect(r.code, why(r)).toBe(0);
          expect(r.stderr).toContain('took over chunk 0');
          expect((await sinkKeys(sink, table)).size, why(r)).toBe(N);
          const status = await jobStatus(sink, job);
          expect(status).toMatchObject({ state: 'done', results: N, errors: 0 });
          // Chunk 0's rows not committed when the ghost took it, each sent once more (and counted as sent again);
          // those it had committed, and every other chunk's, not at all.
          expect(committedBefore).toBeLessThan(CHUNK_ROWS);
          expect(calls() - sent).toBe(CHUNK_ROWS - committedBefore);
          expect(status.resent).toBe(CHUNK_ROWS - committedBefore);
        },
        120_000,
      );
    });
}
