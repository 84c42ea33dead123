/**
 * A job's spend table on the real PostgreSQL and MariaDB (src/job/spend.ts over src/db/pg-job.ts and
 * src/db/mysql-job.ts), the same cases on both: the cap set and replaced, slices granted whole or not at all, what was not spent given
 * back, workers' figures replaced by their next report and summed for `job status`.
 */
import { describe, expect } from 'vitest';
import { parseDbUrl, type DialectName } from '../../src/db/index.js';
import { JobStore } from '../../src/job/index.js';
import { jobSpendStatements, readJobSpend } from '../../src/job/spend.js';
import { available, freshDatabase, itDb } from '../helpers/db.js';

const DIALECTS: DialectName[] = ['postgres', 'mysql'];

describe.runIf(available.postgres || available.mysql || process.env.CI === 'true')("a job's spend", () => {
  for (const dialect of DIALECTS) {
    itDb(dialect)(`${dialect}: the cap, grants within it, give-backs and the workers' sum`, async () => {
      const url = await freshDatabase(dialect, 'bre_job_spend');
      const store = await JobStore.open({ url: parseDbUrl(url, { flag: 'test' }), retryForMs: 5_000 });
      try {
        const sql = jobSpendStatements(store);
        await store.query(sql.create);
        await store.query(sql.create); // made where missing: a second worker's start changes nothing
        expect(await readJobSpend(store, 'j')).toBeUndefined();
        await store.query(sql.setCap, ['j', 1_000_000, 'EUR']);
        await store.query(sql.setCap, ['j', 2_000_000, 'INR']); // a new --max-spend replaces the cap
        expect(await store.count(sql.grant, ['j', 1_500_000])).toBe(1);
        expect(await store.count(sql.grant, ['j', 600_000])).toBe(0); // past the cap: nothing granted
        expect(await store.count(sql.grant, ['j', 500_000])).toBe(1); // exactly to the cap
        expect(await store.count(sql.grant, ['other', 1])).toBe(0); // a job without a cap grants nothing
        await store.query(sql.giveBack, ['j', 700_000]);
        const [cap] = await store.query<{ cap: unknown; granted: unknown; currency: string }>(sql.cap, ['j']);
        expect([Number(cap?.cap), Number(cap?.granted), cap?.currency]).toEqual([2_000_000, 1_300_000, 'INR']);
        await store.query(sql.report, ['j', 'w1', 'INR', 10, 250_000, 500_000]);
        await store.query(sql.report, ['j', 'w1', 'INR', 12, 300_000, 500_000]); // replaced, not added
        await store.query(sql.report, ['j', 'w2', 'INR', 4, 100_000, 800_000]);
        await store.query(sql.report, ['other', 'w3', 'INR', 99, 9_900_000, 0]);
        expect(await readJobSpend(store, 'j')).toEqual({ currency: 'INR', calls: 16, spend: 0.4, cap: 2 });
      } finally {
        await store.close();
      }
    });
  }
});
