/**
 * A job as a whole, from its tables alone (any host, any time): chunks done, held (by whom, since when) and
 * waiting; rows done and in errors; each worker's rate as it last reported it and whether it is alive (seen
 * within its lease); rows sent again after takeovers; an ETA from the live workers' combined rate; and
 * --plan's question for what is left: does it fit the window with the workers now running, or how many more
 * addresses it needs. `job report` adds the errors by code and the workers' totals.
 */
import { definitionOf } from './definition.js';
import { readJobSpend, readWorkerSpend, type JobSpendStatus } from './spend.js';
import type { JobStore } from './store.js';

interface HeldChunkStatus {
  readonly chunk: number;
  readonly holder: string;
  readonly since: string;
  readonly leaseUntil: string;
  readonly position: number;
  readonly rows: number;
}

interface WorkerStatus {
  readonly worker: string;
  readonly address: string | null;
  readonly state: string;
  readonly alive: boolean;
  readonly rate: number;
  readonly rowsDone: number;
  /** Chunks whose last row this worker committed: a faster worker has more. */
  readonly chunksDone: number;
  readonly seenAt: string;
  /** --price: what this worker's billed calls cost (its session's, in the job's currency). */
  readonly spend?: { readonly calls: number; readonly spend: number };
}

export interface JobStatus {
  readonly job: string;
  readonly state: string;
  readonly pipeline: string;
  readonly rows: number;
  readonly chunks: { readonly total: number; readonly done: number; readonly held: number; readonly waiting: number };
  readonly held: readonly HeldChunkStatus[];
  readonly results: number;
  readonly errors: number;
  readonly resent: number;
  readonly takeovers: number;
  readonly workers: readonly WorkerStatus[];
  /** Rows per second of the live workers together. */
  readonly rate: number;
  /** Seconds to the end at that rate; null when nothing runs (or nothing is left: 0). */
  readonly etaSeconds: number | null;
  readonly startedAt: string | null;
  readonly doneAt: string | null;
  /** --price: what the job's billed calls cost, every worker session together (per service too), and the job's cap. */
  readonly spend?: JobSpendStatus;
  /** With a window: whether what is left fits it, and how many more addresses it needs if not. */
  readonly plan?: { readonly windowHours: number; readonly fits: boolean; readonly moreAddresses: number };
}

