import { readFileSync, writeFileSync, appendFileSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunOutput } from '../../src/output/run-output.js';
import { rebuildOutputs } from '../../src/output/spool/rebuild.js';
import { excelSafe } from '../../src/output/files/excel.js';
import { RowSet } from '../../src/output/journal/bitset.js';
import { FILES, type Manifest } from '@bre-batch/formats';
import { tempDir } from '../helpers/temp.js';

const manifest = (over: Partial<Manifest> = {}): Manifest => ({
  version: 1,
  tool: 'bre-batch',
  pipeline: { name: 'p', path: '/p.yaml', sha256: 'aaa' },
  input: { path: '/in.csv', format: 'csv', size: 10, sha256: 'bbb' },
  key: 'reference_id',
  shard: null,
  limit: null,
  created_at: '2026-01-01T00:00:00Z',
  ...over,
});

const tmp = () => tempDir('bre-out-');

describe('output folder journal', () => {
  it('resumes: rows in results or errors are done, a torn last line is cut', async () => {
    const dir = tmp();
    let out = await RunOutput.open(dir, manifest(), { retryErrors: false, withTransactions: false });
    out.writeResult(1, 'k1', JSON.stringify({ s: { decision: 'Approve' } }), [], []);
    out.writeError({
      row: 2,
      line: 3,
      key: 'k2',
      stage: 's',
      status: 500,
      code: 'SERVER_ERROR',
      message: 'x',
      attempts: 1,
      input: {},
    });
    out.close();
    appendFileSync(join(dir, FILES.results), '{"row":3,"key":"k3","sta');
    out = await RunOutput.open(dir, manifest(), { retryErrors: false, withTransactions: false });
    expect([out.done.has(1), out.done.has(2), out.done.has(3)]).toEqual([true, true, false]);
    out.close();
    expect(readFileSync(join(dir, FILES.results), 'utf8').endsWith('\n')).toBe(true);
    expect(readFileSync(join(dir, FILES.results), 'utf8')).not.toMatch(/"row":3/);
  });

  it.each([10, 3000])(
    'results files of a run of %i rows (a short one from the journal, a longer one from its spool thread) equal a rebuild from the journal',
    async (rows) => {
      const dir = tmp();
      const stages = [{ id: 's', known: ['decision', 'amount'] }];
      const out = await RunOutput.open(dir, manifest(), { retryErrors: false, withTransactions: false, stages });
      for (let r = 1; r <= rows; r += 1) {
        const result = {
          s: {
            decision: r % 2 ? 'Approve' : 'Reject',
            amount: r * 10,
            note: `row "${r}", with text enough to make a line of a journal`,
          },
        };
        out.writeResult(r, `k${r}`, JSON.stringify(result), [], [], result);
        // event-loop turns between batches of rows, as in a run
        if (r % 500 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      out.close();
      await out.rebuild();
      const spooled = {
        csv: readFileSync(join(dir, FILES.resultsCsv), 'utf8'),
        pq: readFileSync(join(dir, FILES.resultsParquet)),
      };
      out.unlock();
      await rebuildOutputs({ dir, stages, formats: new Set(['csv', 'parquet']) });
      expect(spooled.csv.split('\n')).toHaveLength(rows + 2);
      expect(spooled.csv).toBe(readFileSync(join(dir, FILES.resultsCsv), 'utf8'));
      expect(spooled.pq.length).toBeGreaterThan(0);
    },
  );

  it('refuses another input or pipeline under the same folder', async () => {
    const dir = tmp();
    (await RunOutput.open(dir, manifest(), { retryErrors: false, withTransactions: false })).close();
    await expect(
      RunOutput.open(dir, manifest({ input: { path: '/other.csv', format: 'csv', size: 1, sha256: 'zzz' } }), {
        retryErrors: false,
        withTransactions: false,
      }),
    ).rejects.toThrow(/refusing to resume .*input/);
    await expect(
      RunOutput.open(dir, manifest({ pipeline: { name: 'q', path: '/q.yaml', sha256: 'ccc' } }), {
        retryErrors: false,
        withTransactions: false,
      }),
    ).rejects.toThrow(/refusing to resume .*pipeline/);
  });

  it('refuses a resume that reads the input otherwise (encoding, separator, decimal comma); a folder from before the record resumes', async () => {
    const reading = { encoding: 'utf-8', delimiter: ',', decimal_comma: false };
    const withReading = (r: typeof reading) =>
      manifest({ input: { path: '/in.csv', format: 'csv', size: 10, sha256: 'bbb', reading: r } });
    const dir = tmp();
    (await RunOutput.open(dir, withReading(reading), { retryErrors: false, withTransactions: false })).close();
    for (const other of [{ encoding: 'windows-1252' }, { delimiter: ';' }, { decimal_comma: true }]) {
      await expect(
        RunOutput.open(dir, withReading({ ...reading, ...other }), { retryErrors: false, withTransactions: false }),
      ).rejects.toThrow(
        /refusing to resume .*its input was read with encoding utf-8, separator ',' \(comma\), no --decimal-comma, now with .*give the same --encoding, --delimiter and --decimal-comma/,
      );
    }
    (await RunOutput.open(dir, withReading(reading), { retryErrors: false, withTransactions: false })).close();
    const older = tmp();
    (await RunOutput.open(older, manifest(), { retryErrors: false, withTransactions: false })).close();
    (
      await RunOutput.open(older, withReading({ ...reading, delimiter: ';' }), {
        retryErrors: false,
        withTransactions: false,
      })
    ).close();
  });

  it('--retry-errors moves the errors aside: those rows are to run again and are not done', async () => {
    const dir = tmp();
    let out = await RunOutput.open(dir, manifest(), { retryErrors: false, withTransactions: false });
    out.writeResult(1, 'k1', '{}', [], []);
    out.writeError({
      row: 2,
      line: 3,
      key: 'k2',
      stage: 's',
      status: 503,
      code: 'SERVER_UNAVAILABLE',
      message: 'x',
      attempts: 6,
      input: {},
    });
    out.close();
    out = await RunOutput.open(dir, manifest(), { retryErrors: true, withTransactions: false });
    expect(out.done.has(1)).toBe(true);
    expect(out.done.has(2)).toBe(false);
    expect(out.retry.has(2)).toBe(true);
    expect(existsSync(join(dir, FILES.errors)) ? readFileSync(join(dir, FILES.errors), 'utf8') : '').toBe('');
    out.writeResult(2, 'k2', '{}', [], []);
    out.close();
    out.finishRetry();
    expect(existsSync(join(dir, FILES.retrying))).toBe(false);
  });

  it('secrets go to a file only its owner can read', async () => {
    const dir = tmp();
    const out = await RunOutput.open(dir, manifest(), { retryErrors: false, withTransactions: true });
    out.writeResult(
      1,
      'k',
      JSON.stringify({ aa: { report_url_expires_at: 'x' } }),
      [],
      [{ stage: 'aa', name: 'report_url', value: 'https://r/abc' }],
    );
    out.close();
    expect(statSync(join(dir, FILES.secrets)).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, FILES.results), 'utf8')).not.toContain('https://r/abc');
  });
});

