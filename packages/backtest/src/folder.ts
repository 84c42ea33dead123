/** An output folder of `bre-batch run` as the back-test reads it (its format: src/output/format). */
import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { BreError } from '@bre-batch/core/errors';
import { errorLines, FILES, manifestSchema, type Manifest } from '@bre-batch/formats';
import { journalExists, journalSize } from '@bre-batch/formats/journal-file';

/** Longest results line accepted (a row with many features and offers); longer lines are counted as malformed. */
export const MAX_RESULT_LINE_BYTES = 64 * 1024 * 1024;

export interface RunFolder {
  readonly dir: string;
  readonly resultsPath: string;
  readonly resultsBytes: number;
  /** Parsed manifest.json, when present and readable. */
  readonly manifest: Manifest | null;
  /**
   * manifest.json as written, before its schema (null when absent or not a JSON object): a sampled run's design is
   * read from it, so that a damaged design is refused (sampled/block.ts) rather than taken for a run of every row.
   */
  readonly manifestJson: Readonly<Record<string, unknown>> | null;
}

export async function openRunFolder(dir: string, role: 'A' | 'B'): Promise<RunFolder> {
  const abs = resolve(dir);
  const st = await stat(abs).catch(() => null);
  if (!st?.isDirectory()) {
    throw new BreError(
      'USAGE',
      `Expected run ${role} to be an output folder of 'bre-batch run', got '${dir}' (no such folder)`,
      { field: role === 'A' ? 'outA' : 'outB' },
    );
  }
  const resultsPath = join(abs, FILES.results);
  // Plain, or compacted once its run finished (packages/formats/src/journal-file.ts): read through openJournal either
  // way.
  if (!journalExists(resultsPath)) {
    throw new BreError(
      'USAGE',
      `Expected ${join(dir, FILES.results)} (run ${role} must be an output folder of 'bre-batch run'), got no such file`,
      { field: role === 'A' ? 'outA' : 'outB' },
    );
  }
  return { dir: abs, resultsPath, resultsBytes: journalSize(resultsPath), ...manifestOf(abs) };
}

/** A damaged manifest only costs the back-test the run's name and input path (and a damaged design, the compare). */
function manifestOf(dir: string): Pick<RunFolder, 'manifest' | 'manifestJson'> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(join(dir, FILES.manifest), 'utf8'));
  } catch {
    return { manifest: null, manifestJson: null };
  }
  const parsed = manifestSchema.safeParse(raw);
  const json = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : null;
  return { manifest: parsed.success ? parsed.data : null, manifestJson: json };
}

export interface ErrorCounts {
  readonly rows: number;
  readonly by_code: Readonly<Record<string, number>>;
}

/** Counts errors.ndjson lines by code (a row in one run's errors file is usually why a key is only in the other). */
export async function countErrors(dir: string): Promise<ErrorCounts | null> {
  const path = join(dir, FILES.errors);
  if (!journalExists(path)) return null;
  let rows = 0;
  const byCode: Record<string, number> = {};
  for await (const line of errorLines(path)) {
    rows += 1;
    const code = line ? line.code : 'UNREADABLE_LINE';
    byCode[code] = (byCode[code] ?? 0) + 1;
  }
  return { rows, by_code: byCode };
}

/** A results.ndjson line, parsed just enough to join it. */
export interface ResultLine {
  readonly row: number | null;
  readonly key: string | null;
  readonly stages: Record<string, unknown>;
  /** A sampled run's stratum name and design weight (absent otherwise): checked by sampled/run-keys.ts. */
  readonly stratum?: unknown;
  readonly weight?: unknown;
}

/** null when the line is not a results object (counted as malformed by the caller). */
export function parseResultLine(text: string): ResultLine | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null;
  const o = v as { row?: unknown; key?: unknown; stages?: unknown; stratum?: unknown; weight?: unknown };
  const stages =
    o.stages && typeof o.stages === 'object' && !Array.isArray(o.stages) ? (o.stages as Record<string, unknown>) : null;
  if (!stages) return null;
  const key = typeof o.key === 'string' ? o.key : typeof o.key === 'number' ? String(o.key) : null;
  const row = typeof o.row === 'number' && Number.isInteger(o.row) ? o.row : null;
  return o.stratum === undefined && o.weight === undefined
    ? { row, key, stages }
    : { row, key, stages, stratum: o.stratum, weight: o.weight };
}
