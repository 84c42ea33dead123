/**
 * The journal lines: results.ndjson (one line per row that succeeded), errors.ndjson (one per row that
 * failed) and secrets.ndjson. The schemas are the reference; the readers check each line with the guards
 * below, which test the same fields by hand: a zod parse of every line would cost more than the JSON parse
 * itself on journals of millions of lines (test/output/format.test.ts holds the two to each other).
 */
import { z } from 'zod';
import { readNdjson, readNdjsonBatches } from './ndjson-file.js';

const rowNumber = z.number().int().positive();
/** The row's key as text, or null when the row has none (src/input/shard.ts). */
const rowKey = z.string().nullable();

/** A sampled run's row (`run --sample`): its stratum's name and design weight N_h / n_h; absent otherwise. */
const stratum = z.string().optional();
const weight = z.number().positive().optional();
/**
 * The run that wrote the line (manifest.json's `run_id`) and its session (1 for the first): absent in lines an
 * older bre-batch wrote.
 */
const runId = z.string().optional();
const runSession = z.number().int().positive().optional();

export const resultLineSchema = z.object({
  row: rowNumber,
  key: rowKey,
  run_id: runId,
  run_session: runSession,
  stratum,
  weight,
  /** Stage id -> the stage's normalised result (or `{ "skipped": true }`). */
  stages: z.record(z.string(), z.record(z.string(), z.unknown())),
});
export type ResultLine = z.infer<typeof resultLineSchema>;

const fieldProblemSchema = z.object({ field: z.string(), expected: z.string(), message: z.string() });

export const errorLineSchema = z.object({
  row: rowNumber,
  /** Physical input line where the row starts. */
  line: z.number().int().nullable(),
  key: rowKey,
  run_id: runId,
  run_session: runSession,
  stratum,
  weight,
  stage: z.string().nullable(),
  /** HTTP status of the last answer, when there was one. */
  status: z.number().int().nullable(),
  /** A code of the error table (packages/core/src/errors.ts). */
  code: z.string(),
  message: z.string(),
  field: z.string().optional(),
  expected: z.string().optional(),
  /** Every field problem of an invalid row. */
  errors: z.array(fieldProblemSchema).optional(),
  attempts: z.number().int(),
  /** The row as read, personal data masked unless kept; null when it could not be read or copied. */
  input: z.record(z.string(), z.unknown()).nullable(),
});
export type ErrorLine = z.infer<typeof errorLineSchema>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isRow = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 1;
const isKey = (v: unknown): v is string | null => v === null || typeof v === 'string';

/** The hand-written form of resultLineSchema (see the header). */
export function isResultLine(v: unknown): v is ResultLine {
  if (!isObject(v) || !isRow(v.row) || !isKey(v.key) || !isObject(v.stages)) return false;
  for (const k in v.stages) if (!isObject(v.stages[k])) return false;
  return true;
}

/** The fields of an error line that its readers rely on (row, key, code). */
export function isErrorLine(v: unknown): v is ErrorLine {
  return isObject(v) && isRow(v.row) && isKey(v.key) && typeof v.code === 'string';
}

/** results.ndjson a file chunk at a time; a line that is not a result line is null (callers count or refuse it). */
export async function* resultLineBatches(path: string): AsyncGenerator<(ResultLine | null)[]> {
  for await (const batch of readNdjsonBatches<unknown>(path)) yield batch.map((v) => (isResultLine(v) ? v : null));
}

/** errors.ndjson line by line; a line that is not an error line is null. */
export async function* errorLines(path: string): AsyncGenerator<ErrorLine | null> {
  for await (const v of readNdjson<unknown>(path)) yield isErrorLine(v) ? v : null;
}
