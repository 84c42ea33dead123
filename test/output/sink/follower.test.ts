/**
 * SinkFollower and loadFolder on an output folder written by hand in the run's exact line format (the results
 * line as RunOutput.writeResult writes it, errors as JSON.stringify of the line, transactions journalled per
 * row), against the real local PostgreSQL and MariaDB: every line written once, positions taken from the
 * commit table, appended lines only, a replaced file from its start, a torn last line only once whole, a
 * run's journals followed while they grow.
 */
import { appendFileSync, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { FILES, readManifest, writeManifest, type ErrorLine, type Manifest } from '@bre-batch/formats';
import { loadFolder } from '../../../src/output/sink/load.js';
import { folderId, SinkFollower, type SinkWriter } from '../../../src/output/sink/index.js';
import type { SinkBatch } from '../../../src/output/sink/writer.js';
import { fileIdentity } from '../../../src/output/sink/tail.js';
import type { NormalisedTransaction } from '@bre-batch/core/types';
import { available, freshDatabase, itDb } from '../../helpers/db.js';
import { errorLine, num, openWriter, sinkTarget, tableRows } from '../../helpers/sink.js';
import { tempDir } from '../../helpers/temp.js';
import { waitFor } from '../../helpers/wait.js';

function manifest(createdAt: string): Manifest {
  return {
    version: 1,
    tool: 'bre-batch',
    pipeline: { name: 'loans', path: '/pipelines/loans.yaml', sha256: '0'.repeat(64) },
    input: { path: '/data/input.csv', format: 'csv', size: 100, sha256: '1'.repeat(64) },
    key: 'reference_id',
    shard: null,
    limit: null,
    created_at: createdAt,
  };
}

/** results.ndjson's line as RunOutput.writeResult writes it. */
function resultText(
  row: number,
  key: string | null,
  stages: Record<string, unknown> = { decision: { decision: row % 2 ? 'APPROVE' : 'DECLINE', score: row * 10 } },
): string {
  return `{"row":${row},"key":${JSON.stringify(key)},"stages":${JSON.stringify(stages)}}\n`;
}

function errorText(row: number, key: string | null, extra: Partial<ErrorLine> = {}): string {
  return `${JSON.stringify(errorLine(row, key, 'HTTP_ERROR', extra))}\n`;
}

function txText(row: number, key: string, amounts: readonly number[]): string {
  const transactions: NormalisedTransaction[] = amounts.map((amount, i) => ({
    source: 'bsa',
    account: 'ACC1',
    txn_id: `${key}-${i}`,
    timestamp: '2024-01-31T23:59:59Z',
    value_date: '2024-01-31',
    type: 'CREDIT',
    amount,
    balance: null,
    mode: null,
    narration: `n${i}`,
  }));
  return `${JSON.stringify({ row, key, transactions })}\n`;
}

/** An output folder: a manifest, and the journals as given. */
function folder(results: string, errors: string, createdAt = '2024-05-01T10:00:00.000Z'): string {
  const dir = tempDir('bre-sink-folder-');
  writeManifest(dir, manifest(createdAt));
  writeFileSync(join(dir, FILES.results), results);
  writeFileSync(join(dir, FILES.errors), errors);
  return dir;
}

const rowsOf = (n: number, from = 1) =>
  Array.from({ length: n }, (_, i) => resultText(from + i, `K${from + i}`)).join('');

for (const dialect of ['postgres', 'mysql'] as const) {
  describe.runIf(available[dialect] || process.env.CI === 'true')(`loadFolder and SinkFollower on ${dialect}`, () => {
    let url: string;
    beforeAll(async () => {
      url = await freshDatabase(dialect);
    });
    const log: string[] = [];
    const load = (dir: string, table: string) => loadFolder(dir, sinkTarget(url, table), (l) => log.push(l));
    const keys = async (table: string) => (await tableRows(url, table, 'row')).map((r) => r.reference_id);
    const errorRows = async (table: string) =>
      (await tableRows(url, `${table}_errors`, 'row')).map((r) => [num(r.row), r.code]);

    itDb(dialect)(
      'load writes every line; again, nothing; appended lines, only those; the commit table holds where each file ends',
      async () => {
        const dir = folder(rowsOf(5), errorText(6, 'K6') + errorText(7, 'K7'));
        expect(await load(dir, 'once')).toMatchObject({ results: 5, errors: 2, batches: 1, retrying: false });
        expect(await keys('once')).toEqual(['K1', 'K2', 'K3', 'K4', 'K5']);
        expect(await errorRows('once')).toEqual([
          [6, 'HTTP_ERROR'],
          [7, 'HTTP_ERROR'],
        ]);
        const [decision] = await tableRows(url, 'once', 'row');
        expect([decision.decision_decision, num(decision.decision_score)]).toEqual(['APPROVE', 10]);

        const id = folderId(dir, readManifest(dir)!);
        const commit = async () =>
          (await tableRows(url, 'bre_batch_loads', 'folder')).find(
            (l) => l.sink_table === 'once' && l.folder === id.id,
          )!;
        const sizes = () => ({
          results: statSync(join(dir, FILES.results)).size,
          errors: statSync(join(dir, FILES.errors)).size,
        });
        let c = await commit();
        expect([
          num(c.results_bytes),
          num(c.errors_bytes),
          c.results_file,
          c.errors_file,
          num(c.batches),
          c.path,
        ]).toEqual([
          sizes().results,
          sizes().errors,
          fileIdentity(join(dir, FILES.results)),
          fileIdentity(join(dir, FILES.errors)),
          1,
          id.path,
        ]);

        expect(await load(dir, 'once')).toMatchObject({ results: 0, errors: 0, batches: 0 });

        appendFileSync(join(dir, FILES.results), rowsOf(2, 8));
        appendFileSync(join(dir, FILES.errors), errorText(10, 'K10'));
        expect(await load(dir, 'once')).toMatchObject({ results: 2, errors: 1, batches: 1 });
        expect(await keys('once')).toEqual(['K1', 'K2', 'K3', 'K4', 'K5', 'K8', 'K9']);
        expect(await errorRows('once')).toEqual([
          [6, 'HTTP_ERROR'],
          [7, 'HTTP_ERROR'],
          [10, 'HTTP_ERROR'],
        ]);
        c = await commit();
        expect([num(c.results_bytes), num(c.errors_bytes), num(c.batches)]).toEqual([
          sizes().results,
          sizes().errors,
          2,
        ]);
      },
    );

    itDb(dialect)(
      'a replaced errors.ndjson (a new file, as --retry-errors leaves it) is read from its start; a healed row leaves NAME_errors',
      async () => {
        const dir = folder(rowsOf(3), errorText(4, 'K4') + errorText(5, 'K5') + errorText(6, 'K6'));
        expect(await load(dir, 'replaced')).toMatchObject({ results: 3, errors: 3 });
        const before = fileIdentity(join(dir, FILES.errors));
        // The retry: row 4 succeeded, rows 5 and 6 failed again; the new file is shorter than the old position.
        appendFileSync(join(dir, FILES.results), resultText(4, 'K4'));
        writeFileSync(join(dir, 'errors.new'), errorText(5, 'K5', { code: 'TIMEOUT', attempts: 4 }));
        renameSync(join(dir, 'errors.new'), join(dir, FILES.errors));
        expect(fileIdentity(join(dir, FILES.errors))).not.toBe(before);
        expect(await load(dir, 'replaced')).toMatchObject({ results: 1, errors: 1 });
        expect(await keys('replaced')).toEqual(['K1', 'K2', 'K3', 'K4']);
        // Row 4 healed; row 5 updated from the new file; row 6 is as the old file left it (upserts never delete).
        expect(await errorRows('replaced')).toEqual([
          [5, 'TIMEOUT'],
          [6, 'HTTP_ERROR'],
        ]);
        // A replaced file longer than the old position is read from its start too.
        writeFileSync(
          join(dir, 'errors.new'),
          Array.from({ length: 20 }, (_, i) => errorText(100 + i, `K${100 + i}`)).join(''),
        );
        renameSync(join(dir, 'errors.new'), join(dir, FILES.errors));
        expect(await load(dir, 'replaced')).toMatchObject({ results: 0, errors: 20 });
      },
    );

    itDb(dialect)('a torn last line (no newline yet) is not written until it is whole', async () => {
      const whole = resultText(2, 'K2');
      const dir = folder(resultText(1, 'K1') + whole.slice(0, 20), errorText(3, 'K3').slice(0, 30));
      expect(await load(dir, 'torn')).toMatchObject({ results: 1, errors: 0 });
      expect(await keys('torn')).toEqual(['K1']);
      appendFileSync(join(dir, FILES.results), whole.slice(20));
      appendFileSync(join(dir, FILES.errors), errorText(3, 'K3').slice(30));
      expect(await load(dir, 'torn')).toMatchObject({ results: 1, errors: 1 });
      expect(await keys('torn')).toEqual(['K1', 'K2']);
      expect(await errorRows('torn')).toEqual([[3, 'HTTP_ERROR']]);
    });

    itDb(dialect)(
      'a new folder at the same path (another manifest) is another folder: written from its start',
      async () => {
        const dir = folder(rowsOf(2), '');
        expect(await load(dir, 'again')).toMatchObject({ results: 2 });
        writeManifest(dir, manifest('2024-06-01T10:00:00.000Z'));
        expect(await load(dir, 'again')).toMatchObject({ results: 2 });
        expect(
          (await tableRows(url, 'bre_batch_loads', 'folder')).filter((l) => l.sink_table === 'again'),
        ).toHaveLength(2);
      },
    );

    itDb(dialect)('lines that are not result lines, and a row without a key, are skipped with a word', async () => {
      const dir = folder(
        `${resultText(1, 'K1')}not json\n{"row":"x"}\n${resultText(2, null)}${resultText(3, 'K3')}`,
        '',
      );
      log.length = 0;
      expect(await load(dir, 'odd')).toMatchObject({ results: 2 });
      expect(await keys('odd')).toEqual(['K1', 'K3']);
      expect(log.filter((l) => l.includes('not a result line'))).toHaveLength(2);
      expect(log.some((l) => l.includes('row 2 has no key'))).toBe(true);
    });

    itDb(dialect)(
      "an account pipeline's transactions come from .state/transactions.ndjson, also for rows appended after a load",
      async () => {
        const dir = folder(rowsOf(2), '');
        mkdirSync(join(dir, FILES.state), { recursive: true });
        writeFileSync(join(dir, FILES.txJournal), txText(1, 'K1', [10, 20]) + txText(2, 'K2', [5]));
        expect(await load(dir, 'acct')).toMatchObject({ results: 2 });
        appendFileSync(join(dir, FILES.txJournal), txText(3, 'K3', [7, 8, 9]));
        appendFileSync(join(dir, FILES.results), resultText(3, 'K3'));
        expect(await load(dir, 'acct')).toMatchObject({ results: 1 });
        const tx = await tableRows(url, 'acct_transactions', 'reference_id, seq');
        expect(tx.map((t) => [t.reference_id, num(t.seq), num(t.amount), t.txn_id])).toEqual([
          ['K1', 0, 10, 'K1-0'],
          ['K1', 1, 20, 'K1-1'],
          ['K2', 0, 5, 'K2-0'],
          ['K3', 0, 7, 'K3-0'],
          ['K3', 1, 8, 'K3-1'],
          ['K3', 2, 9, 'K3-2'],
        ]);
        expect([tx[0].timestamp, tx[0].timestamp_offset]).toEqual([
          expect.stringMatching(/^2024-01-31T23:59:59(\.000)?$/),
          '+00:00',
        ]);
      },
    );

    itDb(dialect)("a run's journals followed while they grow; finish writes the rest and stops", async () => {
      const dir = folder('', '');
      const writer = await openWriter(url, 'followed');
      try {
        const follower = await SinkFollower.open(dir, readManifest(dir)!, writer, (l) => log.push(l));
        follower.follow();
        appendFileSync(join(dir, FILES.results), rowsOf(3));
        await waitFor(() => follower.stats.results === 3, 20_000, 'the first three results written');
        expect(await keys('followed')).toEqual(['K1', 'K2', 'K3']);
        // Half a line while the run is writing it: written once whole.
        const next = resultText(4, 'K4');
        appendFileSync(join(dir, FILES.results), next.slice(0, 10));
        appendFileSync(join(dir, FILES.errors), errorText(5, 'K5'));
        await waitFor(() => follower.stats.errors === 1, 20_000, 'the error written');
        expect(follower.stats.results).toBe(3);
        appendFileSync(join(dir, FILES.results), next.slice(10));
        const stats = await follower.finish();
        expect(stats).toMatchObject({ results: 4, errors: 1 });
        expect(follower.positions).toEqual({
          results: statSync(join(dir, FILES.results)).size,
          errors: statSync(join(dir, FILES.errors)).size,
        });
      } finally {
        await writer.close();
      }
      expect(await keys('followed')).toEqual(['K1', 'K2', 'K3', 'K4']);
      expect(await errorRows('followed')).toEqual([[5, 'HTTP_ERROR']]);
      // A load afterwards finds it all written.
      expect(await load(dir, 'followed')).toMatchObject({ results: 0, errors: 0, batches: 0 });
    });

    itDb(dialect)(
      'journals of more than one batch (about 4 MB each) are written in several, every line once',
      async () => {
        const big = 'x'.repeat(2000);
        const lines = Array.from({ length: 2500 }, (_, i) =>
          resultText(i + 1, `K${i + 1}`, { decision: { note: big, n: i } }),
        ).join('');
        const dir = folder(lines, '');
        const stats = await load(dir, 'big');
        expect(stats.results).toBe(2500);
        expect(stats.batches).toBeGreaterThan(1);
        const rows = await tableRows(url, 'big', 'row');
        expect(rows).toHaveLength(2500);
        expect(rows.every((r, i) => num(r.decision_n) === i)).toBe(true);
      },
    );
  });
}

describe('SinkFollower.finish', () => {
  /** A writer that keeps the batches; `after` runs once, just after a write, while the follower's next look is under way. */
  function fakeWriter(after: { once?: () => void }): { writer: SinkWriter; batches: SinkBatch[] } {
    const batches: SinkBatch[] = [];
    const writer = {
      shape: { key: 'reference_id', sampled: false, transactions: false },
      names: { results: 'fake', errors: 'fake_errors', transactions: 'fake_transactions' },
      progress: async () => undefined,
      columnChanges: [],
      write: async (_folder: unknown, b: SinkBatch) => {
        batches.push(b);
        const run = after.once;
        after.once = undefined;
        // After the follower has gone on into its next look (which reads the files: real I/O).
        if (run) setImmediate(run);
        return { results: b.results.length, errors: b.errors.length };
      },
    };
    return { writer: writer as unknown as SinkWriter, batches };
  }

  it('called while a look that finds nothing new is under way, still writes to the end', async () => {
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const dir = folder('', '');
      const next = resultText(2, 'K2');
      const hook: { once?: () => void } = {};
      const { writer, batches } = fakeWriter(hook);
      const follower = await SinkFollower.open(dir, readManifest(dir)!, writer, () => undefined);
      let finished: Promise<unknown> | undefined;
      hook.once = () => {
        appendFileSync(join(dir, FILES.results), next.slice(10));
        finished = follower.finish();
      };
      // Row 1 whole and row 2 begun: the look after row 1's batch finds only half a line.
      appendFileSync(join(dir, FILES.results), resultText(1, 'K1') + next.slice(0, 10));
      follower.follow();
      await waitFor(() => finished !== undefined, 20_000, 'finish called');
      expect(await finished).toMatchObject({ results: 2 });
      expect(batches.flatMap((b) => b.results.map((r) => r.key))).toEqual(['K1', 'K2']);
    }
  });
});
