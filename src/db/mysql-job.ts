/**
 * A job's store on MySQL 8 and MariaDB 10.6+ (./job-sql.ts). Neither has UPDATE ... RETURNING (nor an UPDATE
 * in a CTE) or a partial index, and both commit DDL on its own; both have FOR UPDATE SKIP LOCKED. So:
 * - the tables and their index are made at the store's opening, never inside a claim or a join;
 * - two composite indexes instead of PostgreSQL's partial ones: (job, state, chunk), from which a claim reads
 *   the job's lowest waiting chunk, and (job, state, lease_until), from which it reads a held chunk whose lease
 *   lapsed (the longest lapsed first) without walking those whose lease is live; each in a few index pages,
 *   whatever the job's size and however many chunks earlier jobs left done in the table (FORCE INDEX: the
 *   primary key, (job, chunk), also reads in chunk order, but through every done chunk of the job first);
 * - a claim is a short transaction (READ COMMITTED: no gap locks): the chunk picked FOR UPDATE SKIP LOCKED,
 *   updated, read back;
 * - times are DATETIME(3) of the session's UTC clock (./mysql.ts), a lease's end TIMESTAMPADD of it.
 */
import { BreError } from '@bre-batch/core/errors';
import type { ChunkInsert, JobSql, JobTableNames } from './job-sql.js';
import { CHUNK_COUNT_COLUMNS, CLAIMED_COLUMNS, positional, spendServiceColumnDefs } from './job-sql.js';
import type { Failure } from './failure.js';
import type { DbSession } from './session.js';

/** The claim's indexes: the waiting chunks in chunk order, the held ones by the end of their lease. */
const WAITING_INDEX = 'bre_batch_chunks_waiting';
const LAPSED_INDEX = 'bre_batch_chunks_lapsed';
/** The sessions whose idle_transaction_timeout is set (or that have none: MySQL). */
const idleSet = new WeakSet<DbSession>();
/** Rows a statement of the split inserts (8 parameters each, within the protocol's 65,535). */
const INSERT_SLICE = 2_000;

function createTables(t: JobTableNames, q: (id: string) => string): string[] {
  // A job's and a worker's name are keys: VARCHAR(255) (1,020 bytes in utf8mb4, within InnoDB's index limit).
  return [
    `CREATE TABLE IF NOT EXISTS ${t.jobs} (
      job varchar(255) NOT NULL PRIMARY KEY,
      definition json NOT NULL,
      state varchar(16) NOT NULL,
      chunks integer NOT NULL DEFAULT 0,
      ${q('rows')} bigint NOT NULL DEFAULT 0,
      retries integer NOT NULL DEFAULT 0,
      created_at datetime(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
      started_at datetime(3) NULL,
      done_at datetime(3) NULL) ENGINE=InnoDB`,
    `CREATE TABLE IF NOT EXISTS ${t.chunks} (
      job varchar(255) NOT NULL,
      chunk integer NOT NULL,
      first_row bigint NOT NULL,
      ${q('rows')} integer NOT NULL,
      after_key longtext,
      byte_start bigint,
      byte_end bigint,
      first_line bigint,
      state varchar(16) NOT NULL DEFAULT 'waiting',
      holder varchar(255),
      token bigint NOT NULL DEFAULT 0,
      lease_until datetime(3) NULL,
      claimed_at datetime(3) NULL,
      committed mediumblob,
      ${CHUNK_COUNT_COLUMNS},
      done_at datetime(3) NULL,
      done_by varchar(255),
      PRIMARY KEY (job, chunk),
      KEY ${q(WAITING_INDEX)} (job, state, chunk),
      KEY ${q(LAPSED_INDEX)} (job, state, lease_until)) ENGINE=InnoDB`,
    `CREATE TABLE IF NOT EXISTS ${t.workers} (
      job varchar(255) NOT NULL,
      worker varchar(255) NOT NULL,
      host varchar(255) NOT NULL,
      address text,
      state varchar(16) NOT NULL,
      started_at datetime(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
      seen_at datetime(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
      rows_done bigint NOT NULL DEFAULT 0,
      rate double NOT NULL DEFAULT 0,
      chunks integer NOT NULL DEFAULT 0,
      lease_ms integer NOT NULL DEFAULT 60000,
      PRIMARY KEY (job, worker)) ENGINE=InnoDB`,
  ];
}

/**
 * Whether the server (its `VERSION()`) claims with FOR UPDATE SKIP LOCKED: MySQL from 8.0.1, MariaDB from 10.6.
 * Undefined when it holds the lock instead (an older server): a claim there would wait on the others' chunks.
 */
export function skipLockedSince(version: string): string | undefined {
  const [major = 0, minor = 0, patch = 0] = (version.match(/^(\d+)\.(\d+)\.(\d+)/) ?? []).slice(1).map(Number);
  const at = (a: number, b: number, c: number) => major * 1e6 + minor * 1e3 + patch >= a * 1e6 + b * 1e3 + c;
  if (/mariadb/i.test(version)) return at(10, 6, 0) ? 'MariaDB 10.6' : undefined;
  return at(8, 0, 1) ? 'MySQL 8.0.1' : undefined;
}

