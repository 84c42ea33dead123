/**
 * The journal pieces that make a resume safe, in process: a row's transactions and secrets reach the kernel
 * before its results line; leftovers of a run killed while rewriting a file are not merged in; the folder
 * lock is taken over from a dead process but not from a live one or another host.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { lockOutput } from '../../src/output/lock.js';
import { FILES, type Manifest } from '../../src/output/format/index.js';
import { AppendFile } from '../../src/output/ndjson-file.js';
import { RunOutput } from '../../src/output/run-output.js';
import type { NormalisedTransaction } from '../../src/types.js';
import { tempDir } from '../helpers/temp.js';

const manifest: Manifest = {
  version: 1, tool: 'bre-batch', pipeline: { name: 'p', path: '/p.yaml', sha256: 'aaa' },
  input: { path: '/in.csv', format: 'csv', size: 10, sha256: 'bbb' }, key: 'reference_id', shard: null, limit: null,
  created_at: '2026-01-01T00:00:00Z',
};

const txn = (id: string): NormalisedTransaction => ({
  source: 'aa', account: 'ACC1', txn_id: id, timestamp: null, value_date: '2024-01-02', type: 'DEBIT', amount: 10, balance: null, mode: null, narration: null,
});

describe('journal order and leftovers', () => {
  it('flushing a file flushes the files it depends on first', () => {
    const dir = tempDir();
    const tx = new AppendFile(join(dir, 'tx.ndjson'));
    const results = new AppendFile(join(dir, 'results.ndjson'));
    results.before.push(tx);
    tx.append('{"row":1}');
    results.append('{"row":1}');
    results.flush();
    // tx was flushed by results' flush, not by its own (still scheduled) turn.
    expect(readFileSync(join(dir, 'tx.ndjson'), 'utf8')).toBe('{"row":1}\n');
    tx.close();
    results.close();
  });

  it('a big results batch (flushed at once) takes the transactions of its rows with it', () => {
    const dir = tempDir();
    const tx = new AppendFile(join(dir, 'tx.ndjson'));
    const results = new AppendFile(join(dir, 'results.ndjson'));
    results.before.push(tx);
    const big = 'x'.repeat(100 * 1024);
    for (let row = 1; row <= 3; row += 1) {
      tx.append(`{"row":${row}}`);
      results.append(`{"row":${row},"pad":"${big}"}`);
    }
    // Past 256 KiB the results were written synchronously: the transactions must be on disk too.
    expect(readFileSync(join(dir, 'results.ndjson'), 'utf8').split('\n').length).toBeGreaterThan(1);
    expect(readFileSync(join(dir, 'tx.ndjson'), 'utf8')).toBe('{"row":1}\n{"row":2}\n{"row":3}\n');
    tx.close();
    results.close();
  });

  it('a leftover .tmp of a run killed while pruning the transaction journal is not merged in', async () => {
    const dir = tempDir();
    let out = await RunOutput.open(dir, manifest, { retryErrors: false, withTransactions: true });
    out.writeResult(1, 'k1', '{}', [txn('t1'), txn('t2')], []);
    out.writeResult(2, 'k2', '{}', [txn('t3')], []);
    out.close();
    out.unlock();
    writeFileSync(join(dir, `${FILES.txJournal}.tmp`), `${readFileSync(join(dir, FILES.txJournal), 'utf8')}{"row":1,"key":"k1","tran`);
    out = await RunOutput.open(dir, manifest, { retryErrors: false, withTransactions: true });
    out.close();
    expect(await out.buildTransactionsCsv()).toBe(3);
    out.unlock();
  });

  it('secrets of a row that never reached results (killed in between) are dropped; the file stays 0600', async () => {
    const dir = tempDir();
    let out = await RunOutput.open(dir, manifest, { retryErrors: false, withTransactions: false });
    out.writeResult(1, 'k1', '{}', [], [{ stage: 'report', name: 'report_url', value: 'https://x.example/r1' }]);
    out.close();
    out.unlock();
    appendFileSync(join(dir, FILES.secrets), '{"row":2,"key":"k2","secrets":[{"name":"report_url","value":"https://x.example/r2"}]}\n');
    out = await RunOutput.open(dir, manifest, { retryErrors: false, withTransactions: false });
    out.close();
    out.unlock();
    const lines = readFileSync(join(dir, FILES.secrets), 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l).row)).toEqual([1]);
    expect(statSync(join(dir, FILES.secrets)).mode & 0o777).toBe(0o600);
  });

  it('a leftover errors.retrying.ndjson.new of a killed --retry-errors is not merged in twice', async () => {
    const dir = tempDir();
    let out = await RunOutput.open(dir, manifest, { retryErrors: false, withTransactions: false });
    out.writeError({ row: 1, line: 2, key: 'k1', stage: 's', status: 503, code: 'SERVER_UNAVAILABLE', message: 'x', attempts: 1, input: {} });
    out.close();
    out.unlock();
    writeFileSync(join(dir, `${FILES.retrying}.new`), '{"row":7,"key":"k7"}\n{"row":8,');
    out = await RunOutput.open(dir, manifest, { retryErrors: true, withTransactions: false });
    expect([out.retry.size, out.retry.has(1), out.retry.has(7)]).toEqual([1, true, false]);
    out.close();
    out.unlock();
  });
});

describe('output folder lock', () => {
  const lockPath = (dir: string) => join(dir, '.state', 'lock');
  const folder = () => {
    const dir = tempDir();
    mkdirSync(join(dir, '.state'));
    return dir;
  };

  it('is taken and released', () => {
    const dir = folder();
    const release = lockOutput(dir);
    expect(JSON.parse(readFileSync(lockPath(dir), 'utf8')).pid).toBe(process.pid);
    release();
    expect(existsSync(lockPath(dir))).toBe(false);
  });

  it('is taken over from a process that is gone, or from a torn lock file', async () => {
    const dir = folder();
    const child = spawn(process.execPath, ['-e', '0']);
    const deadPid = await new Promise<number>((r) => child.on('exit', () => r(child.pid!)));
    writeFileSync(lockPath(dir), JSON.stringify({ pid: deadPid, host: hostname(), started: 'then' }));
    lockOutput(dir)();
    writeFileSync(lockPath(dir), '{"pid":12');
    lockOutput(dir)();
  });

  it('is taken over from a live process that is not bre-batch (a reused pid)', async () => {
    const dir = folder();
    const other = spawn('sleep', ['5']);
    try {
      writeFileSync(lockPath(dir), JSON.stringify({ pid: other.pid, host: hostname(), started: 'then' }));
      lockOutput(dir)();
    } finally {
      other.kill();
    }
  });

  it('is refused while another bre-batch process holds it, and when held from another host', async () => {
    const dir = folder();
    // A live process whose command line names bre-batch.
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 5000)', 'bre-batch']);
    try {
      await new Promise((r) => holder.once('spawn', r));
      writeFileSync(lockPath(dir), JSON.stringify({ pid: holder.pid, host: hostname(), started: 'now' }));
      expect(() => lockOutput(dir)).toThrow(new RegExp(`another bre-batch run \\(pid ${holder.pid}, started now\\) is writing to it`));
    } finally {
      holder.kill();
    }
    writeFileSync(lockPath(dir), JSON.stringify({ pid: 4242, host: 'elsewhere.example', started: 'now' }));
    expect(() => lockOutput(dir)).toThrow(/a bre-batch run on host elsewhere\.example \(pid 4242.*delete .*lock and run again/);
  });
});
