/**
 * The fence (src/job/fence.ts) against the real PostgreSQL and MariaDB: two workers committing the job's last two
 * chunks at one moment. The second waits on the job's row, which the first holds; once the first commits, the
 * second must see both chunks done and mark the job done. The second's batch also has the first rows of a chunk
 * its fence had not heard of yet (it reads the chunks it holds from the database): on MariaDB's REPEATABLE READ
 * that read is a plain one, and the "any chunk left" read after it would see the transaction's first snapshot,
 * taken before the first worker committed. Each step is waited for (the second seen waiting on a lock).
 */
import { describe, expect } from 'vitest';
import { dialectOf, openSession, parseDbUrl, type DbSession, type DialectName } from '../../src/db/index.js';
import { JobFence } from '../../src/job/fence.js';
import { JobStore } from '../../src/job/index.js';
import { available, freshDatabase, itDb } from '../helpers/db.js';
import { innodbTransactions } from '../helpers/innodb.js';
import { query } from '../helpers/sink.js';
import { waitFor } from '../helpers/wait.js';

const definition = {
  sink_table: 't',
  pipeline: { name: 'p', sha256: 'x' },
  input: { kind: 'database' as const, identity: 'i' },
  key: 'k',
  rates: 'r',
};
const ROWS = 10;
const plans = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    firstRow: i * ROWS + 1,
    rows: ROWS,
    afterKey: null,
    byteStart: null,
    byteEnd: null,
  }));
const rowsOf = (chunk: number) => Array.from({ length: ROWS }, (_, i) => chunk * ROWS + 1 + i);

/** The session's id on its server: PostgreSQL's backend pid, MySQL's connection id. */
async function sessionId(session: DbSession, dialect: DialectName): Promise<number> {
  const r = await session.query<{ id: string | number }>(
    dialect === 'postgres' ? 'SELECT pg_backend_pid() AS id' : 'SELECT CONNECTION_ID() AS id',
  );
  return Number(r.rows[0].id);
}

/** Whether the session `id` waits on a lock, on the database at `url` (MySQL: read live, ../helpers/innodb.ts). */
async function waiting(url: string, dialect: DialectName, id: number): Promise<boolean> {
  if (dialect === 'mysql') return (await innodbTransactions(url)).some((t) => t.thread === id && t.lockWait);
  const [r] = await query<{ n: string | number }>(
    url,
    `SELECT count(*) AS n FROM pg_stat_activity WHERE pid = ${id} AND wait_event_type = 'Lock'`,
  );
  return Number(r.n) > 0;
}

describe.runIf(available.postgres || available.mysql || process.env.CI === 'true')('the fence', () => {
  for (const dialect of ['postgres', 'mysql'] as DialectName[]) {
    itDb(dialect)(
      `${dialect}: the last two chunks committed at one moment: the one that commits second marks the job done`,
      async () => {
        const url = await freshDatabase(dialect, 'bre_job_fence');
        const parsed = parseDbUrl(url, { flag: 'test' });
        const store = await JobStore.open({ url: parsed, retryForMs: 5_000 });
        const sessions: DbSession[] = [];
        try {
          await store.join('j', definition, async () => plans(2));
          const cy = (await store.claim('j', 'wy', 60_000))!;
          const cx = (await store.claim('j', 'wx', 60_000))!;
          expect([cy.chunk, cx.chunk]).toEqual([0, 1]);
          const [sy, sx] = [await openSession(parsed), await openSession(parsed)];
          sessions.push(sy, sx);
          const fy = new JobFence('j', 'wy', dialectOf(parsed), undefined);
          fy.hold({ chunk: 0, token: cy.token, firstRow: 1, rows: ROWS });
          // x's fence has not heard of its chunk: it reads the chunks it holds from the database.
          const fx = new JobFence('j', 'wx', dialectOf(parsed), undefined);

          // y commits its whole chunk and holds the job's row until the test lets it commit.
          let letY!: () => void;
          const yMayCommit = new Promise<void>((r) => {
            letY = r;
          });
          let yAdmitted = false;
          await fy.before(sy);
          const y = sy.transaction(async () => {
            await fy.admit(sy, { results: rowsOf(0), errors: [] });
            yAdmitted = true;
            await yMayCommit;
          });
          await waitFor(() => yAdmitted, 30_000, "y's batch admitted");
          // x commits its whole chunk too: it waits for y on the job's row.
          // As the sink's writer begins a batch (src/output/sink/batch.ts): the fence's `before`, then the transaction.
          const xId = await sessionId(sx, dialect);
          await fx.before(sx);
          const x = sx.transaction(() => fx.admit(sx, { results: rowsOf(1), errors: [] }));
          await waitFor(async () => await waiting(url, dialect, xId), 30_000, 'x waiting on the job row');
          letY();
          await y;
          await x;
          expect(fy.committed()).toMatchObject({ done: [0], jobDone: false });
          expect(fx.committed()).toMatchObject({ done: [1], jobDone: true });
          expect(await store.job('j')).toMatchObject({ state: 'done' });
        } finally {
          for (const s of sessions) await s.close().catch(() => undefined);
          await store.close();
        }
      },
      60_000,
    );
  }
});
