/**
 * What makes two workers the same job: the sink table, the pipeline (by content), the input (a database's
 * relation, or a file's size and content hash) with how it is read, the key and the rates. A worker that
 * differs in any of them would write other rows into the job's tables (or at another pace than the job was
 * planned for), so it is refused, saying which differs (JOB_MISMATCH, exit 2).
 */
import { BreError } from '@bre-batch/core/errors';

export interface JobDefinition {
  readonly sink_table: string;
  readonly pipeline: { readonly name: string; readonly sha256: string };
  /** `database`: its URL (no password) and relation; `file`: its size and sha256 (the path may differ per host). */
  readonly input: { readonly kind: 'database' | 'file'; readonly identity: string; readonly reading?: string };
  readonly key: string;
  /** The rates as given, service by service (`workflow=500/min`). */
  readonly rates: string;
}

/** The definition as the database gives it back: an object, or its JSON text (MariaDB's JSON is text). */
export function definitionOf(value: unknown): JobDefinition {
  return (typeof value === 'string' ? JSON.parse(value) : value) as JobDefinition;
}

/** Each difference as a person reads it, empty when the definitions agree. */
export function definitionDifferences(job: JobDefinition, mine: JobDefinition): string[] {
  const out: string[] = [];
  if (job.sink_table !== mine.sink_table)
    out.push(`the sink table: the job writes ${job.sink_table}, this worker ${mine.sink_table}`);
  if (job.pipeline.sha256 !== mine.pipeline.sha256) {
    out.push(
      `the pipeline: the job runs '${job.pipeline.name}' (sha256 ${job.pipeline.sha256.slice(0, 12)}), this worker '${mine.pipeline.name}' (sha256 ${mine.pipeline.sha256.slice(0, 12)})`,
    );
  }
  if (job.input.kind !== mine.input.kind || job.input.identity !== mine.input.identity) {
    out.push(
      `the input: the job reads ${job.input.kind} ${job.input.identity}, this worker ${mine.input.kind} ${mine.input.identity}`,
    );
  } else if (mine.input.reading !== undefined && (job.input.reading ?? '') !== mine.input.reading) {
    out.push(`how the input is read: the job ${job.input.reading}, this worker ${mine.input.reading}`);
  }
  if (job.key !== mine.key) out.push(`the key: the job's is ${job.key}, this worker's ${mine.key}`);
  if (job.rates !== mine.rates) out.push(`the rate: the job runs at ${job.rates}, this worker at ${mine.rates}`);
  return out;
}

export function mismatchError(name: string, differences: readonly string[]): BreError {
  return new BreError(
    'JOB_MISMATCH',
    `Expected this worker to run the job '${name}' as it was started, got another ${differences.length === 1 ? 'setting' : 'settings'}: ${differences.join('; ')}. Start it with the job's own command, or give another --job name`,
    { field: 'job' },
  );
}
