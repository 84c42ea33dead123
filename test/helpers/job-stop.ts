/**
 * SIGSTOP for a job's worker at a moment it holds no lock on the job's database: stopped inside a transaction,
 * or holding PostgreSQL's advisory lock on a sink table's columns (src/output/sink/table-read.ts), it would hold
 * another worker's takeover or commit until it goes on, and a test waiting for those would wait for ever. Its
 * connections are found by their local ports (its sockets in /proc, Linux), and the database says which of them
 * hold what (MySQL's GET_LOCK on the columns, without performance_schema, only by its name: `tables`).
 */
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { RunningCli } from './cli.js';
import { columnsLockName } from '../../src/output/sink/table-read.js';
import { innodbTransactions } from './innodb.js';
import { query, quote } from './sink.js';
import { waitFor } from './wait.js';

/** The local ports of a process's TCP sockets. */
function tcpPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      // Closed since it was listed.
    }
  }
  const ports: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(table)) continue;
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && inodes.has(f[9])) ports.push(Number.parseInt(f[1].split(':')[1], 16));
    }
  }
  return ports;
}

/** MySQL's and MariaDB's sessions of the connections from these local ports: their ids and what each is doing. */
async function mysqlSessions(url: string, ports: readonly number[]): Promise<{ id: number; command: string }[]> {
  const rows = await query<{ id: string | number; command: string }>(
    url,
    `SELECT id, command FROM information_schema.processlist WHERE SUBSTRING_INDEX(host, ':', -1) IN (${ports.map((p) => `'${p}'`).join(', ')})`,
  );
  return rows.map((r) => ({ id: Number(r.id), command: r.command }));
}

/** Whether a connection of the process `pid` to the database at `url` is inside a transaction or holds a lock. */
async function holdsLock(url: string, pid: number, tables: readonly string[]): Promise<boolean> {
  const ports = tcpPorts(pid);
  if (ports.length === 0) return false;
  const list = ports.join(', ');
  if (url.startsWith('postgres')) {
    const [row] = await query<{ n: string | number }>(
      url,
      `SELECT count(*) AS n FROM pg_stat_activity a WHERE a.client_port IN (${list}) AND (a.xact_start IS NOT NULL
         OR EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted))`,
    );
    return Number(row.n) > 0;
  }
  const ids = (await mysqlSessions(url, ports)).map((r) => r.id);
  if (ids.length === 0) return false;
  if ((await innodbTransactions(url)).some((t) => t.active && ids.includes(t.thread))) return true;
  for (const t of tables) {
    const [held] = await query<{ holder: string | number | null }>(url, 'SELECT IS_USED_LOCK(?) AS holder', [
      columnsLockName(quote(url, t)),
    ]);
    if (held.holder !== null && ids.includes(Number(held.holder))) return true;
  }
  return false;
}

/**
 * Stops `run` (SIGSTOP) holding no lock on `url`: stopped holding one, it is let go on and stopped again.
 * `tables`: the sink's tables (results and errors), whose columns' locks it may hold.
 */
export async function stopHoldingNoLock(url: string, run: RunningCli, tables: readonly string[]): Promise<void> {
  const pid = run.child.pid!;
  await waitFor(
    async () => {
      run.child.kill('SIGSTOP');
      // Looked at twice: a statement written just before the stop may reach the server after the first look.
      if (!(await holdsLock(url, pid, tables)) && !(await holdsLock(url, pid, tables))) return true;
      run.child.kill('SIGCONT');
      return false;
    },
    60_000,
    'the worker stopped holding no lock',
  );
}

/**
 * Whether every connection of `pid` that is inside a transaction waits there for its next statement (PostgreSQL's
 * `idle in transaction`; MySQL's `Sleep` with an active InnoDB transaction): the state whose length the job's
 * batch bounds by the lease (docs/decisions/job-idle-in-transaction.md). A worker stopped in the middle of a
 * statement (between its messages, or inside a COPY) is not idle, and nothing ends its session.
 */
async function idleInTransaction(url: string, pid: number): Promise<boolean> {
  const ports = tcpPorts(pid);
  if (ports.length === 0) return false;
  if (url.startsWith('postgres')) {
    const [row] = await query<{ idle: string | number; busy: string | number }>(
      url,
      `SELECT count(*) FILTER (WHERE state = 'idle in transaction') AS idle,
              count(*) FILTER (WHERE state <> 'idle in transaction' AND xact_start IS NOT NULL) AS busy
         FROM pg_stat_activity WHERE client_port IN (${ports.join(', ')})`,
    );
    return Number(row.idle) > 0 && Number(row.busy) === 0;
  }
  const sessions = await mysqlSessions(url, ports);
  const inTransaction = new Set((await innodbTransactions(url)).filter((t) => t.active).map((t) => t.thread));
  const mine = sessions.filter((x) => inTransaction.has(x.id));
  return mine.length > 0 && mine.every((x) => x.command === 'Sleep');
}

/**
 * Stops `run` (SIGSTOP) at a moment it holds the row lock of one of its chunks of `job` (inside its sink batch's
 * transaction, behind the fence), idle there (`idleInTransaction`): a chunk it holds that a claim's SKIP LOCKED
 * passes over. Stopped elsewhere, it is let go on and stopped again. Returns the chunks it holds locked.
 */
export async function stopHoldingChunkLock(url: string, run: RunningCli, job: string): Promise<number[]> {
  const pid = run.child.pid!;
  const mine = `%:${pid}:%`;
  const chunks = async (lock: string) =>
    (
      await query<{ chunk: number | string }>(
        url,
        url.startsWith('postgres')
          ? `SELECT chunk FROM bre_batch_chunks WHERE job = $1 AND holder LIKE $2 AND state = 'held'${lock}`
          : `SELECT chunk FROM bre_batch_chunks WHERE job = ? AND holder LIKE ? AND state = 'held'${lock}`,
        [job, mine],
      )
    ).map((r) => Number(r.chunk));
  let locked: number[] = [];
  await waitFor(
    async () => {
      run.child.kill('SIGSTOP');
      const held = await chunks('');
      const free = new Set(await chunks(' FOR UPDATE SKIP LOCKED'));
      locked = held.filter((c) => !free.has(c));
      // Looked at twice, as in stopHoldingNoLock: a statement written just before the stop may reach the server
      // after the first look.
      if (locked.length > 0 && (await idleInTransaction(url, pid)) && (await idleInTransaction(url, pid))) return true;
      run.child.kill('SIGCONT');
      return false;
    },
    60_000,
    'the worker stopped holding a chunk locked',
  );
  return locked;
}
