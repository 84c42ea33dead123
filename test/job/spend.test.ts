/**
 * A job's spend table on the real PostgreSQL and MariaDB (src/job/spend.ts over src/db/pg-job.ts and
 * src/db/mysql-job.ts), the same cases on both: the cap set and replaced, slices granted whole or not at all, what was not spent given
 * back, workers' figures replaced by their next report and summed for `job status`, in all and per service; and a
 * table an earlier release made, without the per-service columns, read as it is and then given them.
 */
import { describe, expect } from 'vitest';
import { parseDbUrl, type DialectName } from '../../src/db/index.js';
import { JobStore } from '../../src/job/index.js';
import {
  jobSpendStatements,
  prepareSpendTable,
  readJobSpend,
  readWorkerSpend,
  serviceParams,
} from '../../src/job/spend.js';
import { available, freshDatabase, itDb } from '../helpers/db.js';

const DIALECTS: DialectName[] = ['postgres', 'mysql'];

/** Calls and micro-units per service, as a worker reports them. */
const bill = (workflow: [number, number], bureau: [number, number] = [0, 0]) =>
  serviceParams(
    { workflow: workflow[0], bureau: bureau[0], account: 0 },
    { workflow: workflow[1], bureau: bureau[1], account: 0 },
  );

/** The spend table as the release before the per-service columns made it. */
const OLD_TABLE: Record<DialectName, string> = {
  postgres: `CREATE TABLE bre_batch_job_spend (job text NOT NULL, worker text NOT NULL, currency text NOT NULL DEFAULT '',
    calls bigint NOT NULL DEFAULT 0, micros bigint NOT NULL DEFAULT 0, granted bigint NOT NULL DEFAULT 0, cap bigint,
    updated_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (job, worker))`,
  mysql: `CREATE TABLE bre_batch_job_spend (job VARCHAR(255) NOT NULL, worker VARCHAR(255) NOT NULL, currency VARCHAR(16) NOT NULL DEFAULT '',
    calls BIGINT NOT NULL DEFAULT 0, micros BIGINT NOT NULL DEFAULT 0, granted BIGINT NOT NULL DEFAULT 0, cap BIGINT,
    updated_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), PRIMARY KEY (job, worker))`,
};

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
        await store.query(sql.report, ['j', 'w1', 'INR', 10, 250_000, 500_000, ...bill([6, 200_000], [4, 50_000])]);
        // replaced, not added
        await store.query(sql.report, ['j', 'w1', 'INR', 12, 300_000, 500_000, ...bill([7, 240_000], [5, 60_000])]);
        await store.query(sql.report, ['j', 'w2', 'INR', 4, 100_000, 800_000, ...bill([4, 100_000])]);
        await store.query(sql.report, ['other', 'w3', 'INR', 99, 9_900_000, 0, ...bill([99, 9_900_000])]);
        expect(await readJobSpend(store, 'j')).toEqual({
          currency: 'INR',
          calls: 16,
          spend: 0.4,
          cap: 2,
          services: { workflow: { calls: 11, spend: 0.34 }, bureau: { calls: 5, spend: 0.06 } },
        });
        // Each worker's own, for its line in job status.
        expect([...(await readWorkerSpend(store, 'j'))].sort()).toEqual([
          ['w1', { calls: 12, spend: 0.3 }],
          ['w2', { calls: 4, spend: 0.1 }],
        ]);
      } finally {
        await store.close();
      }
    });

    itDb(dialect)(`${dialect}: a table made before the per-service columns is read, then given them`, async () => {
      const url = await freshDatabase(dialect, 'bre_job_spend_old');
      const store = await JobStore.open({ url: parseDbUrl(url, { flag: 'test' }), retryForMs: 5_000 });
      try {
        const sql = jobSpendStatements(store);
        await store.query(OLD_TABLE[dialect]);
        // One service's columns already there (a table made before another service was added): the rest are added.
        await store.query('ALTER TABLE bre_batch_job_spend ADD COLUMN workflow_calls BIGINT NOT NULL DEFAULT 0');
        await store.query(sql.setCap, ['j', 5_000_000, 'EUR']);
        await store.query(
          "INSERT INTO bre_batch_job_spend (job, worker, currency, calls, micros, granted) VALUES ($1, 'old', 'EUR', 20, 1000000, 1000000)",
          ['j'],
        );
        // No worker of this release has started: the totals alone, no per-service figures made up.
        expect(await readJobSpend(store, 'j')).toEqual({ currency: 'EUR', calls: 20, spend: 1, cap: 5 });
        // Two workers starting at one moment both add the columns: the second is told each exists.
        await Promise.all([prepareSpendTable(store), prepareSpendTable(store)]);
        await prepareSpendTable(store);
        await store.query(sql.report, ['j', 'new', 'EUR', 3, 110_000, 0, ...bill([2, 100_000], [1, 10_000])]);
        // The old worker's calls are in the totals; only the new one's have a service.
        expect(await readJobSpend(store, 'j')).toEqual({
          currency: 'EUR',
          calls: 23,
          spend: 1.11,
          cap: 5,
          services: { workflow: { calls: 2, spend: 0.1 }, bureau: { calls: 1, spend: 0.01 } },
        });
      } finally {
        await store.close();
      }
    });
  }
});
