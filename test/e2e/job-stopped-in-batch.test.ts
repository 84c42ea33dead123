/**
 * A job's worker stopped (SIGSTOP: a VM paused, a process starved) inside its sink batch's transaction, holding
 * the row lock of a chunk it holds (PostgreSQL and MariaDB). A claim passes over a locked chunk (SKIP LOCKED), so
 * the others could not take that chunk over until the stopped worker went on. The batch's transaction may idle no
 * longer than the worker's lease (src/job/fence.ts): the server ends the stopped worker's session, the lock goes
 * with it, and another worker takes the chunk over while the first is still stopped. Let go on, the first finds
 * its session gone, connects again and writes nothing of the chunk it lost. Every key once in the sink.
 */
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import type { DialectName } from '../../src/db/index.js';
import { runArgs, startCli, waitForLines } from '../helpers/cli.js';
import { available, itDb } from '../helpers/db.js';
import { jobFlags, jobQuery, jobSetting, sinkKeys, waitForFolder, why } from '../helpers/job.js';
import { stopHoldingChunkLock } from '../helpers/job-stop.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

/**
 * 15 s of work for each of the two workers: b is still committing batches while the test looks for its lock (a
 * batch a poll of the journal, 200 ms, at any rate: as many transactions to be stopped in at 10 rows a second as at
 * 20, for half the rows; 10 s, 200 rows, failed once in eight runs on MariaDB: a 60 s wait ran out, which one not
 * kept).
 */
const N = 300;
const CHUNK_ROWS = 25;
const RATE = 10;

for (const dialect of ['postgres', 'mysql'] as DialectName[]) {
  // The two databases side by side: each case waits on its workers' pace and a lease, not on the CPU.
  describe
    .runIf(available[dialect] || process.env.CI === 'true')
    .concurrent(`run --job on ${dialect}: a worker stopped inside its batch's transaction`, () => {
      const setting = jobSetting(dialect, 'stopped', N);

      itDb(dialect)(
        'the server ends its session after the lease: its locked chunk is taken over while it is stopped',
        async () => {
          const { sb, source, sink } = setting;
          const job = 'stopped';
          const table = 'loc_stopped';
          const dir = tempDir('bre-e2e-job-stopped-');
          const worker = (name: string, address: string) =>
            startCli(
              [
                ...runArgs('location', source, join(dir, name), '--table', 'apps'),
                // The lease of test/helpers/job.ts (2 s): the stopped worker's session ends 2 s into its stop.
                ...jobFlags({ sink, table, job, rate: RATE, chunkRows: CHUNK_ROWS, address }),
              ],
              sb.env(),
              { timeoutMs: 180_000 },
            );
          const a = worker('a', '127.0.0.2');
          const b = worker('b', '127.0.0.3');
          await waitForLines(b, join(await waitForFolder(join(dir, 'b'), 'b'), 'results.ndjson'), 15, 60_000);
          const locked = await stopHoldingChunkLock(sink, b, job);
          try {
            // While b is stopped: a takes a chunk b held locked (and may have finished it already: b cannot have).
            await waitFor(
              async () =>
                (
                  await jobQuery(
                    sink,
                    `SELECT chunk FROM bre_batch_chunks WHERE job = $1 AND takeovers > 0 AND (state = 'done' OR holder NOT LIKE $2) AND chunk IN (${locked.join(', ')})`,
                    [job, `%:${b.child.pid}:%`],
                  )
                ).length > 0,
              60_000,
              `a chunk b held locked (${locked.join(', ')}) taken over while b is stopped`,
            );
          } finally {
            b.child.kill('SIGCONT');
          }
          const [ra, rb] = await Promise.all([a.done, b.done]);
          expect(ra.code, why(ra)).toBe(0);
          expect(rb.code, why(rb)).toBe(0);
          expect(ra.stderr).toContain('took over chunk');
          expect(rb.stderr).toContain('lost chunk');
          expect((await sinkKeys(sink, table)).size).toBe(N);
        },
        180_000,
      );
    });
}
