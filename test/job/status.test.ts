/**
 * `job status` early in a job (src/job/status.ts), on the real PostgreSQL and MariaDB: a worker whose heartbeat
 * has not measured a rate yet, with rows committed in its chunk, is shown with those rows and a rate from its
 * commits, and counts in the ETA (it used to show `0 rows/min, 0 rows done` beside 77 rows committed, and the
 * ETA from the other workers alone, twice the truth).
 */
import { describe, expect } from 'vitest';
import { parseDbUrl, type DialectName } from '../../src/db/index.js';
import { JobStore } from '../../src/job/index.js';
import { formatJobStatus, readJobStatus } from '../../src/job/status.js';
import { available, freshDatabase, itDb } from '../helpers/db.js';

const definition = {
  sink_table: 't',
  pipeline: { name: 'p', sha256: 'x' },
  input: { kind: 'database' as const, identity: 'i' },
  key: 'k',
  rates: 'r',
};

const plans = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    firstRow: i * 500 + 1,
    rows: 500,
    afterKey: null,
    byteStart: null,
    byteEnd: null,
  }));

/** A worker's start moved `seconds` into the past (the time it has been at work), in each database's words. */
const SINCE: Record<DialectName, (seconds: number) => string> = {
  postgres: (s) => `UPDATE bre_batch_workers SET started_at = now() - interval '${s} seconds' WHERE worker = $1`,
  mysql: (s) => `UPDATE bre_batch_workers SET started_at = NOW(3) - INTERVAL ${s} SECOND WHERE worker = $1`,
};

describe.runIf(available.postgres || available.mysql || process.env.CI === 'true')('job status early on', () => {
  for (const dialect of ['postgres', 'mysql'] as const) {
    itDb(dialect)(
      `${dialect}: a worker not yet measured by its heartbeat: its committed rows and a rate from them, in the ETA`,
      async () => {
        const url = await freshDatabase(dialect, 'bre_job_status');
        const store = await JobStore.open({ url: parseDbUrl(url, { flag: 'test' }), retryForMs: 5_000 });
        try {
          await store.join('j', definition, async () => plans(4));
          const a = await store.claim('j', 'wa', 60_000);
          const b = await store.claim('j', 'wb', 60_000);
          // wa has reported 6 rows a second; wb's only heartbeat came before its first row.
          await store.heartbeat('j', { worker: 'wa', host: 'h', address: null, rowsDone: 120, rate: 6 }, [], 60_000);
          await store.heartbeat('j', { worker: 'wb', host: 'h', address: null, rowsDone: 0, rate: 0 }, [], 60_000);
          // Their sinks committed 120 and 77 rows of their chunks (as the fence does), wb in its 11 s so far.
          const commit = `UPDATE bre_batch_chunks SET rows_results = $3, position = $3 WHERE job = $1 AND chunk = $2`;
          await store.query(commit, ['j', a!.chunk, 120]);
          await store.query(commit, ['j', b!.chunk, 77]);
          await store.query(SINCE[dialect](11), ['wb']);

          const s = (await readJobStatus(store, 'j'))!;
          const wb = s.workers.find((w) => w.worker === 'wb')!;
          expect(wb.rowsDone).toBe(77);
          // 77 rows over its 11 s (the database's clock: a little more by the time it is read).
          expect(wb.rate).toBeGreaterThan(6.5);
          expect(wb.rate).toBeLessThanOrEqual(7);
          expect(s.rate).toBeCloseTo(6 + wb.rate, 6);
          // 2,000 rows, 197 done: 1,803 left at about 13 a second, not at wa's 6 alone.
          expect(s.etaSeconds!).toBeLessThan(1803 / 12.5);
          const text = formatJobStatus(s);
          expect(text).toMatch(/\n {4}wb: 4\d\d rows\/min, 77 rows done, 0 chunks finished/);
          expect(text).toContain('\n    wa: 360 rows/min, 120 rows done, 0 chunks finished');
          expect(text).not.toContain(': 0 rows/min');
        } finally {
          await store.close();
        }
      },
      60_000,
    );
  }
});
