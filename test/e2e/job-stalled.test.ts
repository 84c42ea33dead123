/**
 * A job's worker stalled past its lease with rows queued (PostgreSQL and MariaDB): b is stopped (SIGSTOP) while
 * some of its chunk's rows are in flight (their answers held back by the test's forwarder, ../helpers/key-calls.ts)
 * and the rest of its window waits in its limiter. Its lease lapses, a takes its chunks over and finishes them; then
 * b goes on (SIGCONT), its answers in flight arrive. Checked from the calls each key reached the sandbox with, per
 * worker: b sends nothing of the chunks taken from it after it goes on (it had them queued: they are a's now); the
 * keys both sent are only those b had sent before its stall (sent again, counted by `job status`); the answers b
 * got for them are refused at commit (the sink holds a's); every key once in the sink, the job done. Each step is
 * waited for; nothing rests on the clock but the lease lapsing while b is stopped, which the test waits out.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { loadRunSummary } from '@bre-batch/formats';
import type { DialectName } from '../../src/db/index.js';
import { runArgs, startCli, waitForLines } from '../helpers/cli.js';
import { available, itDb } from '../helpers/db.js';
import {
  folderOf,
  jobFlags,
  jobQuery,
  jobSetting,
  jobStatus,
  journal,
  requestId,
  sinkKeys,
  waitForFolder,
  why,
} from '../helpers/job.js';
import { stopHoldingNoLock } from '../helpers/job-stop.js';
import { startKeyCalls, type KeyCalls } from '../helpers/key-calls.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const N = 100;
const CHUNK_ROWS = 25;
/** Every worker's pace (the job's): slow, so that most of b's window still waits in its limiter when it is stopped. */
const RATE = 10;
const A = '127.0.0.2';
const B = '127.0.0.3';

