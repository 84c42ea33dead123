/**
 * A job's claims against the real PostgreSQL (src/job/store.ts): a held chunk whose lease lapsed first, taken
 * over under a new token, then the lowest waiting chunk; a live lease never; the partial
 * indexes the claim reads made once, whoever opens the store first, and found again by the next.
 */
import { describe, expect } from 'vitest';
import { parseDbUrl } from '../../src/db/index.js';
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

describe.runIf(available.postgres || process.env.CI === 'true')("a job's claims", () => {
  itDb('postgres')(
    'a lapsed lease taken over first, then the lowest waiting chunk; a live lease never',
    async () => {
      const url = await freshDatabase('postgres', 'bre_job_store');
      const open = () => JobStore.open({ url: parseDbUrl(url, { flag: 'test' }), retryForMs: 5_000 });
      const a = await open();
      const b = await open();
      try {
        await a.join('j', definition, async () => plans(3));
        await a.join('other', definition, async () => plans(2));
        const first = await a.claim('j', 'wa', 60_000);
        const second = await b.claim('j', 'wb', 1);
        expect([first?.chunk, first?.takeover, second?.chunk]).toEqual([0, false, 1]);
        // wb's lease of 1 ms lapses: its chunk is taken over before chunk 2, which waits.
        await query(url, 'SELECT pg_sleep(0.01)');
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
        const indexes = await query<{ indexname: string; indexdef: string }>(
          url,
          "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'bre_batch_chunks' AND indexname <> 'bre_batch_chunks_pkey' ORDER BY indexname",
        );
        expect(indexes.map((i) => i.indexname)).toEqual(['bre_batch_chunks_held', 'bre_batch_chunks_waiting']);
        expect(indexes[1].indexdef).toMatch(/\(job, chunk\) WHERE \(state = 'waiting'::text\)$/);
      } finally {
        await a.close();
        await b.close();
      }
    },
    60_000,
  );
});
