/**
 * A job's spend and its cap, kept in the job's database beside its other tables (./schema.ts), in a table of
 * their own (made here, by its own statement): one row per worker session with what its billed calls cost,
 * and the job's row (worker '') with the cap (--max-spend, the last worker started with one sets it) and what
 * has been granted of it. A worker spends only what it was granted: it asks for a slice of the cap before its
 * rows need it, all or nothing in one UPDATE of the job's row (so two workers never take the same money), and
 * gives back what it did not spend when it ends. A worker killed keeps its last grant counted (at most one
 * slice) until the cap is raised, and its spend since its last report (a second) is not in the job's total.
 */
import type { JobStore } from './store.js';

const SPEND_TABLE = 'bre_batch_job_spend';

/**
 * The statements, for the store's dialect: its table and its upserts are the dialect's (src/db/pg-job.ts,
 * src/db/mysql-job.ts); the rest is standard SQL, bound by the store. Each is one statement on its own.
 */
export function jobSpendStatements(store: Pick<JobStore, 'dialect' | 'sql' | 'opts'>) {
  const t = store.dialect.table(SPEND_TABLE, store.opts.schema);
  return {
    create: store.sql.createSpend(t),
    /** $1 job, $2 cap, $3 currency: the job's row, its cap replaced. */
    setCap: store.sql.upsertSpend(
      t,
      ['job', 'worker', 'currency', 'cap'],
      ['$1', "''", '$3', '$2'],
      ['cap', 'currency'],
    ),
    /** $1 job: the cap, what is granted of it, its currency. */
    cap: `SELECT cap, granted, currency FROM ${t} WHERE job = $1 AND worker = ''`,
    /** $1 job, $2 amount: granted whole or not at all (the rows changed say which: 1 or 0). */
    grant: `UPDATE ${t} SET granted = granted + $2, updated_at = ${store.sql.now} WHERE job = $1 AND worker = '' AND cap IS NOT NULL AND granted + $2 <= cap`,
    /** $1 job, $2 amount: given back. */
    giveBack: `UPDATE ${t} SET granted = GREATEST(0, granted - $2), updated_at = ${store.sql.now} WHERE job = $1 AND worker = ''`,
    /** $1 job, $2 worker, $3 currency, $4 calls, $5 micros, $6 granted: a worker's figures. */
    report: store.sql.upsertSpend(
      t,
      ['job', 'worker', 'currency', 'calls', 'micros', 'granted'],
      ['$1', '$2', '$3', '$4', '$5', '$6'],
      ['currency', 'calls', 'micros', 'granted'],
    ),
    /** $1 job: its workers' figures summed. */
    total: `SELECT coalesce(sum(calls), 0) AS calls, coalesce(sum(micros), 0) AS micros, count(*) AS workers FROM ${t} WHERE job = $1 AND worker <> ''`,
  };
}

/** The job's spend as `job status` shows it. */
export interface JobSpendStatus {
  readonly currency: string;
  /** Calls billed and what they cost, in the currency's unit, over every worker session. */
  readonly calls: number;
  readonly spend: number;
  readonly cap: number | null;
}

/** Reads the job's spend; undefined when no worker priced its calls. */
export async function readJobSpend(store: JobStore, name: string): Promise<JobSpendStatus | undefined> {
  const sql = jobSpendStatements(store);
  let cap: { cap: string | null; currency: string }[];
  let total: { calls: string; micros: string; workers: string }[];
  try {
    cap = await store.query(sql.cap, [name]);
    total = await store.query(sql.total, [name]);
  } catch {
    // No table: no worker of any job in this database priced its calls.
    return undefined;
  }
  const workers = Number(total[0]?.workers ?? 0);
  if (workers === 0 && cap.length === 0) return undefined;
  const currency = cap[0]?.currency ?? '';
  return {
    currency,
    calls: Number(total[0]?.calls ?? 0),
    spend: Number(total[0]?.micros ?? 0) / 1e6,
    cap: cap[0]?.cap === null || cap[0]?.cap === undefined ? null : Number(cap[0].cap) / 1e6,
  };
}