for (const dialect of ['postgres', 'mysql'] as DialectName[]) {
  // The two databases side by side: each case waits on its workers' pace and a lease, not on the CPU; each has a
  // sandbox and a forwarder of its own, so the calls it counts are its own.
  describe
    .runIf(available[dialect] || process.env.CI === 'true')
    .concurrent(`run --job on ${dialect}: a worker stalled past its lease with rows queued`, () => {
      const setting = jobSetting(dialect, 'stalled', N);
      let kc: KeyCalls;
      beforeAll(async () => {
        kc = await startKeyCalls(setting.sb.sandbox.url);
      });
      afterAll(async () => {
        await kc?.close();
      });

      itDb(dialect)(
        'sends nothing of the chunks taken from it once it goes on: every key once in the sink, the job done',
        async () => {
          const { sb, source, sink } = setting;
          const job = 'stalled';
          const table = 'loc_stalled';
          const dir = tempDir('bre-e2e-job-stalled-');
          const worker = (name: string, address: string) =>
            startCli(
              [
                ...runArgs('location', source, join(dir, name), '--table', 'apps'),
                ...jobFlags({ sink, table, job, rate: RATE, chunkRows: CHUNK_ROWS, address }),
                // Its answers held back while it is stopped must not be cut by its own time-out.
                '--timeout',
                'workflow=120s',
              ],
              sb.env(kc.url),
              { timeoutMs: 180_000 },
            );
          const b = worker('b', B);
          await waitForLines(b, join(await waitForFolder(join(dir, 'b'), 'b'), 'results.ndjson'), 3, 60_000);
          // From now b's calls are held unanswered: rows in flight when it stops, the rest of its window queued.
          kc.hold(B);
          await waitFor(() => kc.held().length > 0, 60_000, 'a call of b held');
          let a: ReturnType<typeof worker> | undefined;
          let mark: number;
          let taken: number[] = [];
          try {
            // Stopped once its heartbeat has reported how far it handed its chunks to its run: the worker that takes
            // them over counts the rows below that mark as sent again (a mark a heartbeat had not reported yet would
            // leave them uncounted, a stall within a heartbeat of a claim).
            await waitFor(
              async () => {
                await stopHoldingNoLock(sink, b, [table, `${table}_errors`]);
                const held = await jobQuery<{ chunk: number | string; sent_to: number | string }>(
                  sink,
                  "SELECT chunk, sent_to FROM bre_batch_chunks WHERE job = $1 AND holder LIKE $2 AND state = 'held'",
                  [job, `%:${b.child.pid}:%`],
                );
                taken = held.map((r) => Number(r.chunk));
                if (held.length > 0 && held.every((r) => Number(r.sent_to) > 0)) return true;
                b.child.kill('SIGCONT');
                return false;
              },
              60_000,
              'b stopped holding chunks, their marks reported',
            );
            // a takes b's chunks over once their lease lapses, and finishes them, while b is stopped.
            a = worker('a', A);
            const started = a;
            await waitFor(
              async () => {
                if (started.child.exitCode !== null) throw new Error(`a exited before:\n${started.stderr()}`);
                return (
                  Number(
                    (
                      await jobQuery<{ n: string }>(
                        sink,
                        `SELECT count(*) AS n FROM bre_batch_chunks WHERE job = $1 AND state = 'done' AND takeovers > 0 AND chunk IN (${taken.join(', ')})`,
                        [job],
                      )
                    )[0].n,
                  ) === taken.length
                );
              },
              120_000,
              `b's chunks (${taken.join(', ')}) taken over and finished`,
            );
            // b's calls in flight are answered (into its sockets: it reads them when it goes on).
            await kc.release();
            mark = kc.calls().length;
          } finally {
            b.child.kill('SIGCONT');
          }
          const [ra, rb] = await Promise.all([a!.done, b.done]);
          expect(ra.code, why(ra)).toBe(0);
          expect(rb.code, why(rb)).toBe(0);
          expect(rb.stderr).toContain('lost chunk');

          const calls = kc.calls();
          const keysOf = (pick: (c: (typeof calls)[number]) => boolean) =>
            new Set(calls.filter(pick).map((c) => c.key));
          const byA = keysOf((c) => c.caller === A);
          const bBefore = keysOf((c) => c.caller === B && c.seq < mark);
          const bAfter = keysOf((c) => c.caller === B && c.seq >= mark);
          // The fix: nothing b had queued of the chunks taken from it is sent once it goes on.
          expect(
            [...bAfter].filter((k) => byA.has(k)),
            'keys b sent after its stall that a sent too',
          ).toEqual([]);
          // Else the case proves nothing: b had rows of the chunks taken still to send when it was stopped.
          const summary = loadRunSummary(folderOf(join(dir, 'b')));
          expect(summary.rows.taken_over_not_sent, 'rows b had queued of the chunks taken').toBeGreaterThan(0);
          expect(rb.stdout).toContain(
            `not sent: ${summary.rows.taken_over_not_sent} rows of chunks another worker took over`,
          );
          // Sent by both: only what b had sent before its stall, at most twice in all; job status counts them.
          const both = [...byA].filter((k) => bBefore.has(k) || bAfter.has(k));
          for (const k of both) expect(bBefore.has(k), `${k} sent by both workers`).toBe(true);
          const perKey = new Map<string, number>();
          for (const c of calls) perKey.set(c.key, (perKey.get(c.key) ?? 0) + 1);
          expect([...perKey.values()].filter((n) => n > 2)).toEqual([]);
          expect([...perKey.keys()].filter((k) => (perKey.get(k) ?? 0) > 1).sort()).toEqual(both.sort());

          // The answers b got for its calls in flight at the stop are refused at commit: the sink holds a's.
          const inSink = await sinkKeys(sink, table);
          expect(inSink.size).toBe(N);
          const lines = (w: string) =>
            new Map(journal(join(folderOf(join(dir, w)), 'results.ndjson')).map((l) => [l.key, requestId(l.stages)]));
          const aLines = lines('a');
          const bLines = lines('b');
          // Among them at least the calls held while b was stopped, whose answers it read when it went on.
          const answeredByB = both.filter((k) => bLines.has(k));
          expect(answeredByB.length, 'b answered rows a sent again').toBeGreaterThan(0);
          for (const k of answeredByB)
            expect(inSink.get(k), `${k}: the sink holds a's answer, not the stalled b's`).toBe(aLines.get(k));

          const status = await jobStatus(sink, job);
          expect(status).toMatchObject({ state: 'done', results: N, errors: 0 });
          expect(Number(status.resent)).toBeGreaterThanOrEqual(both.length);
        },
        240_000,
      );
    });
}
