/** What makes a resume safe: the input's fingerprint, and the check that a folder belongs to this run. */
import { createReadStream, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { BreError } from '@bre-batch/core/errors';
import { describeDelimiter } from '@bre-batch/formats/input/csv-dialect';
import { designDifference } from '../sample/draw.js';
import type { Manifest } from '@bre-batch/formats';

async function fileSha256(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 })) h.update(chunk as Buffer);
  return h.digest('hex');
}

/**
 * The last file hashed, by its path, inode, size and modification time: a job's worker asks for its input's
 * hash three times (src/pipeline/job.ts, the manifest), which on a file of gigabytes on a network share is
 * worth reading once. A file changed in between has another size or time and is read again.
 */
let lastHash: { readonly key: string; readonly sha256: Promise<string> } | undefined;

export async function inputFingerprint(path: string): Promise<{ size: number | null; sha256: string | null }> {
  if (path === '-') return { size: null, sha256: null };
  const st = statSync(path);
  const key = `${path}\0${st.ino}\0${st.size}\0${st.mtimeMs}`;
  if (lastHash?.key !== key) {
    const sha256 = fileSha256(path);
    lastHash = { key, sha256 };
    sha256.catch(() => {
      if (lastHash?.sha256 === sha256) lastHash = undefined;
    });
  }
  return { size: st.size, sha256: await lastHash.sha256 };
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
  return (
    x !== undefined &&
    y !== undefined &&
    (x.encoding !== y.encoding || x.delimiter !== y.delimiter || x.decimal_comma !== y.decimal_comma)
  );
}

type FilesRootRecord = NonNullable<Manifest['input']['files_root']>;

function describeRoot(r: FilesRootRecord): string {
  return r.path === null ? 'no files root' : `${r.path} (${r.given ? '--files-root' : "the input file's folder"})`;
}

/**
 * Why a resume would read the rows' files elsewhere than the folder's earlier sessions did; undefined when
 * it would not. The same row would send another file: as with another input, the folder's rows would mix
 * two sets of files, so it is refused. Not refused: a folder that predates the record; one made with no
 * root (no row read a file: each row naming one is in errors, for --retry-errors with a root to redo); and
 * two runs both on the input's folder (the same rule: the input, whose contents are checked, moved with its
 * files).
 */
export function filesRootChange(old: Manifest, now: Manifest): string | undefined {
  const a = old.input.files_root;
  const b = now.input.files_root;
  if (a === undefined || b === undefined || a.path === null) return undefined;
  if (!a.given && !b.given) return undefined;
  if (a.path === b.path) return undefined;
  return `its rows' files were read inside ${describeRoot(a)}, now ${b.path === null ? 'there is no files root' : `inside ${describeRoot(b)}`} (a row would send another file: give --files-root ${a.path})`;
}

/** The manifest to keep after a resume: a root given now to a folder made without one is recorded from now on. */
export function resumedManifest(old: Manifest, now: Manifest): Manifest | undefined {
  const a = old.input.files_root;
  const b = now.input.files_root;
  return a !== undefined && a.path === null && b !== undefined && b.path !== null
    ? { ...old, input: { ...old.input, files_root: b } }
    : undefined;
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
  if (!a || !b)
    return [
      `it was made from ${a ? 'the database' : 'the file'} ${old.input.path}, now from ${b ? 'the database' : 'the file'} ${now.input.path}`,
    ];
  const problems: string[] = [];
  if (a.url !== b.url) problems.push(`it read the database ${a.url}, now ${b.url}`);
  if (a.table !== b.table || a.query !== b.query) problems.push(`it read ${describeRead(a)}, now ${describeRead(b)}`);
  return problems;
}

/**
 * Refuses to resume into a folder made from another input (file or database source), pipeline, key or shard, read otherwise, with its files in another root, or drawn as
 * another sample (another design, or the same one from other rows: --limit draws it from the first N rows).
 */
export function checkSameRun(dir: string, old: Manifest, now: Manifest): void {
  const problems: string[] = [...sourceDifferences(old, now)];
  if (old.pipeline.sha256 !== now.pipeline.sha256)
    problems.push(
      `it was made by pipeline '${old.pipeline.name}' (${old.pipeline.path}) with other contents than '${now.pipeline.name}' now`,
    );
  if (old.input.sha256 && now.input.sha256 && old.input.sha256 !== now.input.sha256)
    problems.push(`it was made from input ${old.input.path}, whose contents differ from ${now.input.path}`);
  if (old.key !== now.key) problems.push(`its row key was '${old.key}', now '${now.key}'`);
  if ((old.shard ?? null) !== (now.shard ?? null))
    problems.push(`it was shard ${old.shard ?? 'none'}, now ${now.shard ?? 'none'}`);
  if (readDifferently(old, now)) {
    problems.push(
      `its input was read with ${describeReading(old.input.reading!)}, now with ${describeReading(now.input.reading!)} (the same bytes would give other values: give the same --encoding, --delimiter and --decimal-comma)`,
    );
  }
  const root = filesRootChange(old, now);
  if (root !== undefined) problems.push(root);
  const sample = designDifference(old.sample, now.sample);
  const limitDiffers = (old.limit ?? null) !== (now.limit ?? null);
  // Another --limit draws from other rows: that, not the strata it changes, is what to say.
  if (sample && !(old.sample && now.sample && limitDiffers))
    problems.push(`${sample} (give the same sample options to resume it)`);
  else if (old.sample && limitDiffers)
    problems.push(
      `its sample was drawn from ${old.limit === null ? 'every row' : `the first ${old.limit} rows (--limit ${old.limit})`}, now from ${now.limit === null ? 'every row' : `the first ${now.limit}`}`,
    );
  if (problems.length > 0) {
    throw new BreError(
      'OUTPUT_MISMATCH',
      `refusing to resume into ${dir}: ${problems.join('; ')}. Use another --out, or the same input and pipeline.`,
    );
  }
}
