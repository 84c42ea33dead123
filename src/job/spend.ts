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
import type { SpendMeter } from '../limits/spend.js';
import type { JobStore } from './store.js';

const SPEND_TABLE = 'bre_batch_job_spend';
/** How often a worker writes its spend into the job's table (job status shows it). */
const REPORT_MS = 1000;

function jobSpendTable(dialect: Dialect, schema: string | undefined): string {
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

/** A worker's side: its meter's cap is what it was granted of the job's; its spend is reported to the job. */
export class JobSpend {
  readonly #sql: ReturnType<typeof jobSpendStatements>;
  #granted = 0;
  #timer: NodeJS.Timeout | undefined;
  #reporting: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: JobStore,
    private readonly name: string,
    private readonly worker: string,
    private readonly meter: SpendMeter,
  ) {
    this.#sql = jobSpendStatements(jobSpendTable(store.dialect, store.opts.schema));
  }

  /**
   * Makes the table, sets the cap when this worker was given one (it replaces the job's), and puts the meter
   * under the job's cap when there is one: it starts with nothing granted and asks as rows need it.
   */
  async start(cap: number | undefined): Promise<void> {
    try {
      await this.store.query(this.#sql.create);
    } catch (err) {
      // Two workers making the table at one moment: PostgreSQL may say so with a unique violation on its catalog.
      if ((err as { code?: string }).code !== '23505') throw err;
    }
    if (cap !== undefined) await this.store.query(this.#sql.setCap, [this.name, cap, this.meter.prices.currency]);
    const row = (await this.store.query<{ cap: string | null }>(this.#sql.cap, [this.name]))[0];
    if (row && row.cap !== null) {
      this.meter.capMicros = 0;
      this.meter.jobCapMicros = Number(row.cap);
      this.meter.topUp = () => this.#topUp();
    }
    await this.#report();
    this.#timer = setInterval(() => {
      this.#reporting = this.#reporting.then(() => this.#report()).catch(() => undefined);
    }, REPORT_MS);
    this.#timer.unref();
  }

  /**
   * A slice of what the job's cap has left: a few dozen rows' worth, or a hundredth of the cap, whichever is
   * more; smaller ones when that much is not left, down to one row's. False when not even that is.
   */
  async #topUp(): Promise<boolean> {
    const row = Math.max(1, this.meter.rowMicros);
    const capRow = (await this.store.query<{ cap: string | null }>(this.#sql.cap, [this.name]))[0];
    const cap = capRow?.cap === null || capRow?.cap === undefined ? 0 : Number(capRow.cap);
    this.meter.jobCapMicros = cap;
    let want = Math.max(row * 32, Math.ceil(cap / 100));
    for (;;) {
      const got = await this.store.query(this.#sql.grant, [this.name, want]);
      if (got.length > 0) {
        this.#granted += want;
        this.meter.capMicros = this.#granted;
        await this.#report();
        return true;
      }
      if (want === row) break;
      want = Math.max(row, Math.floor(want / 2));
    }
    return false;
  }

  #report(): Promise<void> {
    const m = this.meter;
    const calls = m.session.billed.workflow + m.session.billed.bureau + m.session.billed.account;
    return this.store
      .query(this.#sql.report, [this.name, this.worker, m.prices.currency, calls, m.sessionMicros, this.#granted])
      .then(() => undefined);
  }

  /** The last figures written, and what was granted and not spent given back to the job. */
  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await this.#reporting.catch(() => undefined);
    const unused = Math.max(0, this.#granted - this.meter.sessionMicros);
    if (unused > 0 && this.meter.topUp) {
      await this.store.query(this.#sql.giveBack, [this.name, unused]);
      this.#granted -= unused;
    }
    await this.#report();
  }
}
