/**
 * SinkWriter when the database goes away, against the real local PostgreSQL and MariaDB (the shared servers
 * are never stopped: the test's own connections are killed, its own database closed to connections, or its
 * own TCP proxy cut): a lost connection is made again and the batch written; one that stays away past
 * --sink-retry is SINK_UNAVAILABLE, and the same writer goes on once it is back. The backoff sleeps are
 * recorded, not waited (SinkWriter.open's `sleep`).
 */
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { adminSession, available, freshDatabase, itDb, killConnections } from '../../helpers/db.js';
import { batch, breError, FOLDER, openWriter, progressAt, result, tableRows } from '../../helpers/sink.js';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy.js';
import { waitFor } from '../../helpers/wait.js';

const dbName = (url: string) => new URL(url).pathname.slice(1);

function through(url: string, proxy: TcpProxy): string {
  const u = new URL(url);
  u.port = String(proxy.port);
  return u.href;
}

for (const dialect of ['postgres', 'mysql'] as const) {
  describe.runIf(available[dialect] || process.env.CI === 'true')(`SinkWriter losing ${dialect}`, () => {
    let url: string;
    const proxies: TcpProxy[] = [];
    beforeAll(async () => {
      url = await freshDatabase(dialect);
    });
    afterAll(async () => {
      for (const p of proxies) await p.close();
    });
    async function proxyTo(): Promise<TcpProxy> {
      const u = new URL(url);
      const p = await startTcpProxy(u.hostname, Number(u.port));
      proxies.push(p);
      return p;
    }

    itDb(dialect)(
      'its connections killed between batches: the next batch connects again and is written, once',
      async () => {
        const w = await openWriter(url, 'killed');
        await w.write(FOLDER, batch([result(1, 'K1', { d: { v: 1 } })], [], progressAt(10, 0, 1)));
        await waitFor(
          async () => (await killConnections(dialect, dbName(url))) >= 1,
          10_000,
          'the writer’s connection killed',
        );
        // The same fields as before: the first statement of the retry is the transaction's own BEGIN.
        await w.write(FOLDER, batch([result(2, 'K2', { d: { v: 2 } })], [], progressAt(20, 0, 2)));
        expect(w.probe.sleeps.length).toBeGreaterThanOrEqual(1);
        expect(w.probe.log.some((l) => l.includes('lost the connection'))).toBe(true);
        expect(w.probe.log.some((l) => l.includes('is back'))).toBe(true);
        // A new field after another kill: the first statement is the column's ALTER.
        await waitFor(
          async () => (await killConnections(dialect, dbName(url))) >= 1,
          10_000,
          'the writer’s connection killed again',
        );
        await w.write(FOLDER, batch([result(3, 'K3', { d: { v: 3, w: 'new' } })], [], progressAt(30, 0, 3)));
        // And a read of the progress after a third.
        await waitFor(
          async () => (await killConnections(dialect, dbName(url))) >= 1,
          10_000,
          'the writer’s connection killed a third time',
        );
        expect(await w.progress(FOLDER)).toEqual(progressAt(30, 0, 3));
        await w.close();
        expect((await tableRows(url, 'killed', 'reference_id')).map((r) => [r.reference_id, r.d_w])).toEqual([
          ['K1', null],
          ['K2', null],
          ['K3', 'new'],
        ]);
      },
    );

    itDb(dialect)(
      'a database that stays away past retryForMs: SINK_UNAVAILABLE; once it is back the same writer goes on',
      async () => {
        const proxy = await proxyTo();
        const w = await openWriter(through(url, proxy), 'away', {}, 300);
        await w.write(FOLDER, batch([result(1, 'K1', { d: { v: 1 } })], [], progressAt(10, 0, 1)));
        await proxy.down();
        const err = await breError(
          w.write(FOLDER, batch([result(2, 'K2', { d: { v: 2 } })], [], progressAt(20, 0, 2))),
        );
        expect(err.code).toBe('SINK_UNAVAILABLE');
        expect(err.message).toContain('re-run the same command');
        // It tried again, with backoff, before giving up.
        expect(w.probe.sleeps.length).toBeGreaterThanOrEqual(1);
        expect(w.probe.sleeps[0]).toBeGreaterThan(0);
        await proxy.up();
        await w.write(FOLDER, batch([result(2, 'K2', { d: { v: 2 } })], [], progressAt(20, 0, 2)));
        expect(await w.progress(FOLDER)).toEqual(progressAt(20, 0, 2));
        await w.close();
        expect((await tableRows(url, 'away', 'reference_id')).map((r) => r.reference_id)).toEqual(['K1', 'K2']);
      },
    );

    if (dialect === 'postgres') {
      itDb(dialect)(
        'PostgreSQL closed to connections (ALLOW_CONNECTIONS false) and its backends killed: SINK_UNAVAILABLE; reopened, written',
        async () => {
          const own = await freshDatabase('postgres');
          const w = await openWriter(own, 'closed', {}, 300);
          await w.write(FOLDER, batch([result(1, 'K1', { d: { v: 1 } })], [], progressAt(10, 0, 1)));
          const admin = await adminSession('postgres');
          try {
            await admin.query(`ALTER DATABASE "${dbName(own)}" ALLOW_CONNECTIONS false`);
            await waitFor(
              async () => (await killConnections('postgres', dbName(own))) >= 1,
              10_000,
              'the writer’s connection killed',
            );
            const err = await breError(
              w.write(FOLDER, batch([result(2, 'K2', { d: { v: 2 } })], [], progressAt(20, 0, 2))),
            );
            expect(err.code).toBe('SINK_UNAVAILABLE');
            expect(w.probe.sleeps.length).toBeGreaterThanOrEqual(1);
          } finally {
            await admin.query(`ALTER DATABASE "${dbName(own)}" ALLOW_CONNECTIONS true`);
            await admin.close();
          }
          await w.write(FOLDER, batch([result(2, 'K2', { d: { v: 2 } })], [], progressAt(20, 0, 2)));
          await w.close();
          expect((await tableRows(own, 'closed', 'reference_id')).map((r) => r.reference_id)).toEqual(['K1', 'K2']);
        },
      );
    }

    itDb(dialect)(
      'a database that cannot be reached when the writer opens: DB_UNREACHABLE at once, nothing retried',
      async () => {
        const proxy = await proxyTo();
        await proxy.down();
        const err = await breError(openWriter(through(url, proxy), 'never'));
        expect(err.code).toBe('DB_UNREACHABLE');
      },
    );
  });
}
