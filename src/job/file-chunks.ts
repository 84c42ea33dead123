/**
 * A file input's chunks (`run --job` with --input on storage every worker sees): the worker that splits the
 * job cuts the file into ranges of rows where the run's own reader finds records (src/input/ranges.ts), and
 * each worker reads only the ranges it claims, from their first byte. What cannot be entered in the middle is
 * refused before anything is claimed, saying what to do instead: gzip'ed files, UTF-16 text.
 *
 * The file must stay as it was split: its size and sha256 are the job's (./definition.ts: a worker with
 * another file is JOB_MISMATCH), and before each chunk is read its size and modification time are compared
 * with what this worker hashed; a file changed while the job runs stops the worker (SOURCE_CHANGED) rather
 * than read rows out of ranges cut in another file.
 */
import { statSync } from 'node:fs';
import { BreError, isBreError } from '@bre-batch/core/errors';
import { readRange, ShortRange, splitFile, type RangeReading } from '../input/ranges.js';
import type { InputRow } from '@bre-batch/core/types';
import type { ChunkPlan, ClaimedChunk } from './store.js';

/** What a chunked file input needs of the file, as this worker saw it when it hashed it. */
export interface FileSeen {
  readonly size: number;
  readonly mtimeMs: number;
}

export function fileSeen(path: string): FileSeen {
  const st = statSync(path);
  return { size: st.size, mtimeMs: st.mtimeMs };
}

/**
 * Exit 2 for a file a job cannot split, with what to do: `format` as --input-format resolves it, `encoding`
 * the one the file's start gave.
 */
export function checkSplittable(path: string, format: string, encoding: string | null): void {
  if (format.endsWith('.gz'))
    throw new BreError(
      'USAGE',
      `Expected an uncompressed file with --job, got the gzip'ed ${path}: a gzip stream can only be read from its start, so no worker could read just its chunks. Unpack it once onto the shared folder (gunzip -k ${path}) and give that file, or use --shard K/N and merge`,
      { field: 'input' },
    );
  if (encoding === 'utf-16le' || encoding === 'utf-16be')
    throw new BreError(
      'USAGE',
      `Expected a file in UTF-8 or a one-byte encoding with --job, got ${path} in ${encoding.toUpperCase()}: its chunks are cut at byte offsets, which a UTF-16 file read through its transcoder does not keep. Convert it once (iconv -f ${encoding.toUpperCase()} -t UTF-8 ${path} > out.csv) and give that file, or use --shard K/N and merge`,
      { field: 'input' },
    );
}

/** The file's chunks: `rows` rows each (the last may hold fewer), each a byte range from a record's start. */
export async function splitFileChunks(path: string, reading: RangeReading, rows: number): Promise<ChunkPlan[]> {
  return (await splitFile(path, reading, rows)).map((r) => ({ ...r, afterKey: null }));
}

function changed(path: string, what: string): BreError {
  return new BreError(
    'SOURCE_CHANGED',
    `the input ${path} changed after the job was split (${what}): its chunks are byte ranges of the file as it was, which no longer hold the rows they were cut around. Nothing more is read; the chunks this worker holds go back at their committed position. To run the file as it is now, start a new job (another --job name)`,
    { field: 'input' },
  );
}

/** One claimed chunk's rows, read from its first byte after checking the file is still the one hashed. */
export async function* fileChunkRows(
  path: string,
  reading: RangeReading,
  seen: FileSeen,
  c: ClaimedChunk,
): AsyncGenerator<InputRow[]> {
  let now: FileSeen;
  try {
    now = fileSeen(path);
  } catch (err) {
    throw new BreError('INPUT_UNREADABLE', `cannot read the input ${path}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if (now.size !== seen.size || now.mtimeMs !== seen.mtimeMs)
    throw changed(
      path,
      now.size !== seen.size
        ? `${seen.size} bytes when this worker joined, ${now.size} now`
        : 'its modification time moved since this worker joined',
    );
  const range = {
    firstRow: c.firstRow,
    firstLine: c.firstLine ?? c.firstRow,
    rows: c.rows,
    byteStart: c.byteStart,
    byteEnd: c.byteEnd,
  };
  try {
    yield* readRange(path, reading, range);
  } catch (err) {
    if (err instanceof ShortRange) throw changed(path, `chunk ${c.chunk}: ${err.message}`);
    if (isBreError(err)) throw err;
    throw new BreError(
      'INPUT_UNREADABLE',
      `cannot read chunk ${c.chunk} of the input ${path}: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
}