export function mysqlJob(p: {
  readonly quote: (id: string) => string;
  readonly classify: (err: unknown) => Failure;
}): JobSql {
  const q = p.quote;
  const later = (instant: string, ms: string) => `TIMESTAMPADD(MICROSECOND, (${ms}) * 1000, ${instant})`;
  return {
    now: 'NOW(3)',
    later,
    bind: positional,
    async prepare(session, t) {
      const version = String((await session.query<{ v: string }>('SELECT VERSION() AS v')).rows[0]?.v ?? '');
      if (!skipLockedSince(version))
        throw new BreError(
          'USAGE',
          `Expected MySQL 8.0 or MariaDB 10.6 or later for --job's database, got ${version} at ${session.url.display}: a job's chunks are claimed with FOR UPDATE SKIP LOCKED, which older servers lack (use --shard and merge there)`,
          { field: 'job' },
        );
      for (const sql of createTables(t, q)) {
        try {
          await session.query(sql);
        } catch (err) {
          if (p.classify(err) !== 'exists') throw err;
        }
      }
    },
    insertJob: (t) =>
      `INSERT INTO ${t.jobs} (job, definition, state) VALUES ($1, $2, 'splitting') ON DUPLICATE KEY UPDATE job = job`,
    async insertChunks(session, t, job, plans: readonly ChunkInsert[]) {
      for (let i = 0; i < plans.length; i += INSERT_SLICE) {
        const slice = plans.slice(i, i + INSERT_SLICE);
        const params = slice.flatMap((c, k) => [
          job,
          i + k,
          c.firstRow,
          c.rows,
          c.afterKey,
          c.byteStart,
          c.byteEnd,
          c.firstLine ?? null,
        ]);
        await session.query(
          `INSERT INTO ${t.chunks} (job, chunk, first_row, ${q('rows')}, after_key, byte_start, byte_end, first_line) VALUES ${slice.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
          params,
        );
      }
    },
    async claim(session, t, job, worker, leaseMs) {
      // READ COMMITTED for this transaction alone: under REPEATABLE READ the pick would lock the gap before the
      // chunk too, and two claimers moving their chunks from waiting to held in the index would deadlock.
      await session.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
      return session.transaction(async () => {
        const pick = async (index: string, where: string, order: string) =>
          (
            await session.query<{ chunk: number }>(
              `SELECT chunk FROM ${t.chunks} FORCE INDEX (${q(index)}) WHERE job = ? AND ${where} ORDER BY ${order} LIMIT 1 FOR UPDATE SKIP LOCKED`,
              [job],
            )
          ).rows[0]?.chunk;
        // A chunk whose lease lapsed first (left for the end, it would be the job's last, the others idle), else
        // the lowest waiting one.
        let was = 'held';
        let chunk = await pick(LAPSED_INDEX, `state = 'held' AND lease_until < NOW(3)`, 'lease_until');
        if (chunk === undefined) {
          was = 'waiting';
          chunk = await pick(WAITING_INDEX, `state = 'waiting'`, 'chunk');
        }
        if (chunk === undefined) return undefined;
        const takeover = was === 'held';
        // MySQL assigns from left to right, each expression seeing the columns set before it: what reads
        // sent_to comes before sent_to is reset.
        await session.query(
          `UPDATE ${t.chunks} SET takeovers = takeovers + ?, prev_sent = CASE WHEN ? THEN GREATEST(sent_to, prev_sent) ELSE prev_sent END,
             sent_to = 0, state = 'held', holder = ?, token = token + 1, lease_until = ${later('NOW(3)', '?')}, claimed_at = NOW(3)
           WHERE job = ? AND chunk = ?`,
          [takeover ? 1 : 0, takeover, worker, leaseMs, job, chunk],
        );
        const cols = CLAIMED_COLUMNS.map((c) => q(c)).join(', ');
        return (
          await session.query(`SELECT ${cols}, ? AS was FROM ${t.chunks} WHERE job = ? AND chunk = ?`, [
            was,
            job,
            chunk,
          ])
        ).rows[0];
      });
    },
    // For the next transaction alone. Under REPEATABLE READ the fence's plain read of the chunks it holds (a chunk
    // claimed a moment ago) took the transaction's snapshot before the job's row was locked: its "any chunk left"
    // read then missed the other worker's commit, and neither of two workers finishing the last chunks at one
    // moment marked the job done (test/job/fence.test.ts).
    async beforeBatch(session) {
      await session.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
    },
    // MariaDB's idle_transaction_timeout, whole seconds, set once a session (a SET is not rolled back there);
    // MySQL has none (an unknown variable): the session is remembered as without.
    async idleInTransaction(session, ms) {
      if (idleSet.has(session)) return;
      try {
        await session.query('SET SESSION idle_transaction_timeout = ?', [Math.max(1, Math.ceil(ms / 1000))]);
      } catch (err) {
        if (p.classify(err) === 'lost') throw err;
      }
      idleSet.add(session);
    },
    upsertWorker: (t) =>
      `INSERT INTO ${t.workers} (job, worker, host, address, state, rows_done, rate, chunks, lease_ms) VALUES ($1, $2, $3, $4, 'working', $5, $6, $7, $8)
       ON DUPLICATE KEY UPDATE seen_at = NOW(3), state = 'working', rows_done = VALUES(rows_done), rate = VALUES(rate), chunks = VALUES(chunks), lease_ms = VALUES(lease_ms)`,
    // Text keys need a length on MySQL; the times are the database's, in UTC, as the job's other tables.
    createSpend: (table) => `CREATE TABLE IF NOT EXISTS ${table} (
      job VARCHAR(255) NOT NULL,
      worker VARCHAR(255) NOT NULL,
      currency VARCHAR(16) NOT NULL DEFAULT '',
      calls BIGINT NOT NULL DEFAULT 0,
      micros BIGINT NOT NULL DEFAULT 0,
      granted BIGINT NOT NULL DEFAULT 0,
      ${spendServiceColumnDefs().join(',\n      ')},
      cap BIGINT,
      updated_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
      PRIMARY KEY (job, worker))`,
    upsertSpend: (table, columns, values, update) =>
      `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${values.join(', ')})
       ON DUPLICATE KEY UPDATE ${update.map((c) => `${c} = VALUES(${c})`).join(', ')}, updated_at = NOW(3)`,
  };
}
