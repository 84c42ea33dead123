/**
 * `npm run bench -- --only job_claim`: the database's own cost of one chunk claim (src/db/pg-job.ts,
 * src/db/mysql-job.ts), on PostgreSQL and on MySQL/MariaDB in turn, each in a database of its own: a job of 500
 * chunks, one of 5,000, then 500 again with 200,000 chunks of an earlier job left done in the table, each
 * claimed one after another by one store (a claim and its commit, through JobStore as a worker makes it) until
 * none is left. A claim that reads its index costs the same at every size; one that walks the job's chunks
 * grows with it.
 */
import { randomBytes } from 'node:crypto';
import { openSession, parseDbUrl, type DbSession, type DialectName } from '../src/db/index.js';
import { JobStore } from '../src/job/index.js';
import { ADMIN } from './source.js';

interface ClaimTimes {
  readonly chunks: number;
  /** Chunks of an earlier job left done in the table before. */
  readonly done_before: number;
  readonly mean: number;
  readonly median: number;
  readonly p95: number;
  /** The last tenth of the claims: most chunks held before them. */
  readonly last_tenth_mean: number;
  /**
   * MySQL/MariaDB: index and table rows the server read per claim (the session's Handler_read_* counters), a
   * measure of the claim's work that the machine's load does not move; null on PostgreSQL.
   */
  readonly rows_read: number | null;
}

export interface ClaimBenchResult {
  readonly dialect: DialectName;
  readonly server: string;
  readonly claims: readonly ClaimTimes[];
  /** Median at 5,000 chunks over median at 500: 1 is flat. */
  readonly growth: number;
}

const DEFINITION = {
  sink_table: 'x',
  pipeline: { name: 'x', sha256: 'x' },
  input: { kind: 'database' as const, identity: 'x' },
  key: 'k',
  rates: 'x',
};

const plans = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    firstRow: i * 10 + 1,
    rows: 10,
    afterKey: null,
    byteStart: null,
    byteEnd: null,
  }));

async function admin<T>(url: string, work: (s: DbSession) => Promise<T>): Promise<T> {
  const s = await openSession(parseDbUrl(url, { flag: 'bench' }));
  try {
    return await work(s);
  } finally {
    await s.close();
  }
}

/** The session's Handler_read_* counters summed (MySQL/MariaDB), or null. */
async function rowsRead(store: JobStore): Promise<number | null> {
  if (store.dialect.name !== 'mysql') return null;
  const rows = await store.query<{ Variable_name: string; Value: string }>("SHOW SESSION STATUS LIKE 'Handler_read%'");
  return rows.reduce((n, r) => n + Number(r.Value), 0);
}

async function claimTimes(store: JobStore, chunks: number, history: number, label = ''): Promise<ClaimTimes> {
  const name = `claims-${chunks}-${history}${label}`;
  await store.join(name, DEFINITION, async () => plans(chunks));
  const times: number[] = [];
  const readBefore = await rowsRead(store);
  for (let i = 0; i < chunks; i += 1) {
    const t0 = performance.now();
    await store.claim(name, 'bench', 60_000);
    times.push(performance.now() - t0);
  }
  const readAfter = await rowsRead(store);
  const round = (x: number) => Math.round(x * 100) / 100;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const sorted = [...times].sort((a, b) => a - b);
  return {
    chunks,
    done_before: history,
    mean: round(mean(times)),
    median: round(sorted[Math.floor(sorted.length / 2)]),
    p95: round(sorted[Math.floor(sorted.length * 0.95)]),
    last_tenth_mean: round(mean(times.slice(Math.floor(chunks * 0.9)))),
    rows_read: readBefore === null || readAfter === null ? null : round((readAfter - readBefore) / chunks),
  };
}

export async function benchJobClaim(dialect: DialectName): Promise<ClaimBenchResult> {
  const name = `bre_bench_claim_${randomBytes(4).toString('hex')}`;
  const quoted = dialect === 'postgres' ? `"${name}"` : `\`${name}\``;
  await admin(ADMIN[dialect], (s) => s.query(`CREATE DATABASE ${quoted}`));
  const db = ADMIN[dialect].replace(/\/[^/]*$/, `/${name}`);
  try {
    const version = await admin(db, async (s) =>
      String((await s.query<{ v: string }>('SELECT version() AS v')).rows[0].v),
    );
    // `PostgreSQL 15.20 (Debian ...) on x86_64...`: its name and number; MariaDB's and MySQL's are their number alone.
    const server = dialect === 'postgres' ? version.split(' ').slice(0, 2).join(' ') : `MySQL/MariaDB ${version}`;
    const store = await JobStore.open({ url: parseDbUrl(db, { flag: 'bench' }), retryForMs: 10_000 });
    try {
      // Warm: the first claims of a new connection and new tables are not the claim's cost.
      await claimTimes(store, 200, 0, '-warm');
      const small = await claimTimes(store, 500, 0);
      const large = await claimTimes(store, 5000, 0);
      // A year of nightly jobs: their chunks left done in the table, through the job's own split.
      await store.join('history', DEFINITION, async () => plans(200_000));
      await store.query(`UPDATE ${store.tables.chunks} SET state = 'done' WHERE job = $1`, ['history']);
      await admin(db, (s) => s.query(`${dialect === 'postgres' ? 'ANALYZE' : 'ANALYZE TABLE'} ${store.tables.chunks}`));
      const history = await claimTimes(store, 500, 200_000);
      return {
        dialect,
        server,
        claims: [small, large, history],
        growth: Math.round((large.median / small.median) * 100) / 100,
      };
    } finally {
      await store.close();
    }
  } finally {
    await admin(ADMIN[dialect], (s) =>
      s.query(
        dialect === 'postgres' ? `DROP DATABASE IF EXISTS ${quoted} WITH (FORCE)` : `DROP DATABASE IF EXISTS ${quoted}`,
      ),
    ).catch(() => undefined);
  }
}
