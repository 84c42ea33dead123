/**
 * `bre-batch job verify NAME --sink URL`: a job checked from its database, since no one worker's folder holds it
 * (a worker's folder is scratch, src/pipeline/job.ts): the job done and every chunk done; the chunks' rows
 * adding up to the job's; and in the sink's tables, each of the job's rows once (in results or errors, not
 * both), each key once, as many rows as the chunks committed. Only statements both PostgreSQL and MariaDB/MySQL
 * take, through the store's query (its dialect quotes the names).
 */
import type { JobStore } from './store.js';

export interface JobVerifyReport {
  readonly job: string;
  readonly checked: string[];
  readonly problems: string[];
}

const n = (v: unknown): number => Number(v ?? 0);

/** `tables`: the sink's results and errors tables, qualified; undefined when the job is unknown. */
export async function verifyJob(
  store: JobStore,
  name: string,
  tables: { readonly results: string; readonly errors: string },
): Promise<JobVerifyReport | undefined> {
  const job = await store.job(name);
  if (!job) return undefined;
  const q = (id: string) => store.dialect.quote(id);
  const r: JobVerifyReport = { job: name, checked: [], problems: [] };
  if (job.state !== 'done') r.problems.push(`the job is not done: it is ${job.state}`);
  const chunks = await store.query<Record<string, unknown>>(
    `SELECT chunk, state, rows_results, rows_errors FROM ${store.tables.chunks} WHERE job = $1 ORDER BY chunk`,
    [name],
  );
  const open = chunks.filter((c) => c.state !== 'done').map((c) => n(c.chunk));
  if (chunks.length !== job.chunks)
    r.problems.push(`the job was split into ${job.chunks} chunks; ${chunks.length} are in its table`);
  if (open.length > 0)
    r.problems.push(
      `${open.length} chunks not done: ${open.slice(0, 10).join(', ')}${open.length > 10 ? ', ...' : ''}`,
    );
  const committed = {
    results: chunks.reduce((s, c) => s + n(c.rows_results), 0),
    errors: chunks.reduce((s, c) => s + n(c.rows_errors), 0),
  };
  if (committed.results + committed.errors !== job.rows)
    r.problems.push(
      `the chunks committed ${committed.results} results and ${committed.errors} errors: ${committed.results + committed.errors} rows of the job's ${job.rows}`,
    );
  r.checked.push(`${chunks.length} chunks: done, their rows adding up to the job's ${job.rows}`);
  const row = q('row');
  const key = q(job.definition.key);
  for (const [what, table] of [
    ['results', tables.results],
    ['errors', tables.errors],
  ] as const) {
    const [c] = await store.query<Record<string, unknown>>(
      `SELECT count(*) AS n, count(DISTINCT ${row}) AS nrows, count(DISTINCT ${key}) AS nkeys FROM ${table} WHERE ${row} <= $1`,
      [job.rows],
    );
    if (n(c.n) !== committed[what])
      r.problems.push(`${table} holds ${n(c.n)} of the job's rows; its chunks committed ${committed[what]}`);
    if (n(c.nrows) !== n(c.n)) r.problems.push(`${table}: ${n(c.n) - n(c.nrows)} rows held more than once`);
    if (n(c.nkeys) !== n(c.n)) r.problems.push(`${table}: ${n(c.n) - n(c.nkeys)} keys held more than once`);
    r.checked.push(`${table}: ${n(c.n)} rows, each row and key once`);
  }
  const [both] = await store.query<Record<string, unknown>>(
    `SELECT count(*) AS n FROM ${tables.results} r WHERE r.${row} <= $1 AND EXISTS (SELECT 1 FROM ${tables.errors} e WHERE e.${row} = r.${row})`,
    [job.rows],
  );
  if (n(both.n) > 0) r.problems.push(`${n(both.n)} rows are in both ${tables.results} and ${tables.errors}`);
  return r;
}

export function formatJobVerify(r: JobVerifyReport): string {
  return [
    r.problems.length === 0
      ? `verified job ${r.job}: every chunk done, every row and key once`
      : `job ${r.job}: ${r.problems.length} difference${r.problems.length === 1 ? '' : 's'}`,
    ...r.problems.map((p) => `  DIFFERS: ${p}`),
    ...r.checked.map((c) => `  checked: ${c}`),
  ].join('\n');
}
