/**
 * `npm run bench -- --only job` (issue 30): a job's rows/s with 1, 2 and 4 workers, each on its own loopback
 * address at a strict per-address limit of the sandbox (the workers' own --rate equal to it), against N x one
 * worker's; 4 workers with one killed (-9) at half the rows, against the surviving capacity. The database's own
 * cost of one chunk claim is measured alone, on both dialects, by ./job-claim.ts (`--only job_claim`).
 *
 * Times are the database's. Two measures, both from the same runs:
 * - from the split: the job's rows over the time from its split (started_at) to the commit of its last chunk
 *   (done_at), against N x one worker's measured the same way. Every worker starts at once, so the workers'
 *   start-up after the first one's split counts against the job (N Node processes starting on the bench's cores).
 * - per worker present: the job's rows over the worker-seconds of its workers, each from its joining (its first
 *   heartbeat, just before its first claim) to the job's end (a killed one: to its kill), against one worker's
 *   rows/s measured the same way. Start-up is left out, everything after a worker joined counts: claims, the
 *   chunks' tail (a worker idle at the end while another finishes its last chunk), a dead worker's chunk waiting
 *   for its lease and the rows sent again.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { openSession, parseDbUrl, type DbSession } from '../src/db/index.js';
import { CLI, CLIENT_ID, startSandboxProcess, TOKEN } from './harness.js';

const ADMIN = process.env.BRE_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ADDRESSES = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'];

interface JobRun {
  readonly workers: number;
  readonly rows: number;
  /** From the split to the last commit. */
  readonly seconds: number;
  readonly rows_per_s: number;
  readonly killed: boolean;
  /** Each worker's joining after the split, s (start-up, on the bench's shared cores). */
  readonly joined_after_s: number[];
  /** Seconds of the workers present: each from its joining to the job's end (a killed one: to its kill). */
  readonly worker_seconds: number;
  /** The kill, s after the split (the killed run). */
  readonly killed_at_s: number | null;
  /** Chunks finished by each worker (`done_by`), in the order of their addresses. */
  readonly chunks: number[];
}

export interface JobBenchResult {
  readonly per_address_per_s: number;
  readonly runs: JobRun[];
  /** From the split: rows/s of N workers over N x one worker's. */
  readonly scaling: Record<string, number>;
  /** Per worker present: rows per worker-second over one worker's. */
  readonly scaling_present: Record<string, number>;
  /** From the split, the run with one of 4 killed at half: rows over what 4 workers until the kill, then 3, do at one worker's rate. */
  readonly killed_share: number;
  /** The same per worker present. */
  readonly killed_share_present: number;
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

/** The job's times from its tables: its split and end, and each worker's joining and chunks, by address. */
async function jobTimes(
  db: string,
  job: string,
): Promise<{ start: number; end: number; workers: Map<string, { joined: number; chunks: number }> }> {
  return admin(async (s) => {
    const j = (
      await s.query<{ s: string; e: string }>(
        'SELECT extract(epoch FROM started_at) AS s, extract(epoch FROM done_at) AS e FROM bre_batch_jobs WHERE job = $1',
        [job],
      )
    ).rows[0];
    const ws = (
      await s.query<{ address: string; joined: string; chunks: string }>(
        `SELECT w.address, extract(epoch FROM w.started_at) AS joined,
           (SELECT count(*) FROM bre_batch_chunks c WHERE c.job = w.job AND c.state = 'done' AND c.done_by = w.worker) AS chunks
         FROM bre_batch_workers w WHERE w.job = $1`,
        [job],
      )
    ).rows;
    return {
      start: Number(j.s),
      end: Number(j.e),
      workers: new Map(ws.map((w) => [w.address, { joined: Number(w.joined), chunks: Number(w.chunks) }])),
    };
  }, db);
}

async function dbNow(db: string): Promise<number> {
  return admin(
    async (s) => Number((await s.query<{ t: string }>('SELECT extract(epoch FROM now()) AS t')).rows[0].t),
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
      let killedAt: number | null = null;
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
        killedAt = await dbNow(db);
      }
      await Promise.all(
        children.map((c) => (c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : once(c, 'exit'))),
      );
      const t = await jobTimes(db, job);
      const addresses = ADDRESSES.slice(0, n);
      const joined = addresses.map((a) => t.workers.get(a)?.joined ?? t.end);
      const present = joined.reduce(
        (sum, j, i) => sum + Math.max(0, (kill && i === n - 1 && killedAt !== null ? killedAt : t.end) - j),
        0,
      );
      const seconds = t.end - t.start;
      runs.push({
        workers: n,
        rows,
        seconds: Math.round(seconds * 1000) / 1000,
        rows_per_s: Math.round((rows / seconds) * 10) / 10,
        killed: kill,
        joined_after_s: joined.map((j) => Math.round((j - t.start) * 100) / 100),
        worker_seconds: Math.round(present * 100) / 100,
        killed_at_s: killedAt === null ? null : Math.round((killedAt - t.start) * 100) / 100,
        chunks: addresses.map((a) => t.workers.get(a)?.chunks ?? 0),
      });
    }
    const ratio = (x: number) => Math.round(x * 1000) / 1000;
    const one = runs[0];
    const oneSplit = one.rows / one.seconds;
    const onePresent = one.rows / one.worker_seconds;
    const killedRun = runs[3];
    const killedAt = killedRun.killed_at_s ?? killedRun.seconds / 2;
    const capacity = oneSplit * (4 * killedAt + 3 * (killedRun.seconds - killedAt));
    return {
      per_address_per_s: opts.perSecond,
      runs,
      scaling: Object.fromEntries(
        runs
          .filter((r) => !r.killed)
          .map((r) => [String(r.workers), ratio(r.rows / r.seconds / (r.workers * oneSplit))]),
      ),
      scaling_present: Object.fromEntries(
        runs.filter((r) => !r.killed).map((r) => [String(r.workers), ratio(r.rows / r.worker_seconds / onePresent)]),
      ),
      killed_share: ratio(killedRun.rows / capacity),
      killed_share_present: ratio(killedRun.rows / killedRun.worker_seconds / onePresent),
    };
  } finally {
    sb.child.kill('SIGTERM');
    await admin((s) => s.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch(() => undefined);
  }
}
