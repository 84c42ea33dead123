/**
 * Compaction of a finished run's journals: results.ndjson, errors.ndjson, secrets.ndjson and
 * .state/transactions.ndjson are gzip'ed in place once the run has finished, and put back as plain files
 * (expanded) before a run appends to the folder again (why after the run: docs/decisions/journal-compaction.md).
 *
 * Every step is crash-safe, the readers' rule being packages/formats/src/journal-file.ts's (X wins over X.gz;
 * temps are never read):
 *   compact: X -> X.gz.tmp, fsync; rename to X.gz; fsync the folder; remove X; fsync the folder.
 *   expand:  X.gz -> X.gunzip.tmp, fsync; rename to X; fsync the folder; remove X.gz; fsync the folder.
 * A crash between the rename and the removal leaves X and X.gz, both whole: readers use X, and the next
 * compaction or expansion removes the stale one. The file's mode is kept (0600 stays 0600).
 */
import { chmodSync, closeSync, createReadStream, fsyncSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { constants, crc32, createDeflateRaw, createGunzip } from 'node:zlib';
import { FILES } from '@bre-batch/formats';
import { gzipHeader, gzPathOf, inodeOf, journalForm } from '@bre-batch/formats/journal-file';
import { lockOutput } from '../lock.js';
import { formatBytes } from '../room.js';

/** The journals a finished run compacts: those that grow by a line a row. */
export const COMPACTED_JOURNALS = [FILES.results, FILES.errors, FILES.secrets, FILES.txJournal] as const;

/**
 * gzip level 1: on rescore's and location's journals it keeps within a few points of level 6's ratio in a
 * fraction of its time (docs/performance.md, bench/footprint.ts), and the compaction is a step every night pays.
 */
const LEVEL = 1;

const compactingPath = (path: string) => `${path}.gz.tmp`;
const expandingPath = (path: string) => `${path}.gunzip.tmp`;

/** One journal compacted: its bytes before and after. */
export interface CompactedFile {
  readonly name: string;
  readonly bytes: number;
  readonly compactedBytes: number;
}

function syncFolder(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Removes what a step cut short left: a temp, and the stale form when both are whole (X wins). */
function tidy(path: string): void {
  rmSync(compactingPath(path), { force: true });
  rmSync(expandingPath(path), { force: true });
  if (journalForm(path) === 'plain') rmSync(gzPathOf(path), { force: true });
}

/** Gzips `path` into `tmp` with the header's record of the plain file; fsynced. Returns the bytes written. */
async function gzipTo(path: string, tmp: string, mode: number, level: number): Promise<number> {
  const st = statSync(path);
  const out = await open(tmp, 'w', mode);
  try {
    let crc = 0;
    let bytes = 0;
    let written = 0;
    const write = async (b: Uint8Array) => {
      await out.write(b);
      written += b.length;
    };
    await write(gzipHeader({ bytes: st.size, identity: inodeOf(path) ?? '' }));
    await pipeline(
      createReadStream(path, { highWaterMark: 1024 * 1024 }),
      async function* (source: AsyncIterable<Buffer>) {
        for await (const chunk of source) {
          crc = crc32(chunk, crc);
          bytes += chunk.length;
          yield chunk;
        }
      },
      createDeflateRaw({ level, chunkSize: 256 * 1024, strategy: constants.Z_DEFAULT_STRATEGY }),
      async (deflated: AsyncIterable<Buffer>) => {
        for await (const chunk of deflated) await write(chunk);
      },
    );
    // The trailer (RFC 1952): CRC-32 and the size modulo 2^32, little-endian.
    const trailer = Buffer.alloc(8);
    trailer.writeUInt32LE(crc >>> 0, 0);
    trailer.writeUInt32LE(bytes % 2 ** 32, 4);
    await write(trailer);
    await out.sync();
    return written;
  } finally {
    await out.close();
  }
}

/** Compacts one journal (see the header); undefined when it is not there as a plain file. */
async function compactJournal(dir: string, name: string, level: number): Promise<CompactedFile | undefined> {
  const path = join(dir, name);
  tidy(path);
  if (journalForm(path) !== 'plain') return undefined;
  const st = statSync(path);
  // An empty journal (errors.ndjson of a clean night) takes no room: its gzip header would.
  if (st.size === 0) return undefined;
  const mode = st.mode & 0o777;
  const tmp = compactingPath(path);
  const compactedBytes = await gzipTo(path, tmp, mode, level);
  chmodSync(tmp, mode); // whatever the umask: the journal's own mode
  renameSync(tmp, gzPathOf(path));
  syncFolder(dirname(path));
  rmSync(path);
  syncFolder(dirname(path));
  return { name, bytes: st.size, compactedBytes };
}

/** Gzips the folder's journals in place; the ones compacted, with their sizes. `level`: the benchmark's other. */
export async function compactFolder(dir: string, level = LEVEL): Promise<CompactedFile[]> {
  const done: CompactedFile[] = [];
  for (const name of COMPACTED_JOURNALS) {
    const f = await compactJournal(dir, name, level);
    if (f) done.push(f);
  }
  return done;
}

/**
 * The end of a finished run: its journals compacted under the folder's lock (another run taking the folder up
 * meanwhile finds them whole, plain or compacted). Returns the line to print. A compaction that fails (no room
 * for the compressed copy, the lock taken) leaves the journal as it was, whole and plain: the run's outcome
 * does not change, and the line says so.
 */
export async function compactFinishedRun(dir: string): Promise<string> {
  let unlock: (() => void) | undefined;
  try {
    unlock = lockOutput(dir);
    const files = await compactFolder(dir);
    if (files.length === 0) return '  journal: nothing to compact';
    const before = files.reduce((n, f) => n + f.bytes, 0);
    const after = files.reduce((n, f) => n + f.compactedBytes, 0);
    return `  journal: compacted ${formatBytes(before)} -> ${formatBytes(after)} (${files.map((f) => `${f.name}.gz`).join(', ')}; --keep-journal leaves it uncompressed)`;
  } catch (err) {
    for (const name of COMPACTED_JOURNALS) {
      try {
        tidy(join(dir, name));
      } catch {
        /* left for the next writer, which tidies it too */
      }
    }
    return `  journal: left uncompressed (${(err as Error).message}); every command reads it as it is`;
  } finally {
    unlock?.();
  }
}

/** Puts one compacted journal back as a plain file (see the header). */
async function expandJournal(path: string): Promise<boolean> {
  tidy(path);
  if (journalForm(path) !== 'gzip') return false;
  const gz = gzPathOf(path);
  const mode = statSync(gz).mode & 0o777;
  const tmp = expandingPath(path);
  const out = await open(tmp, 'w', mode);
  try {
    await pipeline(
      createReadStream(gz, { highWaterMark: 256 * 1024 }),
      createGunzip({ chunkSize: 1024 * 1024 }),
      async (plain: AsyncIterable<Buffer>) => {
        for await (const chunk of plain) await out.write(chunk);
      },
    );
    await out.sync();
  } finally {
    await out.close();
  }
  chmodSync(tmp, mode);
  renameSync(tmp, path);
  syncFolder(dirname(path));
  rmSync(gz);
  syncFolder(dirname(path));
  return true;
}

/**
 * Before a run appends to a folder: every compacted journal is plain again (and what a step cut short left
 * is tidied). Returns the names expanded.
 */
export async function expandFolder(dir: string): Promise<string[]> {
  const expanded: string[] = [];
  for (const name of COMPACTED_JOURNALS) if (await expandJournal(join(dir, name))) expanded.push(name);
  return expanded;
}
