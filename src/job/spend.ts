/**
 * A job's spend and its cap, kept in the job's database beside its other tables (./schema.ts), in a table of
 * their own (made here, by its own statement): one row per worker session with what its billed calls cost,
 * and the job's row (worker '') with the cap (--max-spend, the last worker started with one sets it) and what
 * has been granted of it. A worker spends only what it was granted: it asks for a slice of the cap before its
 * rows need it, all or nothing in one UPDATE of the job's row (so two workers never take the same money), and
 * gives back what it did not spend when it ends. A worker killed keeps its last grant counted (at most one
 * slice) until the cap is raised, and its spend since its last report (a second) is not in the job's total.
 *
 * The statements are PostgreSQL's; each is one statement on its own (no transaction), for a dialect to mirror.
 */
import type { Dialect } from '../db/index.js';
import type { JobStore } from './store.js';

const SPEND_TABLE = 'bre_batch_job_spend';
export function jobSpendTable(dialect: Dialect, schema: string | undefined): string {
  return dialect.table(SPEND_TABLE, schema);
}

/** The statements, apart, for each dialect to have its own. */
export function jobSpendStatements(t: string) {
  return {
    create: `CREATE TABLE IF NOT EXISTS ${t} (
      job text NOT NULL,
      worker text NOT NULL,
      currency text NOT NULL DEFAULT '',
      calls bigint NOT NULL DEFAULT 0,
      micros bigint NOT NULL DEFAULT 0,
      granted bigint NOT NULL DEFAULT 0,
      cap bigint,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (job, worker))`,
    /** $1 job, $2 cap, $3 currency: the job's row, its cap replaced. */
    setCap: `INSERT INTO ${t} (job, worker, currency, cap) VALUES ($1, '', $3, $2)
      ON CONFLICT (job, worker) DO UPDATE SET cap = EXCLUDED.cap, currency = EXCLUDED.currency, updated_at = now()`,
    /** $1 job: the cap, what is granted of it, its currency. */
    cap: `SELECT cap, granted, currency FROM ${t} WHERE job = $1 AND worker = ''`,
    /** $1 job, $2 amount: granted whole or not at all (no row back). */
    grant: `UPDATE ${t} SET granted = granted + $2, updated_at = now() WHERE job = $1 AND worker = '' AND cap IS NOT NULL AND granted + $2 <= cap RETURNING granted`,
    /** $1 job, $2 amount: given back. */
    giveBack: `UPDATE ${t} SET granted = GREATEST(0, granted - $2), updated_at = now() WHERE job = $1 AND worker = ''`,
    /** $1 job, $2 worker, $3 currency, $4 calls, $5 micros, $6 granted: a worker's figures. */
    report: `INSERT INTO ${t} (job, worker, currency, calls, micros, granted) VALUES ($1, $2, $3, $4, $5, $6)
      ON CONFLICT (job, worker) DO UPDATE SET currency = EXCLUDED.currency, calls = EXCLUDED.calls, micros = EXCLUDED.micros, granted = EXCLUDED.granted, updated_at = now()`,
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
  const sql = jobSpendStatements(jobSpendTable(store.dialect, store.opts.schema));
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
