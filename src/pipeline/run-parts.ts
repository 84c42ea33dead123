/**
 * The parts of a run that hold nothing to give back, made by `Run.open` (src/pipeline/run.ts): the folder's
 * manifest, the context the stages run in, the window of rows in flight, the estimate of the input's rows.
 */
import { resolve } from 'node:path';
import { sourceIdentity, type DbSource } from '../input/db/index.js';
import { maskText } from '@bre-batch/formats/input/mask';
import type { Log } from '../log/logger.js';
import { inputFingerprint } from '../output/folder-identity.js';
import type { Manifest } from '@bre-batch/formats';
import type { StageContext } from '../stages/types.js';
import type { NumberStyle, ServiceName } from '@bre-batch/core/types';
import type { RunCounters } from './build-summary.js';
import type { Egress } from './egress.js';
import { estimateInputRows, type InputReading } from './input.js';
import type { RunJob } from './job.js';
import type { DrawnSample } from './sample.js';
import type { RunSettings } from './settings.js';
import { RowWindow, windowOfSlots, windowSize } from './window.js';

/** Warnings about rows printed in full; the rest are only counted. */
const WARNINGS_SHOWN = 20;

/** What the folder is of: its pipeline, input, key, shard, limit and sample (src/output/folder-identity.ts). */
export async function runManifest(
  s: RunSettings,
  reading: InputReading,
  sample: DrawnSample | undefined,
): Promise<Manifest> {
  return {
    version: 1,
    tool: 'bre-batch',
    pipeline: { name: s.pipeline.name, path: s.pipeline.path, sha256: s.pipeline.sha256 },
    input: {
      ...(s.source
        ? {
            path: s.input,
            format: s.source.url.dialect,
            size: null,
            sha256: null,
            reading,
            source: sourceIdentity(s.source.url, s.source.relation),
          }
        : {
            path: s.input === '-' ? '-' : resolve(s.input),
            format: s.inputFormat,
            ...(await inputFingerprint(s.input)),
            reading,
          }),
      files_root:
        s.filesRoot.kind === 'folder'
          ? { path: s.filesRoot.real, given: s.filesRoot.given }
          : { path: null, given: false },
    },
    key: s.pipeline.key,
    shard: s.shard ? `${s.shard.index}/${s.shard.count}` : null,
    limit: s.limit ?? null,
    created_at: new Date().toISOString(),
    ...(sample ? { sample: sample.design } : {}),
  };
}

/** What every stage's `prepare` and `execute` are given: the files root, the clock, the stop, the warnings. */
export function stageContext(
  s: RunSettings,
  x: {
    readonly now: (() => Date) | undefined;
    readonly signal: AbortSignal;
    readonly numberStyle: NumberStyle | undefined;
    readonly counters: RunCounters;
    readonly log: Log;
  },
): StageContext {
  let shown = 0;
  return {
    filesRoot: s.filesRoot,
    clientId: s.clientId,
    now: x.now ?? (() => new Date()),
    signal: x.signal,
    numberStyle: x.numberStyle,
    warn: (message, row) => {
      x.counters.warnings += 1;
      if (shown >= WARNINGS_SHOWN) return;
      shown += 1;
      x.log(`warning${row ? ` (row ${row.row}, line ${row.line})` : ''}: ${maskText(message)}`, {
        level: 'warn',
        row: row?.row,
        line: row?.line,
      });
    },
  };
}

/** A service's limit per minute over every lane (null: no limit). */
export function sumLimits(egress: Egress, svc: ServiceName): number | null {
  let sum = 0;
  for (const lane of egress.lanes) {
    const perMinute = lane.limiters[svc].stats().currentPerMinute;
    if (perMinute === null) return null;
    sum += perMinute;
  }
  return sum;
}

/**
 * Every lane has its own limiters and connections to keep busy: as many rows as their calls in flight (which
 * follow the latency, ../limits/in-flight.ts), never more than their bounds allow.
 */
export function rowWindow(s: RunSettings, egress: Egress, services: readonly ServiceName[]): RowWindow {
  const used = new Set(services);
  const most = windowSize(s.concurrency, used) * egress.lanes.length;
  // Looked at as often as a row enters a full window (a run that keeps its calls busy): no allocation.
  return new RowWindow(() => {
    let slots = 0;
    for (const svc of used)
      for (const l of egress.lanes) slots += l.limiters[svc].inFlightCap?.() ?? s.concurrency[svc];
    return Math.min(most, windowOfSlots(slots));
  });
}

/**
 * About how many data rows the run will send (counted once, on first ask); undefined for stdin. A sampled run
 * sends its sample's rows (and writes those without a key, or unreadable, to errors); a job's worker, the job's.
 */
export function rowEstimator(
  s: RunSettings,
  x: {
    readonly sample: DrawnSample | undefined;
    readonly job: RunJob | undefined;
    readonly source: DbSource | undefined;
  },
): () => Promise<number> | undefined {
  let estimate: Promise<number> | undefined;
  return () => {
    const d = x.sample;
    estimate ??= d
      ? Promise.resolve(d.design.sampled + d.withoutKey + d.unreadable)
      : x.job
        ? Promise.resolve(x.job.rows)
        : estimateInputRows(s, x.source);
    return estimate;
  };
}
