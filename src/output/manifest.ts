/** What makes a resume safe: the input's fingerprint, and the check that a folder belongs to this run. */
import { createReadStream, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { BreError } from '../errors.js';
import { describeDelimiter } from '../input/dialect.js';
import type { Manifest } from './format/index.js';

export async function fileSha256(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 })) h.update(chunk as Buffer);
  return h.digest('hex');
}

export async function inputFingerprint(path: string): Promise<{ size: number | null; sha256: string | null }> {
  if (path === '-') return { size: null, sha256: null };
  return { size: statSync(path).size, sha256: await fileSha256(path) };
}

type Reading = NonNullable<Manifest['input']['reading']>;

/** The reading options as the command line gives them, for messages. */
export function describeReading(r: Reading): string {
  const parts = [
    r.encoding === null ? 'no text encoding (Parquet)' : `encoding ${r.encoding}`,
    ...(r.delimiter === null ? [] : [`separator ${describeDelimiter(r.delimiter)}`]),
    r.decimal_comma ? '--decimal-comma' : 'no --decimal-comma',
  ];
  return parts.join(', ');
}

/**
 * Whether two folders' rows were read differently (another encoding, separator or number style would turn
 * the same bytes into other values); false when either folder predates the record.
 */
export function readDifferently(a: Manifest, b: Manifest): boolean {
  const x = a.input.reading;
  const y = b.input.reading;
  return x !== undefined && y !== undefined && (x.encoding !== y.encoding || x.delimiter !== y.delimiter || x.decimal_comma !== y.decimal_comma);
}

/** A database input's table or query, in words. */
function describeRead(source: NonNullable<Manifest['input']['source']>): string {
  return source.table !== null ? `table ${source.table}` : `the query ${source.query ?? ''}`;
}

/**
 * What differs between two folders' database inputs (another server, database, user, table or query text);
 * empty when both read the same, or neither reads a database.
 */
export function sourceDifferences(old: Manifest, now: Manifest): string[] {
  const a = old.input.source;
  const b = now.input.source;
  if (!a && !b) return [];
  if (!a || !b) return [`it was made from ${a ? 'the database' : 'the file'} ${old.input.path}, now from ${b ? 'the database' : 'the file'} ${now.input.path}`];
  const problems: string[] = [];
  if (a.url !== b.url) problems.push(`it read the database ${a.url}, now ${b.url}`);
  if (a.table !== b.table || a.query !== b.query) problems.push(`it read ${describeRead(a)}, now ${describeRead(b)}`);
  return problems;
}

/** Refuses to resume into a folder made from another input, pipeline, key, shard or limit, or read otherwise. */
export function checkSameRun(dir: string, old: Manifest, now: Manifest): void {
  const problems: string[] = [...sourceDifferences(old, now)];
  if (old.pipeline.sha256 !== now.pipeline.sha256) problems.push(`it was made by pipeline '${old.pipeline.name}' (${old.pipeline.path}) with other contents than '${now.pipeline.name}' now`);
  if (old.input.sha256 && now.input.sha256 && old.input.sha256 !== now.input.sha256) problems.push(`it was made from input ${old.input.path}, whose contents differ from ${now.input.path}`);
  if (old.key !== now.key) problems.push(`its row key was '${old.key}', now '${now.key}'`);
  if ((old.shard ?? null) !== (now.shard ?? null)) problems.push(`it was shard ${old.shard ?? 'none'}, now ${now.shard ?? 'none'}`);
  if (readDifferently(old, now)) {
    problems.push(`its input was read with ${describeReading(old.input.reading!)}, now with ${describeReading(now.input.reading!)} (the same bytes would give other values: give the same --encoding, --delimiter and --decimal-comma)`);
  }
  if (problems.length > 0) {
    throw new BreError('OUTPUT_MISMATCH', `refusing to resume into ${dir}: ${problems.join('; ')}. Use another --out, or the same input and pipeline.`);
  }
}