/** Reads the job's status; undefined when no worker has started it. */
export async function readJobStatus(
  store: JobStore,
  name: string,
  windowHours?: number,
): Promise<JobStatus | undefined> {
  const t = store.tables;
  const now = store.sql.now;
  const job = (
    await store.query<Record<string, unknown>>(
      `SELECT state, ${t.rows} AS n, chunks, definition, started_at, done_at FROM ${t.jobs} WHERE job = $1`,
      [name],
    )
  )[0];
  if (!job) return undefined;
  const count = (when: string) => `coalesce(sum(CASE WHEN ${when} THEN 1 ELSE 0 END), 0)`;
  const agg = (
    await store.query<Record<string, unknown>>(
      `SELECT ${count("state = 'done'")} AS done, ${count(`state = 'held' AND lease_until >= ${now}`)} AS held,
            ${count(`state = 'waiting' OR (state = 'held' AND lease_until < ${now})`)} AS waiting,
            coalesce(sum(rows_results), 0) AS results, coalesce(sum(rows_errors), 0) AS errors, coalesce(sum(resent), 0) AS resent, coalesce(sum(takeovers), 0) AS takeovers
     FROM ${t.chunks} WHERE job = $1`,
      [name],
    )
  )[0];
  const held = await store.query<Record<string, unknown>>(
    `SELECT chunk, holder, claimed_at, lease_until, position, ${t.rows} AS n FROM ${t.chunks} WHERE job = $1 AND state = 'held' AND lease_until >= ${now} ORDER BY chunk`,
    [name],
  );
  // The rows committed in the chunks a worker holds or finished: what its heartbeat reports may be a beat
  // behind (its first comes before any row), the commits are not.
  const workers = await store.query<Record<string, unknown>>(
    `SELECT worker, address, state, rate, rows_done, seen_at, started_at, ${now} AS db_now, (CASE WHEN state = 'working' AND ${store.sql.later('seen_at', 'lease_ms')} >= ${now} THEN 1 ELSE 0 END) AS alive,
       (SELECT count(*) FROM ${t.chunks} c WHERE c.job = w.job AND c.state = 'done' AND c.done_by = w.worker) AS chunks_done,
       (SELECT coalesce(sum(c.rows_results + c.rows_errors), 0) FROM ${t.chunks} c WHERE c.job = w.job
          AND ((c.state = 'held' AND c.holder = w.worker) OR (c.state = 'done' AND c.done_by = w.worker))) AS committed
     FROM ${t.workers} w WHERE job = $1 ORDER BY started_at, worker`,
    [name],
  );
  const spend = await readJobSpend(store, name);
  const workerSpend = spend ? await readWorkerSpend(store, name) : new Map();
  const ws: WorkerStatus[] = workers.map((w) => {
    const alive = Number(w.alive) === 1;
    const committed = Number(w.committed);
    const since = (Date.parse(instant(w.db_now)) - Date.parse(instant(w.started_at))) / 1000;
    return {
      worker: String(w.worker),
      address: (w.address as string | null) ?? null,
      state: String(w.state),
      alive,
      // Before its heartbeat has measured a rate, a live worker's commits over its time so far.
      rate: Number(w.rate) > 0 || !alive ? Number(w.rate) : committed > 0 && since > 0 ? committed / since : 0,
      rowsDone: Math.max(Number(w.rows_done), committed),
      chunksDone: Number(w.chunks_done),
      seenAt: instant(w.seen_at),
      ...(workerSpend.has(String(w.worker)) ? { spend: workerSpend.get(String(w.worker)) } : {}),
    };
  });
  const rows = Number(job.n);
  const results = Number(agg.results);
  const errors = Number(agg.errors);
  const rate = ws.filter((w) => w.alive).reduce((n, w) => n + w.rate, 0);
  const left = Math.max(0, rows - results - errors);
  const status: JobStatus = {
    job: name,
    state: String(job.state),
    pipeline: String(definitionOf(job.definition).pipeline?.name ?? ''),
    rows,
    chunks: { total: Number(job.chunks), done: Number(agg.done), held: Number(agg.held), waiting: Number(agg.waiting) },
    held: held.map((h) => ({
      chunk: Number(h.chunk),
      holder: String(h.holder),
      since: instant(h.claimed_at),
      leaseUntil: instant(h.lease_until),
      position: Number(h.position),
      rows: Number(h.n),
    })),
    results,
    errors,
    resent: Number(agg.resent),
    takeovers: Number(agg.takeovers),
    workers: ws,
    rate,
    etaSeconds: left === 0 ? 0 : rate > 0 ? left / rate : null,
    startedAt: job.started_at === null ? null : instant(job.started_at),
    doneAt: job.done_at === null ? null : instant(job.done_at),
    ...(spend ? { spend } : {}),
  };
  return windowHours === undefined
    ? status
    : {
        ...status,
        plan: planFor(
          left,
          ws.filter((w) => w.alive),
          windowHours,
        ),
      };
}

/**
 * A time of the job's tables as ISO text with its offset: PostgreSQL's timestamptz has one; MySQL's DATETIME,
 * written in the session's UTC, has none, and would be read as local time.
 */
function instant(value: unknown): string {
  const text = String(value);
  return /(Z|[+-]\d{2}(:?\d{2})?)$/.test(text) ? text : `${text}Z`;
}

/**
 * --plan's question for the rest: the live workers' combined rate over the window, against the rows left. Short
 * of it, more addresses at the live workers' mean rate (each address is a worker at its own per-IP limit).
 */
export function planFor(
  left: number,
  alive: readonly { rate: number }[],
  windowHours: number,
): NonNullable<JobStatus['plan']> {
  const seconds = windowHours * 3600;
  const rate = alive.reduce((n, w) => n + w.rate, 0);
  if (left === 0 || rate * seconds >= left) return { windowHours, fits: true, moreAddresses: 0 };
  // No worker alive: one address's rate is not known here; at least one is needed.
  if (alive.length === 0 || rate === 0) return { windowHours, fits: false, moreAddresses: Math.max(1, alive.length) };
  const each = rate / alive.length;
  return { windowHours, fits: false, moreAddresses: Math.ceil(left / (each * seconds)) - alive.length };
}

