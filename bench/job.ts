/**
 * `npm run bench -- --only job` (issue 30): a job's rows/s with 1, 2 and 4 workers, each on its own loopback
 * address at a strict per-address limit of the sandbox (the workers' own --rate equal to it), against N x one
 * worker's; 4 workers with one killed (-9) at half the rows, against the surviving capacity; and the database's
 * own cost of one chunk claim (FOR UPDATE SKIP LOCKED and the token's update), measured alone. The job's time is
 * the database's: from its split (started_at) to the commit of its last chunk (done_at).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { openSession, parseDbUrl, type DbSession } from '../src/db/index.js';
import { JobStore } from '../src/job/index.js';
import { CLI, CLIENT_ID, startSandboxProcess, TOKEN } from './harness.js';

const ADMIN = process.env.BRE_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ADDRESSES = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'];

interface JobRun {
  readonly workers: number;
  readonly rows: number;
  readonly seconds: number;
  readonly rows_per_s: number;
  readonly killed: boolean;
}

export interface JobBenchResult {
  readonly per_address_per_s: number;
  readonly runs: JobRun[];
  /** rows/s of N workers over N x one worker's. */
  readonly scaling: Record<string, number>;
  /** The run with one of 4 killed at half: rows/s over the capacity of the time (4 workers for half, 3 for the rest). */
  readonly killed_share: number;
  readonly claim_ms: { readonly claims: number; readonly mean: number; readonly p95: number };
}

async function admin<T>(work: (s: DbSession) => Promise<T>, url = ADMIN): Promise<T> {
  const s = await openSession(parseDbUrl(url, { flag: 'bench' }));
  try {
    return await work(s);
  } finally {
    await s.close();
  }
}

function worker(
  env: Record<string, string>,
  db: string,
  job: string,
  address: string,
  rate: number,
  out: string,
): ChildProcess {
  return spawn(
    process.execPath,
    [
      CLI,
      'run',
      'location',
      '--input',
      db,
      '--table',
      'apps',
      '--sink',
      db,
      '--job',
      job,
      '--job-chunk-rows',
      '50',
      '--job-lease',
      '3s',
      '--job-heartbeat',
      '1s',
      '--rate',
      `workflow=${rate}/s`,
      '--rate-slack',
      '2s',
      '--local-address',
      address,
      '--out',
      out,
      '--no-progress',
    ],
    { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'ignore'] },
  );
}

async function jobSeconds(db: string, job: string): Promise<number> {
  return admin(
    async (s) =>
      Number(
        (
          await s.query<{ t: string }>(
            'SELECT extract(epoch FROM done_at - started_at) AS t FROM bre_batch_jobs WHERE job = $1',
            [job],
          )
        ).rows[0].t,
      ),
    db,
  );
}

export async function benchJob(opts: {
  dir: string;
  rowsPerWorker: number;
  perSecond: number;
}): Promise<JobBenchResult> {
  const name = `bre_bench_job_${randomBytes(4).toString('hex')}`;
  await admin((s) => s.query(`CREATE DATABASE ${name}`));
  const db = ADMIN.replace(/\/[^/]*$/, `/${name}`);
  const sb = await startSandboxProcess([`workflow=${opts.perSecond}/s`]);
  const env = {
    BRE_BASE_URL: sb.url,
    BUREAU_BASE_URL: sb.url,
    ACCOUNT_BASE_URL: sb.url,
    BRE_CLIENT_ID: CLIENT_ID,
    BRE_AUTH_TOKEN: TOKEN,
  };
  const runs: JobRun[] = [];
  try {
    for (const [n, kill] of [
      [1, false],
      [2, false],
      [4, false],
      [4, true],
    ] as const) {
      const rows = opts.rowsPerWorker * n;
      await admin(async (s) => {
        await s.query('DROP TABLE IF EXISTS apps');
        await s.query(
          `CREATE TABLE apps AS SELECT 'K' || lpad(g::text, 7, '0') AS reference_id, 'u' || g AS user_id, 'l' || g AS lead_id, 12.97 AS latitude, 77.59 AS longitude FROM generate_series(1, ${rows}) g`,
        );
      }, db);
      const job = `bench-${n}${kill ? '-killed' : ''}`;
      const children = ADDRESSES.slice(0, n).map((a, i) =>
        worker(env, db, job, a, opts.perSecond, join(opts.dir, job, `w${i}`)),
      );
      if (kill) {
        // At half the rows, the last worker is killed: its chunk waits for its lease (3 s), then is taken over.
        for (;;) {
          const done = await admin(
            async (s) =>
              Number(
                (
                  await s.query<{ n: string }>(
                    'SELECT coalesce(sum(rows_results + rows_errors), 0) AS n FROM bre_batch_chunks WHERE job = $1',
                    [job],
                  )
                ).rows[0]?.n ?? 0,
              ),
            db,
          ).catch(() => 0);
          if (done >= rows / 2) break;
          await new Promise((r) => setTimeout(r, 100));
        }
        children[n - 1].kill('SIGKILL');
      }
      await Promise.all(
        children.map((c) => (c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : once(c, 'exit'))),
      );
      const seconds = await jobSeconds(db, job);
      runs.push({ workers: n, rows, seconds, rows_per_s: Math.round((rows / seconds) * 10) / 10, killed: kill });
    }
    // The database's own cost of a claim: a job of 500 chunks, claimed one after another by one store.
    const store = await JobStore.open({ url: parseDbUrl(db, { flag: 'bench' }), retryForMs: 10_000 });
    const times: number[] = [];
    try {
      await store.join(
        'claims',
        {
          sink_table: 'x',
          pipeline: { name: 'x', sha256: 'x' },
          input: { kind: 'database', identity: 'x' },
          key: 'k',
          rates: 'x',
        },
        async () =>
          Array.from({ length: 500 }, (_, i) => ({
            firstRow: i * 10 + 1,
            rows: 10,
            afterKey: null,
            byteStart: null,
            byteEnd: null,
          })),
      );
      for (let i = 0; i < 500; i += 1) {
        const t0 = performance.now();
        await store.claim('claims', 'bench', 60_000);
        times.push(performance.now() - t0);
      }
    } finally {
      await store.close();
    }
    times.sort((a, b) => a - b);
    const one = runs[0].rows_per_s;
    const killedRun = runs[3];
    const capacity = 4 * one * 0.5 + 3 * one * 0.5;
    return {
      per_address_per_s: opts.perSecond,
      runs,
      scaling: Object.fromEntries(
        runs
          .filter((r) => !r.killed)
          .map((r) => [String(r.workers), Math.round((r.rows_per_s / (r.workers * one)) * 1000) / 1000]),
      ),
      killed_share: Math.round((killedRun.rows_per_s / capacity) * 1000) / 1000,
      claim_ms: {
        claims: times.length,
        mean: Math.round((times.reduce((a, b) => a + b, 0) / times.length) * 100) / 100,
        p95: Math.round(times[Math.floor(times.length * 0.95)] * 100) / 100,
      },
    };
  } finally {
    sb.child.kill('SIGTERM');
    await admin((s) => s.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch(() => undefined);
  }
}
