/**
 * `bre-batch load`: an output folder (a run's, stopped or finished, or a merged one) written into the sink
 * with the run's own upserts and commit table, so that a backfill or a reload needs no API call, and a load
 * repeated, or one after a run that had the same sink, writes only what the tables lack.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { journalExists } from '../journal-file.js';
import { join } from 'node:path';
import { BreError } from '../../errors.js';
import { FILES, readManifest } from '../format/index.js';
import { lockOutput } from '../lock.js';
import { SinkFollower, type FollowerStats } from './follower.js';
import { SinkWriter, type SinkTarget } from './writer.js';

export interface LoadResult extends FollowerStats {
  readonly tables: string;
  /** Rows an interrupted --retry-errors set aside (in neither journal until it finishes): not loaded. */
  readonly retrying: boolean;
  /**
   * Where the tables' commit record had this folder's journals when the load began (bytes of results.ndjson
   * and errors.ndjson): zero on a first load, and the lines before are not read again.
   */
  readonly startedAt: { readonly results: number; readonly errors: number };
}

/** The table a folder loads into by default: its pipeline's name. */
export function defaultSinkTable(dir: string): string {
  return folderManifest(dir).pipeline.name;
}

function folderManifest(dir: string) {
  const manifest = readManifest(dir);
  if (!manifest)
    throw new BreError(
      'OUTPUT_MISMATCH',
      `${dir} is not a bre-batch output folder: Expected ${join(dir, FILES.manifest)}, got no such file`,
    );
  return manifest;
}

export async function loadFolder(dir: string, target: SinkTarget, log: (line: string) => void): Promise<LoadResult> {
  const manifest = folderManifest(dir);
  mkdirSync(join(dir, FILES.state), { recursive: true });
  // A run writing the folder now would be followed by its own sink, or by a load after it: not both at once.
  const unlock = lockOutput(dir);
  try {
    const writer = await SinkWriter.open(
      target,
      {
        key: manifest.key,
        sampled: manifest.sample !== undefined,
        transactions: journalExists(join(dir, FILES.txJournal)),
      },
      log,
    );
    try {
      const follower = await SinkFollower.open(dir, manifest, writer, log);
      const startedAt = follower.positions;
      const stats = await follower.finish();
      return { ...stats, tables: writer.describe(), retrying: existsSync(join(dir, FILES.retrying)), startedAt };
    } finally {
      await writer.close();
    }
  } finally {
    unlock();
  }
}
