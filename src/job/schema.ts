/**
 * A job's state, in the sink's database beside the commit table (bre_batch_loads): the job (its definition,
 * whether it is split, running or done), its chunks (each a range of the input's rows, who holds it under which
 * lease and fencing token, what of it is committed, which worker finished it) and its workers (what each
 * reports at its heartbeat). Each dialect makes them its own way, with the indexes its claims read
 * (src/db/job-sql.ts); claims use FOR UPDATE SKIP LOCKED and chunk positions commit in the sink batch's
 * transaction on both.
 */
import type { Dialect, JobTableNames } from '../db/index.js';

export interface JobTables extends JobTableNames {
  /** The column `rows` of the jobs and the chunks, quoted (a reserved word in MySQL and MariaDB). */
  readonly rows: string;
}

/** The three tables, quoted, in the sink's schema. */
export function jobTables(dialect: Dialect, schema: string | undefined): JobTables {
  return {
    rows: dialect.quote('rows'),
    jobs: dialect.table('bre_batch_jobs', schema),
    chunks: dialect.table('bre_batch_chunks', schema),
    workers: dialect.table('bre_batch_workers', schema),
    schema,
  };
}
