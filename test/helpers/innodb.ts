/**
 * InnoDB's transactions as `SHOW ENGINE INNODB STATUS` lists them, read live. Not information_schema.innodb_trx:
 * that table is a cache the server refreshes only when no session has read it for 100 ms (MySQL bug 48883,
 * still so in MariaDB 10.11), so two test files polling it every 25 ms keep it stale for as long as both poll:
 * job/fence waited 30 s for a lock wait that had begun at once.
 */
import { query } from './sink.js';

export interface InnodbTransaction {
  /** The session's thread id (`CONNECTION_ID()`, processlist's id). */
  readonly thread: number;
  /** Inside a transaction (not "not started"). */
  readonly active: boolean;
  /** Waiting for a lock another transaction holds. */
  readonly lockWait: boolean;
}

/** The status text's transactions section parsed: one entry a session that has a transaction object. */
function parseInnodbTransactions(status: string): InnodbTransaction[] {
  const out: InnodbTransaction[] = [];
  for (const block of status.split(/^---TRANSACTION /m).slice(1)) {
    const thread = /(?:MariaDB|MySQL) thread id (\d+)/.exec(block);
    if (!thread) continue;
    const head = block.split('\n', 1)[0];
    out.push({ thread: Number(thread[1]), active: /\bACTIVE\b/.test(head), lockWait: /^LOCK WAIT /m.test(block) });
  }
  return out;
}

/** The server's InnoDB transactions, now (needs the PROCESS privilege, as the tests' root has). */
export async function innodbTransactions(url: string): Promise<InnodbTransaction[]> {
  const [row] = await query<{ Status: string }>(url, 'SHOW ENGINE INNODB STATUS');
  return parseInnodbTransactions(row.Status);
}
