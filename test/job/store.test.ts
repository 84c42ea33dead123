/**
 * A job's claims against the real PostgreSQL and MariaDB (src/job/store.ts, each dialect's src/db/*-job.ts),
 * the same cases on both: a held chunk whose lease lapsed first, taken over under a new token, then the lowest
 * waiting chunk; a live lease never; workers claiming at one moment never get one chunk twice; a heartbeat
 * renews only the chunks still under the worker's token; the indexes the claim reads made once, whoever opens
 * the store first, and found again by the next.
 */
import { describe, expect } from 'vitest';
import { parseDbUrl, type DialectName } from '../../src/db/index.js';
import { JobStore } from '../../src/job/index.js';
import { available, freshDatabase, itDb } from '../helpers/db.js';
import { query } from '../helpers/sink.js';

const definition = {
  sink_table: 't',
  pipeline: { name: 'p', sha256: 'x' },
  input: { kind: 'database' as const, identity: 'i' },
  key: 'k',
  rates: 'r',
};

const plans = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    firstRow: i * 10 + 1,
    rows: 10,
    afterKey: null,
    byteStart: null,
    byteEnd: null,
  }));

/** The claim's indexes on the chunks' table, as each database lists them. */
const INDEXES: Record<DialectName, { sql: string; names: string[]; def: RegExp }> = {
  postgres: {
    sql: "SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE tablename = 'bre_batch_chunks' AND indexname <> 'bre_batch_chunks_pkey' ORDER BY indexname",
    names: ['bre_batch_chunks_held', 'bre_batch_chunks_waiting'],
    def: /\(job, chunk\) WHERE \(state = 'waiting'::text\)$/,
  },
  mysql: {
    sql: "SELECT index_name AS name, GROUP_CONCAT(column_name ORDER BY seq_in_index) AS def FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = 'bre_batch_chunks' AND index_name <> 'PRIMARY' GROUP BY index_name",
    names: ['bre_batch_chunks_lapsed', 'bre_batch_chunks_waiting'],
    def: /^job,state,chunk$/,
  },
};

const DIALECTS: DialectName[] = ['postgres', 'mysql'];

describe.runIf(available.postgres || available.mysql || process.env.CI === 'true')("a job's claims", () => {
  for (const dialect of DIALECTS) {
    itDb(dialect)(
      `${dialect}: a lapsed lease taken over first, then the lowest waiting chunk; a live lease never; a heartbeat keeps only its own`,
      async () => {
        const url = await freshDatabase(dialect, 'bre_job_store');
        const open = () => JobStore.open({ url: parseDbUrl(url, { flag: 'test' }), retryForMs: 5_000 });
        const a = await open();
        const b = await open();
        try {
          expect((await a.join('j', definition, async () => plans(3))).rows).toBe(30);
          await a.join('other', definition, async () => plans(2));
          expect(await b.job('j')).toMatchObject({ state: 'running', chunks: 3, rows: 30, definition });
          const first = await a.claim('j', 'wa', 60_000);
          // A lease already lapsed when it is given: the next claim takes it over, no wait.
          const second = await b.claim('j', 'wb', -1_000);
          expect([first?.chunk, first?.takeover, second?.chunk]).toEqual([0, false, 1]);
          const taken = await a.claim('j', 'wa', 60_000);
          expect([taken?.chunk, taken?.takeover]).toEqual([1, true]);
          expect(Number(taken?.token)).toBe(Number(second?.token) + 1);
          const third = await a.claim('j', 'wa', 60_000);
          expect([third?.chunk, third?.takeover]).toEqual([2, false]);
          // Chunk 0 is held under a live lease: nothing is left to claim; the other job's chunks are its own.
          expect(await b.claim('j', 'wb', 60_000)).toBeUndefined();
          expect(await b.unfinished('j', 'wb')).toBe(3);
          expect(await b.unfinished('j', 'wa')).toBe(0);
          expect((await b.claim('other', 'wb', 60_000))?.chunk).toBe(0);
          // wb's heartbeat: chunk 1 is wa's now (lost), chunk 0 of 'other' is still its own.
          const report = { worker: 'wb', host: 'h', address: null, rowsDone: 0, rate: 0 };
          const beat = await b.heartbeat(
            'j',
            report,
            [{ chunk: 1, token: second!.token, sentTo: 3, resent: 0 }],
            60_000,
          );
          expect(beat).toEqual({ lost: [1], done: [] });
          const kept = await b.heartbeat('other', report, [{ chunk: 0, token: '1', sentTo: 4, resent: 1 }], 60_000);
          expect(kept).toEqual({ lost: [], done: [] });
          // Handed back: waiting again at once, what was handed out kept for whoever takes it.
          await b.release('other', 'wb', [{ chunk: 0, token: '1' }]);
          const again = await a.claim('other', 'wa', 60_000);
          expect([again?.chunk, again?.takeover, again?.prevSent]).toEqual([0, false, 4]);
          const ix = INDEXES[dialect];
          const indexes = await query<{ name: string; def: string }>(url, ix.sql);
          expect(indexes.map((i) => i.name).sort()).toEqual(ix.names);
          expect(indexes.map((i) => i.def).some((d) => ix.def.test(d))).toBe(true);
        } finally {
          await a.close();
          await b.close();
        }
      },
      60_000,
    );

    itDb(dialect)(
      `${dialect}: workers claiming at one moment each get chunks of their own (SKIP LOCKED), each chunk once`,
      async () => {
        const url = await freshDatabase(dialect, 'bre_job_claims');
        const stores = await Promise.all(
          [0, 1, 2].map(() => JobStore.open({ url: parseDbUrl(url, { flag: 'test' }), retryForMs: 5_000 })),
        );
        try {
          await stores[0].join('j', definition, async () => plans(60));
          const claimed = await Promise.all(
            stores.map(async (s, i) => {
              const mine: number[] = [];
              for (let c = await s.claim('j', `w${i}`, 60_000); c; c = await s.claim('j', `w${i}`, 60_000))
                mine.push(c.chunk);
              return mine;
            }),
          );
          const all = claimed.flat().sort((x, y) => x - y);
          expect(all).toEqual(Array.from({ length: 60 }, (_, i) => i));
        } finally {
          await Promise.all(stores.map((s) => s.close()));
        }
      },
      60_000,
    );
  }
});
