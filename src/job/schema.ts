/**
 * A job's state, in the sink's database beside the commit table (bre_batch_loads): the job (its definition,
 * whether it is split, running or done), its chunks (each a range of the input's rows, who holds it under which
 * lease and fencing token, what of it is committed, which worker finished it) and its workers (what each
 * reports at its heartbeat).
 * PostgreSQL only: claims use FOR UPDATE SKIP LOCKED and chunk positions commit in the sink batch's transaction.
 */
import type { Dialect } from '../db/index.js';

const JOBS_TABLE = 'bre_batch_jobs';
const CHUNKS_TABLE = 'bre_batch_chunks';
const WORKERS_TABLE = 'bre_batch_workers';
/** The claim's indexes (./store.ts): the waiting chunks and the held ones, each in chunk order. */
const WAITING_INDEX = 'bre_batch_chunks_waiting';
const HELD_INDEX = 'bre_batch_chunks_held';

export interface JobTables {
  readonly jobs: string;
  readonly chunks: string;
  readonly workers: string;
  /** The chunks' indexes, each as to_regclass() finds it (schema-qualified, quoted) and the statement making it. */
  readonly indexes: readonly { readonly qualified: string; readonly create: string }[];
}

/** The three tables, quoted, in the sink's schema, and the chunks' indexes. */
export function jobTables(dialect: Dialect, schema: string | undefined): JobTables {
  const chunks = dialect.table(CHUNKS_TABLE, schema);
  // Partial: a claim reads the lowest waiting chunk (or a held one whose lease lapsed) in a few index pages,
  // however many chunks this job and every earlier job left done in the table (a scan of them all, else).
  const index = (name: string, state: string) => ({
    qualified: dialect.table(name, schema),
    create: `CREATE INDEX IF NOT EXISTS ${dialect.quote(name)} ON ${chunks} (job, chunk) WHERE state = '${state}'`,
  });
  return {
    jobs: dialect.table(JOBS_TABLE, schema),
    chunks,
    workers: dialect.table(WORKERS_TABLE, schema),
    indexes: [index(WAITING_INDEX, 'waiting'), index(HELD_INDEX, 'held')],
  };
}

export function createJobTables(t: JobTables): string[] {
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
      position integer NOT NULL DEFAULT 0,
      rows_results integer NOT NULL DEFAULT 0,
      rows_errors integer NOT NULL DEFAULT 0,
      sent_to integer NOT NULL DEFAULT 0,
      prev_sent integer NOT NULL DEFAULT 0,
      resent integer NOT NULL DEFAULT 0,
      takeovers integer NOT NULL DEFAULT 0,
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
export function jobTableUpgrades(t: JobTables): { readonly probe: string; readonly add: string }[] {
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
