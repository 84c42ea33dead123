/**
 * A job's store on PostgreSQL (./job-sql.ts): partial indexes of the waiting and the held chunks, a claim in one
 * statement (FOR UPDATE SKIP LOCKED in CTEs, UPDATE ... RETURNING), a split's chunks inserted by unnest.
 */
import type { ChunkInsert, JobSql, JobTableNames } from './job-sql.js';
import { CHUNK_COUNT_COLUMNS, CLAIMED_COLUMNS, spendServiceColumnDefs } from './job-sql.js';
import type { DbSession } from './session.js';
import type { Failure } from './failure.js';

/** The claim's indexes: the waiting chunks and the held ones, each in chunk order. */
const INDEXES = [
  ['bre_batch_chunks_waiting', 'waiting'],
  ['bre_batch_chunks_held', 'held'],
] as const;

function createTables(t: JobTableNames): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${t.jobs} (
      job text PRIMARY KEY,
      definition jsonb NOT NULL,
      state text NOT NULL,
      chunks integer NOT NULL DEFAULT 0,
      rows bigint NOT NULL DEFAULT 0,
      retries integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      started_at timestamptz,
      done_at timestamptz)`,
    `CREATE TABLE IF NOT EXISTS ${t.chunks} (
      job text NOT NULL,
      chunk integer NOT NULL,
      first_row bigint NOT NULL,
      rows integer NOT NULL,
      after_key text,
      byte_start bigint,
      byte_end bigint,
      first_line bigint,
      state text NOT NULL DEFAULT 'waiting',
      holder text,
      token bigint NOT NULL DEFAULT 0,
      lease_until timestamptz,
      claimed_at timestamptz,
      committed bytea,
      ${CHUNK_COUNT_COLUMNS},
      done_at timestamptz,
      done_by text,
      PRIMARY KEY (job, chunk))`,
    `CREATE TABLE IF NOT EXISTS ${t.workers} (
      job text NOT NULL,
      worker text NOT NULL,
      host text NOT NULL,
      address text,
      state text NOT NULL,
      started_at timestamptz NOT NULL DEFAULT now(),
      seen_at timestamptz NOT NULL DEFAULT now(),
      rows_done bigint NOT NULL DEFAULT 0,
      rate double precision NOT NULL DEFAULT 0,
      chunks integer NOT NULL DEFAULT 0,
      lease_ms integer NOT NULL DEFAULT 60000,
      PRIMARY KEY (job, worker))`,
  ];
}

/**
 * Columns added since the tables were first made, each a probe (fails when the column is missing) and the
 * statement adding it: the ALTER, which locks the whole table, runs only where the probe failed, not at every
 * worker's start while others commit.
 */
function upgrades(t: JobTableNames): { readonly probe: string; readonly add: string }[] {
  return [
    // Chunks made before file inputs were split were a database's, which need no line.
    {
      probe: `SELECT first_line FROM ${t.chunks} LIMIT 0`,
      add: `ALTER TABLE ${t.chunks} ADD COLUMN IF NOT EXISTS first_line bigint`,
    },
    // Chunks finished before the worker that finished them was recorded: job status counts none for anyone.
    {
      probe: `SELECT done_by FROM ${t.chunks} LIMIT 0`,
      add: `ALTER TABLE ${t.chunks} ADD COLUMN IF NOT EXISTS done_by text`,
    },
  ];
}

export function pgJob(p: {
  readonly quote: (id: string) => string;
  readonly table: (name: string, schema?: string) => string;
  readonly classify: (err: unknown) => Failure;
}): JobSql {
  /**
   * Two workers making a table or an index at one moment: IF NOT EXISTS does not hold between them; PostgreSQL
   * says so with a unique violation on its catalog, or that the table's type exists.
   */
  const raced = (err: unknown) =>
    p.classify(err) === 'exists' || (p.classify(err) !== 'lost' && (err as { code?: string }).code === '23505');
  return {
    now: 'now()',
    later: (instant, ms) => `(${instant} + ${ms} * interval '1 millisecond')`,
    bind: (sql, params) => ({ sql, params }),
    async prepare(session: DbSession, t: JobTableNames) {
      for (const sql of createTables(t)) {
        try {
          await session.query(sql);
        } catch (err) {
          if (!raced(err)) throw err;
        }
      }
      for (const u of upgrades(t)) {
        try {
          await session.query(u.probe);
        } catch (err) {
          if (p.classify(err) === 'lost') throw err;
          await session.query(u.add);
        }
      }
      // Partial: a claim reads the lowest waiting chunk (or a held one whose lease lapsed) in a few index pages,
      // however many chunks this job and every earlier job left done in the table. Looked for first: CREATE
      // INDEX takes a lock on the table even when the index is there, which would make every worker's start
      // wait for the others' commits.
      for (const [name, state] of INDEXES) {
        const found = await session.query<{ ok: boolean }>('SELECT to_regclass($1) IS NOT NULL AS ok', [
          p.table(name, t.schema),
        ]);
        if (found.rows[0]?.ok) continue;
        try {
          await session.query(
            `CREATE INDEX IF NOT EXISTS ${p.quote(name)} ON ${t.chunks} (job, chunk) WHERE state = '${state}'`,
          );
        } catch (err) {
          if (!raced(err)) throw err;
        }
      }
    },
    insertJob: (t) =>
      `INSERT INTO ${t.jobs} (job, definition, state) VALUES ($1, $2, 'splitting') ON CONFLICT (job) DO NOTHING`,
    async insertChunks(session, t, job, plans: readonly ChunkInsert[]) {
      const arrays = [
        plans.map((c) => c.firstRow),
        plans.map((c) => c.rows),
        plans.map((c) => c.afterKey),
        plans.map((c) => c.byteStart),
        plans.map((c) => c.byteEnd),
        plans.map((c) => c.firstLine ?? null),
      ];
      // In slices: one statement's parameters are bounded, but arrays are one parameter each.
      for (let i = 0; i < plans.length; i += 10_000) {
        await session.query(
          `INSERT INTO ${t.chunks} (job, chunk, first_row, rows, after_key, byte_start, byte_end, first_line)
           SELECT $1, $2::int + ord::int - 1, f, r, a, bs, be, fl FROM unnest($3::bigint[], $4::int[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[]) WITH ORDINALITY AS u(f, r, a, bs, be, fl, ord)`,
          [job, i, ...arrays.map((a) => a.slice(i, i + 10_000))],
        );
      }
    },
    async claim(session, t, job, worker, leaseMs) {
      // A chunk whose lease lapsed first (its holder died or stalled: left for the end, it would be the job's
      // last chunk, with the other workers idle while one finishes it), else the lowest waiting one: each read
      // from its partial index in chunk order, so a claim costs the same in a job of 500 chunks or 500,000.
      const r = await session.query(
        `WITH l AS (SELECT chunk, 'held' AS was FROM ${t.chunks} WHERE job = $1 AND state = 'held' AND lease_until < now() ORDER BY chunk LIMIT 1 FOR UPDATE SKIP LOCKED),
           w AS (SELECT chunk, 'waiting' AS was FROM ${t.chunks} WHERE job = $1 AND state = 'waiting' AND NOT EXISTS (SELECT 1 FROM l)
                 ORDER BY chunk LIMIT 1 FOR UPDATE SKIP LOCKED),
           s AS (SELECT chunk, was FROM l UNION ALL SELECT chunk, was FROM w)
         UPDATE ${t.chunks} c SET state = 'held', holder = $2, token = c.token + 1, lease_until = now() + $3 * interval '1 millisecond', claimed_at = now(),
           takeovers = c.takeovers + (CASE WHEN c.state = 'held' THEN 1 ELSE 0 END),
           prev_sent = CASE WHEN c.state = 'held' THEN GREATEST(c.sent_to, c.prev_sent) ELSE c.prev_sent END,
           sent_to = 0
         FROM s
         WHERE c.job = $1 AND c.chunk = s.chunk
         RETURNING ${CLAIMED_COLUMNS.map((c) => `c.${c}`).join(', ')}, s.was`,
        [job, worker, leaseMs],
      );
      return r.rows[0];
    },
    // READ COMMITTED is PostgreSQL's own.
    beforeBatch: async () => undefined,
    // For this transaction alone (a SET rolled back with it would leave the session without it).
    async idleInTransaction(session, ms) {
      await session.query("SELECT set_config('idle_in_transaction_session_timeout', $1, true)", [
        String(Math.max(1, Math.round(ms))),
      ]);
    },
    upsertWorker: (t) =>
      `INSERT INTO ${t.workers} (job, worker, host, address, state, rows_done, rate, chunks, lease_ms) VALUES ($1, $2, $3, $4, 'working', $5, $6, $7, $8)
       ON CONFLICT (job, worker) DO UPDATE SET seen_at = now(), state = 'working', rows_done = EXCLUDED.rows_done, rate = EXCLUDED.rate, chunks = EXCLUDED.chunks, lease_ms = EXCLUDED.lease_ms`,
    createSpend: (table) => `CREATE TABLE IF NOT EXISTS ${table} (
      job text NOT NULL,
      worker text NOT NULL,
      currency text NOT NULL DEFAULT '',
      calls bigint NOT NULL DEFAULT 0,
      micros bigint NOT NULL DEFAULT 0,
      granted bigint NOT NULL DEFAULT 0,
      ${spendServiceColumnDefs().join(',\n      ')},
      cap bigint,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (job, worker))`,
    upsertSpend: (table, columns, values, update) =>
      `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${values.join(', ')})
       ON CONFLICT (job, worker) DO UPDATE SET ${update.map((c) => `${c} = EXCLUDED.${c}`).join(', ')}, updated_at = now()`,
  };
}
