/**
 * A job's worker's side of its spend (the job's table: src/job/spend.ts): its meter's cap is what it was
 * granted of the job's cap; its spend is reported to the job every second and at its end.
 */
import { jobSpendStatements, prepareSpendTable, serviceParams } from '../job/spend.js';
import type { JobStore } from '../job/index.js';
import type { SpendMeter } from '../limits/spend.js';

/** How often a worker writes its spend into the job's table (job status shows it). */
const REPORT_MS = 1000;

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
    this.#sql = jobSpendStatements(store);
  }

  /**
   * Makes the table, sets the cap when this worker was given one (it replaces the job's), and puts the meter
   * under the job's cap when there is one: it starts with nothing granted and asks as rows need it.
   */
  async start(cap: number | undefined): Promise<void> {
    await prepareSpendTable(this.store);
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
      if ((await this.store.count(this.#sql.grant, [this.name, want])) > 0) {
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
      .query(this.#sql.report, [
        this.name,
        this.worker,
        m.prices.currency,
        calls,
        m.sessionMicros,
        this.#granted,
        ...serviceParams(m.session.billed, m.session.micros),
      ])
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
