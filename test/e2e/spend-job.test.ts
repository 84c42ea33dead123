/**
 * Two workers of one job sharing one --max-spend (src/job/spend.ts): the cap is the job's, in its database,
 * on PostgreSQL and on MariaDB. The two-stage `rescore` pipeline, both of its services priced. At a third of
 * the night's price both stop with exit 3 (nothing in errors for it), the job's spend in `job status` is the
 * sandbox's billed calls times the price, in all and per service, and within the cap; two workers started
 * again with a higher cap finish the job, each key once in the sink (`job verify`), and `job status` then says
 * the whole job's spend, per service too, as JSON and as text.
 */
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import type { DialectName } from '../../src/db/index.js';
import { ROOT, runArgs, spawnCli, startCli } from '../helpers/cli.js';
import { available, freshDatabase, itDb } from '../helpers/db.js';
import { jobStatus, why } from '../helpers/job.js';
import { rescoreCsv } from '../helpers/output.js';
import { query } from '../helpers/sink.js';
import { startTestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

const ROWS = 120;
const PRICE = { workflow: 0.05, bureau: 0.02 } as const;
type Priced = keyof typeof PRICE;
const DIALECTS: DialectName[] = ['postgres', 'mysql'];
const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

interface SpendJson {
  spend: number;
  calls: number;
  cap: number;
  currency: string;
  services: Record<Priced, { calls: number; spend: number }>;
}

// The two databases side by side, each with a sandbox of its own: the calls it bills are its job's alone.
describe
  .runIf(available.postgres || available.mysql || process.env.CI === 'true')
  .concurrent('run --job with --max-spend', () => {
    for (const dialect of DIALECTS) {
      itDb(dialect)(
        `${dialect}: two workers share one cap; a higher cap finishes the job; job status says its spend per service`,
        async ({ onTestFinished }) => {
          const sb = await startTestSandbox({ rate: { workflow: null, bureau: null } });
          onTestFinished(() => sb.close());
          const billed = (): Record<Priced, number> => {
            const s = sb.sandbox.stats().services;
            return { workflow: s.workflow.billed, bureau: s.bureau.billed };
          };
          const sink = await freshDatabase(dialect, 'bre_e2e_spend_job');
          const dir = tempDir('bre-e2e-spend-job-');
          const input = rescoreCsv(dir, ROWS);
          const worker = (i: number, cap: string) =>
            startCli(
              [
                ...runArgs('rescore', input, join(dir, `w${i}-${cap}`), '--files-root', join(ROOT, 'samples')),
                ...['--sink', sink, '--sink-table', 'rs', '--job', 'night', '--job-chunk-rows', '10'],
                // A worker with nothing left to claim looks again at each heartbeat (10 s by default) until the
                // other's last chunk is done: a short one ends the round when the job does.
                ...['--job-heartbeat', '500ms'],
                ...['--rate', 'off', '--concurrency', '4', '--currency', 'EUR'],
                ...['--price', `workflow=${PRICE.workflow}`, '--price', `bureau=${PRICE.bureau}`],
                ...['--max-spend', cap],
              ],
              sb.env(),
              { timeoutMs: 120_000 },
            ).done;
          const start = billed();
          const since = () => {
            const now = billed();
            return { workflow: now.workflow - start.workflow, bureau: now.bureau - start.bureau };
          };
          const expectSpend = (st: SpendJson) => {
            const calls = since();
            expect(calls.workflow).toBeGreaterThan(0);
            expect(calls.bureau).toBeGreaterThan(0);
            expect(st.calls).toBe(calls.workflow + calls.bureau);
            expect(st.spend).toBeCloseTo(calls.workflow * PRICE.workflow + calls.bureau * PRICE.bureau, 6);
            for (const svc of ['workflow', 'bureau'] as const) {
              expect(st.services[svc].calls).toBe(calls[svc]);
              expect(st.services[svc].spend).toBeCloseTo(calls[svc] * PRICE[svc], 6);
            }
            return calls;
          };
          const cap = Math.round((ROWS * (PRICE.workflow + PRICE.bureau) * 100) / 3) / 100;
          const first = await Promise.all([worker(1, String(cap)), worker(2, String(cap))]);
          for (const r of first) {
            expect(r.code, why(r)).toBe(3);
            expect(r.stderr).toMatch(
              new RegExp(`stopping at the job's --max-spend ${cap.toFixed(2).replace('.', '\\.')} EUR`),
            );
          }
          const stopped = (await jobStatus(sink, 'night')) as { spend: SpendJson };
          expectSpend(stopped.spend);
          expect(stopped.spend.cap).toBe(cap);
          // No fault and no retry: the rows in flight were counted before they started, so the cap holds exactly.
          expect(stopped.spend.spend).toBeLessThanOrEqual(cap);
          expect(stopped.spend.spend).toBeGreaterThan(cap / 2);
          expect(await query(sink, 'SELECT 1 FROM rs_errors')).toEqual([]);

          const second = await Promise.all([worker(3, '100'), worker(4, '100')]);
          for (const r of second) expect(r.code, why(r)).toBe(0);
          // Every key once: a key written twice would be listed twice.
          const keys = await query<{ reference_id: string }>(sink, 'SELECT reference_id FROM rs');
          expect(keys.map((k) => k.reference_id).sort()).toEqual(
            Array.from({ length: ROWS }, (_, i) => `RS-${String(i + 1).padStart(6, '0')}`).sort(),
          );
          const verified = await spawnCli(['job', 'verify', 'night', '--sink', sink]);
          expect(verified.code, verified.stdout + verified.stderr).toBe(0);
          const done = (await jobStatus(sink, 'night')) as {
            spend: SpendJson;
            workers: { worker: string; spend?: { calls: number; spend: number } }[];
          };
          const calls = expectSpend(done.spend);
          // Each of the four worker sessions says its own share, and the shares add up to the job's.
          expect(done.workers.filter((w) => w.spend !== undefined)).toHaveLength(4);
          expect(done.workers.reduce((n, w) => n + (w.spend?.calls ?? 0), 0)).toBe(done.spend.calls);
          expect(done.workers.reduce((n, w) => n + (w.spend?.spend ?? 0), 0)).toBeCloseTo(done.spend.spend, 6);
          expect(done.spend.cap).toBe(100);
          expect(done.spend.currency).toBe('EUR');

          const text = await spawnCli(['job', 'status', 'night', '--sink', sink]);
          expect(text.code, why(text)).toBe(0);
          const money = (units: number) => `${units.toFixed(2)} EUR`;
          const total = calls.workflow * PRICE.workflow + calls.bureau * PRICE.bureau;
          for (const w of done.workers)
            expect(text.stdout).toMatch(
              new RegExp(`    ${literal(w.worker)}.*, ${literal(w.spend!.spend.toFixed(2))} EUR spent\n`),
            );
          expect(text.stdout).toContain(
            `  spend: ${money(total)} (${calls.workflow + calls.bureau} calls billed, every worker); --max-spend 100.00 EUR, ${money(100 - total)} left\n` +
              `    workflow: ${calls.workflow} calls billed, ${money(calls.workflow * PRICE.workflow)}\n` +
              `    bureau: ${calls.bureau} calls billed, ${money(calls.bureau * PRICE.bureau)}\n`,
          );
        },
        240_000,
      );
    }
  });
