/**
 * Pass 1 of the streaming join: read one run's results.ndjson once, write each line to the bucket file of
 * hash(key) mod N, and on the way learn the run's stages and (side A) sample its features for the PSI bins.
 * After this pass a key's lines from both runs are in the same-numbered bucket, and one bucket of each run
 * fits in memory, so the join never holds either run whole.
 */
import { Readable } from 'node:stream';
import { openJournal } from '@bre-batch/formats/journal-file';
import { join } from 'node:path';
import { readLines } from '@bre-batch/formats/input/lines';
import type { Json, NormalisedResult } from '@bre-batch/core/types';
import { TextSink } from './files.js';
import { MAX_RESULT_LINE_BYTES, parseResultLine, type ResultLine } from './folder.js';
import { Reservoir } from './features.js';
import { hasDecision, isFeatureField } from './side.js';

/** FNV-1a, 32 bits: stable across runs and platforms (bucket files are temporary, but tests rely on order). */
export function hashKey(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i += 1) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function bucketOf(key: string | null, buckets: number): number {
  return key === null ? 0 : hashKey(key) % buckets;
}

export interface StageInfo {
  /** Lines carrying the stage (skipped or not). */
  rows: number;
  /** Lines where it ran (not skipped). */
  ran: number;
  /** It carries a decision (decision or emi_decision): a workflow stage. */
  decisions: boolean;
}

export interface PartitionStats {
  /** Lines that are results objects. */
  readonly rows: number;
  /** Non-empty lines that are not (unparseable, no `stages`, too long): not joined, counted. */
  readonly malformed: number;
  readonly nullKey: number;
  /** Stage id -> what was seen, in first-seen order. */
  readonly stages: Map<string, StageInfo>;
  /** Stage id -> sample of its feature records (side A only). */
  readonly samples: Map<string, Reservoir<Record<string, Json>>>;
  /** Bucket file paths (null when N = 1 and the source file is read directly in pass 2). */
  readonly bucketPaths: readonly string[] | null;
}

export interface PartitionOptions {
  readonly source: string;
  readonly buckets: number;
  readonly tmpDir: string;
  /** File name prefix of the buckets ("a" / "b"). */
  readonly prefix: string;
  /** Sample the features of these stages ('all' = every stage; undefined = none, as for side B). */
  readonly sampleStages?: ReadonlySet<string> | 'all';
  readonly sampleSize: number;
  /** Sees every results line once (a sampled run's checks). */
  readonly onLine?: (line: ResultLine) => void;
}

export async function partitionRun(opts: PartitionOptions): Promise<PartitionStats> {
  const n = Math.max(1, Math.floor(opts.buckets));
  const sinks: TextSink[] = [];
  // With one bucket the source file already is the bucket: no copy.
  const copy = n > 1;
  if (copy)
    for (let i = 0; i < n; i += 1) sinks.push(new TextSink(join(opts.tmpDir, `${opts.prefix}-${i}.ndjson`), 64 * 1024));
  const stages = new Map<string, StageInfo>();
  const samples = new Map<string, Reservoir<Record<string, Json>>>();
  let rows = 0;
  let malformed = 0;
  let nullKey = 0;
  try {
    // results.ndjson plain, or compacted once its run finished (packages/formats/src/journal-file.ts).
    const stream = openJournal(opts.source) ?? Readable.from([]);
    for await (const line of readLines(stream, MAX_RESULT_LINE_BYTES)) {
      if (line.tooLong) {
        malformed += 1;
        continue;
      }
      if (line.text.trim() === '') continue;
      const parsed = parseResultLine(line.text);
      if (!parsed) {
        malformed += 1;
        continue;
      }
      rows += 1;
      if (parsed.key === null) nullKey += 1;
      opts.onLine?.(parsed);
      for (const [id, raw] of Object.entries(parsed.stages)) {
        const info = stages.get(id) ?? { rows: 0, ran: 0, decisions: false };
        info.rows += 1;
        const result = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as NormalisedResult) : null;
        const ran = result !== null && result.skipped !== true;
        if (ran) {
          info.ran += 1;
          if (!info.decisions && hasDecision(result)) info.decisions = true;
          if (opts.sampleStages === 'all' || opts.sampleStages?.has(id)) sample(samples, id, result, opts.sampleSize);
        }
        stages.set(id, info);
      }
      if (copy) sinks[bucketOf(parsed.key, n)].write(line.text + '\n');
    }
  } finally {
    for (const s of sinks) s.close();
  }
  return {
    rows,
    malformed,
    nullKey,
    stages,
    samples,
    bucketPaths: copy ? sinks.map((s) => s.path) : null,
  };
}

function sample(
  samples: Map<string, Reservoir<Record<string, Json>>>,
  id: string,
  result: NormalisedResult,
  size: number,
): void {
  let r = samples.get(id);
  if (!r) {
    r = new Reservoir<Record<string, Json>>(size);
    samples.set(id, r);
  }
  const slot = r.offer();
  if (slot < 0) return;
  const features: Record<string, Json> = {};
  for (const [name, value] of Object.entries(result)) if (isFeatureField(name, value)) features[name] = value;
  r.put(slot, features);
}
