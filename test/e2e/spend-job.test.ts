/**
 * Two workers of one job sharing one --max-spend (src/job/spend.ts): the cap is the job's, in its database. At
 * a third of the night's price both stop with exit 3 (nothing in errors for it), the job's spend in `job status`
 * is the sandbox's billed calls times the price and within the cap; two workers started again with a higher cap
 * finish the job, each key once in the sink, and `job status` then says the whole job's spend.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { runArgs, startCli } from '../helpers/cli.js';
import { available, freshDatabase, itDb } from '../helpers/db.js';
import { jobStatus, sinkKeys, why } from '../helpers/job.js';
import { locationCsv, locationKey } from '../helpers/output.js';
import { query } from '../helpers/sink.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

const ROWS = 150;
const PRICE = 0.05;

describe.runIf(available.postgres || process.env.CI === 'true')('run --job with --max-spend', () => {
  let sb: TestSandbox;
  let sink: string;
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: null } });
    sink = await freshDatabase('postgres', 'bre_e2e_spend_job');
  });
  afterAll(async () => {
    await sb?.close();
  });
  const billed = () => sb.sandbox.stats().services.workflow.billed;

  itDb('postgres')(
    'two workers share one cap; a higher cap finishes the job; job status says its spend',
    async () => {
      const dir = tempDir('bre-e2e-spend-job-');
      const input = locationCsv(dir, ROWS);
      const worker = (i: number, cap: string) =>
        startCli(
          [
            ...runArgs('location', input, join(dir, `w${i}-${cap}`)),
            ...['--sink', sink, '--sink-table', 'loc', '--job', 'night', '--job-chunk-rows', '10'],
            ...['--rate', 'workflow=off', '--concurrency', '4', '--price', `workflow=${PRICE}`, '--currency', 'EUR'],
            ...['--max-spend', cap],
          ],
          sb.env(),
          { timeoutMs: 120_000 },
        ).done;
      const start = billed();
      const cap = (ROWS * PRICE) / 3;
      const first = await Promise.all([worker(1, String(cap)), worker(2, String(cap))]);
      for (const r of first) {
        expect(r.code, why(r)).toBe(3);
        expect(r.stderr).toMatch(/stopping at the job's --max-spend 2\.50 EUR/);
      }
      const stopped = (await jobStatus(sink, 'night')) as { spend: { spend: number; calls: number; cap: number } };
      expect(stopped.spend.calls).toBe(billed() - start);
      expect(stopped.spend.spend).toBeCloseTo((billed() - start) * PRICE, 6);
      expect(stopped.spend.cap).toBe(cap);
      // No fault and no retry: the rows in flight were counted before they started, so the cap holds exactly.
      expect(stopped.spend.spend).toBeLessThanOrEqual(cap);
      expect(stopped.spend.spend).toBeGreaterThan(cap / 2);
      expect(await query(sink, 'SELECT 1 FROM loc_errors')).toEqual([]);

      const second = await Promise.all([worker(3, '100'), worker(4, '100')]);
      for (const r of second) expect(r.code, why(r)).toBe(0);
      const keys = await sinkKeys(sink, 'loc');
      expect([...keys.keys()].sort()).toEqual(Array.from({ length: ROWS }, (_, i) => locationKey(i + 1)).sort());
      const done = (await jobStatus(sink, 'night')) as { spend: { spend: number; calls: number; cap: number } };
      expect(done.spend.calls).toBe(billed() - start);
      expect(done.spend.spend).toBeCloseTo((billed() - start) * PRICE, 6);
      expect(done.spend.cap).toBe(100);
    },
    240_000,
  );
});
