/**
 * `bre-batch load`: an output folder (a run's, stopped or finished, or a merged one) written into the sink
 * with the run's own upserts and commit table, so that a backfill or a reload needs no API call, and a load
 * repeated, or one after a run that had the same sink, writes only what the tables lack.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { journalExists } from '@bre-batch/formats/journal-file';
import { join } from 'node:path';
import { BreError } from '@bre-batch/core/errors';
import { loadPipeline } from '../../config/pipeline.js';
import { declaredHeaders } from '../../stages/index.js';
import { FILES, readManifest, type Manifest } from '@bre-batch/formats';
import type { DeclaredField } from './schema.js';
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

/**
 * The fields the folder's pipeline declares, when its file is still the one the run had (as `merge` reads it);
 * otherwise none: every field gets its column as it is met.
 */
function declaredOf(manifest: Manifest, log: (line: string) => void): DeclaredField[] {
  try {
    const p = loadPipeline(manifest.pipeline.path);
    if (p.sha256 === manifest.pipeline.sha256) return declaredHeaders(p.stages);
    log(`load: ${manifest.pipeline.path} changed since the run; columns are made for the fields the results hold`);
  } catch {
    log(`load: pipeline file ${manifest.pipeline.path} not found; columns are made for the fields the results hold`);
  }
  return [];
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
        declared: declaredOf(manifest, log),
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