function duration(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

/** An amount as the run's summary writes it: two decimals at least, a price's own when it has more. */
const AMOUNT = new Intl.NumberFormat('en-US', {
  minimumFractionDigits: 2,
  maximumFractionDigits: 6,
  useGrouping: false,
});

/** The status as a person reads it. */
export function formatJobStatus(s: JobStatus): string {
  const pct = (n: number) => (s.rows === 0 ? '100' : ((100 * n) / s.rows).toFixed(1));
  const lines = [
    `Job ${s.job} (pipeline ${s.pipeline}): ${s.state}`,
    `  chunks: ${s.chunks.done} done, ${s.chunks.held} held, ${s.chunks.waiting} waiting (of ${s.chunks.total})`,
    `  rows: ${s.results + s.errors} of ${s.rows} done (${pct(s.results + s.errors)}%): ${s.results} results, ${s.errors} in errors`,
    `  re-sent after takeovers: ${s.resent} row${s.resent === 1 ? '' : 's'} (${s.takeovers} takeover${s.takeovers === 1 ? '' : 's'})`,
  ];
  for (const h of s.held)
    lines.push(
      `  chunk ${h.chunk}: held by ${h.holder} since ${h.since}, ${h.position} of ${h.rows} rows committed in order, lease until ${h.leaseUntil}`,
    );
  const alive = s.workers.filter((w) => w.alive);
  lines.push(
    `  workers: ${alive.length} running${s.workers.length > alive.length ? `, ${s.workers.length - alive.length} gone or finished` : ''}`,
  );
  const money = (units: number) => `${AMOUNT.format(units)}${s.spend?.currency ? ` ${s.spend.currency}` : ''}`;
  for (const w of s.workers) {
    const spent = w.spend ? `, ${money(w.spend.spend)} spent` : '';
    lines.push(
      `    ${w.worker}${w.address ? ` (${w.address})` : ''}: ${w.alive ? `${(w.rate * 60).toFixed(0)} rows/min` : w.state === 'working' ? `not seen since ${w.seenAt}` : w.state}, ${w.rowsDone} rows done, ${w.chunksDone} chunk${w.chunksDone === 1 ? '' : 's'} finished${spent}`,
    );
  }
  if (s.spend) {
    const sp = s.spend;
    const cap = sp.cap === null ? '' : `; --max-spend ${money(sp.cap)}, ${money(Math.max(0, sp.cap - sp.spend))} left`;
    lines.push(`  spend: ${money(sp.spend)} (${sp.calls} calls billed, every worker)${cap}`);
    for (const [svc, x] of Object.entries(sp.services ?? {}))
      lines.push(`    ${svc}: ${x.calls} calls billed, ${money(x.spend)}`);
  }
  if (s.state === 'done') {
    lines.push(`  done at ${s.doneAt}`);
  } else {
    lines.push(
      s.etaSeconds === null
        ? '  ETA: none (no worker running)'
        : `  ETA: ${duration(s.etaSeconds)} at ${(s.rate * 60).toFixed(0)} rows/min combined`,
    );
    if (s.plan) {
      lines.push(
        s.plan.fits
          ? `  plan: fits the ${s.plan.windowHours} h window with the workers now running`
          : `  plan: does not fit the ${s.plan.windowHours} h window: needs ${s.plan.moreAddresses} more address${s.plan.moreAddresses === 1 ? '' : 'es'} (start that many more workers, each on its own egress IP)`,
      );
    }
  }
  return lines.join('\n');
}

export interface JobReport extends JobStatus {
  /** Rows in the sink's errors table by code (rows of this job's range). */
  readonly errorsByCode: Readonly<Record<string, number>>;
}

/** The report: the status, and the errors by code from the sink's errors table. */
export async function readJobReport(
  store: JobStore,
  name: string,
  errorsTable: string,
): Promise<JobReport | undefined> {
  const status = await readJobStatus(store, name);
  if (!status) return undefined;
  const codes = await store
    .query<{ code: string | null; n: string }>(
      `SELECT code, count(*) AS n FROM ${errorsTable} WHERE ${store.dialect.quote('row')} <= $1 GROUP BY code ORDER BY code`,
      [status.rows],
    )
    .catch(() => []);
  return { ...status, errorsByCode: Object.fromEntries(codes.map((c) => [c.code ?? 'null', Number(c.n)])) };
}

export function formatJobReport(r: JobReport): string {
  const lines = [formatJobStatus(r)];
  const started = r.startedAt ? Date.parse(r.startedAt) : NaN;
  const ended = r.doneAt ? Date.parse(r.doneAt) : NaN;
  if (Number.isFinite(started) && Number.isFinite(ended) && ended > started) {
    const secs = (ended - started) / 1000;
    lines.push(
      `  took ${duration(secs)}: ${(((r.results + r.errors) / secs) * 60).toFixed(0)} rows/min over the whole job`,
    );
  }
  const codes = Object.entries(r.errorsByCode);
  if (codes.length > 0) lines.push(`  errors by code: ${codes.map(([c, n]) => `${c} ${n}`).join(', ')}`);
  return lines.join('\n');
}