describe('results.csv', () => {
  it('has the union of fields with known columns first, then the rest sorted, and is Excel-safe', async () => {
    const dir = tmp();
    const nd = join(dir, 'results.ndjson');
    writeFileSync(
      nd,
      [
        JSON.stringify({
          row: 2,
          key: 'b',
          run_id: 'r-1',
          run_session: 2,
          stages: { w: { decision: 'Reject', zeta: 1 } },
        }),
        JSON.stringify({
          row: 1,
          key: '=cmd',
          stages: { w: { decision: 'Approve', alpha: '@x', rules_failed: ['r1', 'r2'] } },
        }),
      ].join('\n') + '\n',
    );
    await rebuildOutputs({
      dir,
      stages: [{ id: 'w', known: ['decision', 'rules_failed'] }],
      formats: new Set(['csv']),
    });
    const lines = readFileSync(join(dir, 'results.csv'), 'utf8').trim().split('\n');
    expect(lines[0]).toBe('row,key,w.decision,w.rules_failed,w.alpha,w.zeta,run_id,run_session');
    // In row order, though the journal has row 2 first (issue 31); a line without its run (an older
    // bre-batch's) has empty cells there.
    expect(lines[1]).toBe(`1,'=cmd,Approve,"[""r1"",""r2""]",'@x,,,`);
    expect(lines[2]).toBe('2,b,Reject,,,1,r-1,2');
  });

  it.each([
    ['=1+1', "'=1+1"],
    ['-12.5', '-12.5'],
    ['+91 999', "'+91 999"],
    ['@SUM', "'@SUM"],
    ['plain', 'plain'],
    [null, ''],
    [3, '3'],
  ])('excelSafe(%j) = %j', (v, s) => expect(excelSafe(v)).toBe(s));
});

describe('RowSet', () => {
  it('grows and counts', () => {
    const s = new RowSet();
    expect(s.add(5)).toBe(true);
    expect(s.add(5)).toBe(false);
    expect(s.add(2_000_000)).toBe(true);
    expect([s.has(5), s.has(6), s.has(2_000_000), s.size]).toEqual([true, false, true, 2]);
  });
});
