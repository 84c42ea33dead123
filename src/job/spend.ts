/**
 * A job's spend and its cap, kept in the job's database beside its other tables (./schema.ts), in a table of
 * their own (made here, by its own statement): one row per worker session with what its billed calls cost,
 * and the job's row (worker '') with the cap (--max-spend, the last worker started with one sets it) and what
 * has been granted of it. A worker spends only what it was granted: it asks for a slice of the cap before its
 * rows need it, all or nothing in one UPDATE of the job's row (so two workers never take the same money), and
 * gives back what it did not spend when it ends. A worker killed keeps its last grant counted (at most one
 * slice) until the cap is raised, and its spend since its last report (a second) is not in the job's total.
 * A worker's row has its calls and their cost in all and per service (`workflow_calls`, `workflow_micros`, ...:
 * ../db/job-sql.ts SPEND_SERVICE_COLUMNS), added to a table made before them by `upgrade`.
 */
import { SERVICES, type ServiceName } from '@bre-batch/core/types';
import { SPEND_SERVICE_COLUMNS, spendServiceColumnDefs } from '../db/job-sql.js';
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
    /**
     * The per-service columns for a table made before them: the probe fails where any is missing, and only
     * then the ALTERs (which lock the table) run, one a column, so that a table holding some of them (made
     * before a service was added) gets the rest.
     */
    upgrade: {
      probe: `SELECT ${SPEND_SERVICE_COLUMNS.join(', ')} FROM ${t} WHERE 1 = 0`,
      add: spendServiceColumnDefs().map((d) => `ALTER TABLE ${t} ADD COLUMN ${d}`),
    },
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
    /**
     * $1 job, $2 worker, $3 currency, $4 calls, $5 micros, $6 granted, then each service's calls and micros
     * (SPEND_SERVICE_COLUMNS' order, from $7): a worker's figures.
     */
    report: store.sql.upsertSpend(
      t,
      ['job', 'worker', 'currency', 'calls', 'micros', 'granted', ...SPEND_SERVICE_COLUMNS],
      ['$1', '$2', '$3', '$4', '$5', '$6', ...SPEND_SERVICE_COLUMNS.map((_, i) => `$${i + 7}`)],
      ['currency', 'calls', 'micros', 'granted', ...SPEND_SERVICE_COLUMNS],
    ),
    /** $1 job: its workers' figures summed, per service too. */
    total: `SELECT coalesce(sum(calls), 0) AS calls, coalesce(sum(micros), 0) AS micros, count(*) AS workers, ${SPEND_SERVICE_COLUMNS.map((c) => `coalesce(sum(${c}), 0) AS ${c}`).join(', ')} FROM ${t} WHERE job = $1 AND worker <> ''`,
    /** $1 job: each worker session's figures. */
    byWorker: `SELECT worker, calls, micros FROM ${t} WHERE job = $1 AND worker <> ''`,
    /** The same without the per-service columns: a table no worker of this release has upgraded yet. */
    totalOnly: `SELECT coalesce(sum(calls), 0) AS calls, coalesce(sum(micros), 0) AS micros, count(*) AS workers FROM ${t} WHERE job = $1 AND worker <> ''`,
  };
}

/**
 * The table made where it is missing, and the per-service columns added to one an earlier release made: the
 * probe first, the ALTERs (which lock the table) only where it failed, a column already there passed over. Two
 * workers doing either at one moment: the second is told the table or a column exists (PostgreSQL may say so
 * with a unique violation on its catalog).
 */
export async function prepareSpendTable(store: JobStore): Promise<void> {
  const sql = jobSpendStatements(store);
  const raced = (err: unknown) =>
    store.dialect.classify(err) === 'exists' || (err as { code?: string }).code === '23505';
  try {
    await store.query(sql.create);
  } catch (err) {
    if (!raced(err)) throw err;
  }
  try {
    await store.query(sql.upgrade.probe);
    return;
  } catch (err) {
    if (store.dialect.classify(err) === 'lost') throw err;
  }
  for (const add of sql.upgrade.add) {
    try {
      await store.query(add);
    } catch (err) {
      if (!raced(err)) throw err;
    }
  }
}

/** A worker's figures per service, in the order of `report`'s parameters from $7. */
export function serviceParams(billed: Record<ServiceName, number>, micros: Record<ServiceName, number>): number[] {
  return SERVICES.flatMap((svc) => [billed[svc], micros[svc]]);
}

/** The job's spend as `job status` shows it. */
export interface JobSpendStatus {
  readonly currency: string;
  /** Calls billed and what they cost, in the currency's unit, over every worker session. */
  readonly calls: number;
  readonly spend: number;
  readonly cap: number | null;
  /**
   * Per service with a call billed: its calls and what they cost (absent when every worker's row predates the
   * per-service columns: then only the totals are known).
   */
  readonly services?: Partial<Record<ServiceName, { readonly calls: number; readonly spend: number }>>;
}

/** Reads the job's spend; undefined when no worker priced its calls. */
export async function readJobSpend(store: JobStore, name: string): Promise<JobSpendStatus | undefined> {
  const sql = jobSpendStatements(store);
  let cap: { cap: string | null; currency: string }[];
  let total: Record<string, string>[];
  let perService = true;
  try {
    cap = await store.query(sql.cap, [name]);
  } catch {
    // No table: no worker of any job in this database priced its calls.
    return undefined;
  }
  try {
    total = await store.query(sql.total, [name]);
  } catch {
    // A table made by an earlier release that no worker of this one has upgraded: the totals alone.
    total = await store.query(sql.totalOnly, [name]);
    perService = false;
  }
  const workers = Number(total[0]?.workers ?? 0);
  if (workers === 0 && cap.length === 0) return undefined;
  const currency = cap[0]?.currency ?? '';
  const services: NonNullable<JobSpendStatus['services']> = {};
  for (const svc of SERVICES) {
    const calls = Number(total[0]?.[`${svc}_calls`] ?? 0);
    const micros = Number(total[0]?.[`${svc}_micros`] ?? 0);
    if (calls > 0 || micros > 0) services[svc] = { calls, spend: micros / 1e6 };
  }
  return {
    currency,
    calls: Number(total[0]?.calls ?? 0),
    spend: Number(total[0]?.micros ?? 0) / 1e6,
    cap: cap[0]?.cap === null || cap[0]?.cap === undefined ? null : Number(cap[0].cap) / 1e6,
    ...(perService ? { services } : {}),
  };
}

/** What each worker's billed calls cost (in the currency's unit), by worker; empty when none priced its calls. */
export async function readWorkerSpend(
  store: JobStore,
  name: string,
): Promise<Map<string, { readonly calls: number; readonly spend: number }>> {
  const rows = await store
    .query<{ worker: string; calls: string; micros: string }>(jobSpendStatements(store).byWorker, [name])
    .catch(() => []);
  return new Map(rows.map((r) => [String(r.worker), { calls: Number(r.calls), spend: Number(r.micros) / 1e6 }]));
}
