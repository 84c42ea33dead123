/**
 * The journal pieces that make a resume safe, in process: a row's transactions and secrets reach the kernel
 * before its results line; leftovers of a run killed while rewriting a file are not merged in; the folder
 * lock names its owner so that it is taken over from a dead process (even when its pid was reused) but not
 * from a live one, whatever its name, or from another host.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { lockOutput, processIdentity } from '../../src/output/lock.js';
import { FILES, type Manifest } from '@bre-batch/formats';
import { AppendFile } from '@bre-batch/formats/ndjson-file';
import { RunOutput } from '../../src/output/run-output.js';
import type { NormalisedTransaction } from '@bre-batch/core/types';
import { ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const manifest: Manifest = {
  version: 1,
  tool: 'bre-batch',
  pipeline: { name: 'p', path: '/p.yaml', sha256: 'aaa' },
  input: { path: '/in.csv', format: 'csv', size: 10, sha256: 'bbb' },
  key: 'reference_id',
  shard: null,
  limit: null,
  created_at: '2026-01-01T00:00:00Z',
};

const txn = (id: string): NormalisedTransaction => ({
  source: 'aa',
  account: 'ACC1',
  txn_id: id,
  timestamp: null,
  value_date: '2024-01-02',
  type: 'DEBIT',
  amount: 10,
  balance: null,
  mode: null,
  narration: null,
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
    writeFileSync(
      join(dir, `${FILES.txJournal}.tmp`),
      `${readFileSync(join(dir, FILES.txJournal), 'utf8')}{"row":1,"key":"k1","tran`,
    );
    out = await RunOutput.open(dir, manifest, { retryErrors: false, withTransactions: true });
    out.close();
    expect((await out.rebuild()).transactions).toBe(3);
    out.unlock();
  });

  it('secrets of a row that never reached results (killed in between) are dropped; the file stays 0600', async () => {
    const dir = tempDir();
    let out = await RunOutput.open(dir, manifest, { retryErrors: false, withTransactions: false });
    out.writeResult(1, 'k1', '{}', [], [{ stage: 'report', name: 'report_url', value: 'https://x.example/r1' }]);
    out.close();
    out.unlock();
    appendFileSync(
      join(dir, FILES.secrets),
      '{"row":2,"key":"k2","secrets":[{"name":"report_url","value":"https://x.example/r2"}]}\n',
    );
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
    out.writeError({
      row: 1,
      line: 2,
      key: 'k1',
      stage: 's',
      status: 503,
      code: 'SERVER_UNAVAILABLE',
      message: 'x',
      attempts: 1,
      input: {},
    });
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
  const lockOf = (dir: string) => JSON.parse(readFileSync(lockPath(dir), 'utf8')) as Record<string, unknown>;
  const folder = () => {
    const dir = tempDir();
    mkdirSync(join(dir, '.state'));
    return dir;
  };
  const me = processIdentity(process.pid);
  /** The lock names this process: its pid, host, and the identity that survives pid reuse. */
  const expectOurs = (dir: string) =>
    expect(lockOf(dir)).toMatchObject({ pid: process.pid, host: hostname(), boot: me?.boot, start: me?.start });

  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const c of children) c.kill('SIGKILL');
  });
  /** A live process that is not bre-batch (nothing in its command line says so). */
  async function otherProcess(): Promise<ChildProcess> {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
    children.push(child);
    await once(child, 'spawn');
    return child;
  }

  it('names its owner by pid, host, boot and start time; is released', () => {
    expect(me, 'this test runs on Linux, where /proc tells processes apart').toBeDefined();
    const dir = folder();
    const release = lockOutput(dir);
    expectOurs(dir);
    release();
    expect(existsSync(lockPath(dir))).toBe(false);
  });

  it('refuses a second process while the first holds it; takes over once the holder is killed', async () => {
    const dir = folder();
    const lockModule = pathToFileURL(join(ROOT, 'dist', 'output', 'lock.js')).href;
    const holder = spawn(process.execPath, [
      '--input-type=module',
      '-e',
      `import { lockOutput } from ${JSON.stringify(lockModule)}; lockOutput(process.argv[1]); process.stdout.write('locked\\n'); setInterval(() => {}, 1000);`,
      dir,
    ]);
    children.push(holder);
    let out = '';
    holder.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    await waitFor(() => out.includes('locked'), 15_000, 'the other process to take the lock');
    expect(lockOf(dir)).toMatchObject({ pid: holder.pid, ...processIdentity(holder.pid!) });
    expect(() => lockOutput(dir)).toThrow(
      new RegExp(`another bre-batch run \\(pid ${holder.pid}, started [^)]+\\) is writing to it`),
    );
    expect(lockOf(dir).pid).toBe(holder.pid);

    const exited = once(holder, 'exit');
    holder.kill('SIGKILL');
    await exited;
    // Killed: its lock is left behind, and taken over.
    expect(lockOf(dir).pid).toBe(holder.pid);
    const release = lockOutput(dir);
    expectOurs(dir);
    release();
  });

  it('is taken over from a process that is gone, or from a torn lock file', async () => {
    const dir = folder();
    const child = spawn(process.execPath, ['-e', '0']);
    const deadPid = await new Promise<number>((r) => child.on('exit', () => r(child.pid!)));
    writeFileSync(lockPath(dir), JSON.stringify({ pid: deadPid, host: hostname(), started: 'then', ...me }));
    lockOutput(dir);
    expectOurs(dir);
    writeFileSync(lockPath(dir), '{"pid":12');
    lockOutput(dir);
    expectOurs(dir);
  });

  it('is taken over when its pid now belongs to another process (a reused pid, or a reboot since)', async () => {
    const dir = folder();
    const other = await otherProcess();
    const id = processIdentity(other.pid!)!;
    // The process that wrote the lock had this pid but started earlier: it is gone, and the pid reused.
    writeFileSync(
      lockPath(dir),
      JSON.stringify({
        pid: other.pid,
        host: hostname(),
        started: 'then',
        boot: id.boot,
        start: String(Number(id.start) - 1),
      }),
    );
    lockOutput(dir);
    expectOurs(dir);
    // Written before the machine last booted: every process of then is gone.
    writeFileSync(
      lockPath(dir),
      JSON.stringify({ pid: other.pid, host: hostname(), started: 'then', boot: 'an-earlier-boot', start: id.start }),
    );
    lockOutput(dir);
    expectOurs(dir);
  });

  it('is refused while its owner lives, whatever that process is called', async () => {
    const dir = folder();
    const other = await otherProcess();
    writeFileSync(
      lockPath(dir),
      JSON.stringify({ pid: other.pid, host: hostname(), started: 'now', ...processIdentity(other.pid!) }),
    );
    expect(() => lockOutput(dir)).toThrow(
      new RegExp(`another bre-batch run \\(pid ${other.pid}, started now\\) is writing to it\\. Wait for it to finish`),
    );
    expect(lockOf(dir).pid).toBe(other.pid);
  });

  it('a lock that names no process identity (an older bre-batch) with a live pid is refused, saying how to clear it', async () => {
    const dir = folder();
    const other = await otherProcess();
    writeFileSync(lockPath(dir), JSON.stringify({ pid: other.pid, host: hostname(), started: 'now' }));
    expect(() => lockOutput(dir)).toThrow(
      /does not say which process started with that pid: if no run is active, delete .*lock and run again/,
    );
    expect(lockOf(dir).pid).toBe(other.pid);
  });

  it('is refused when held from another host, saying what to do', () => {
    const dir = folder();
    writeFileSync(lockPath(dir), JSON.stringify({ pid: 4242, host: 'elsewhere.example', started: 'now' }));
    expect(() => lockOutput(dir)).toThrow(
      /a bre-batch run on host elsewhere\.example \(pid 4242.*delete .*lock and run again/,
    );
    expect(lockOf(dir).host).toBe('elsewhere.example');
  });
});
