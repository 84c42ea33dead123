/**
 * A row -> the body of POST /api/bureau (spec 2.8: user_id, reference_id, fetched_timestamp, raw_data,
 * format_type; all required, all strings).
 *
 * - raw_data: from `raw_data`, `bureau_raw_json` (base64) or `bureau_report_path` (./report.ts).
 * - format_type: the stage's forced `format`, else `format_type`, else `bureau_type`, else detected.
 *   bureau_c_softpull_json_v2 is refused here: 2.7 does not list it for the bureau feature endpoint.
 * - fetched_timestamp: from the `fetched_timestamp` column: `YYYY-MM-DD HH:MM:SS` as is; ISO 8601
 *   (`2024-05-01T10:15:00+05:30`, `...Z`, fractions) or a date alone are accepted and written
 *   `YYYY-MM-DD HH:MM:SS` with the date and time AS WRITTEN (the offset is dropped, not applied: the spec
 *   names no time zone, so the clock the user's system wrote is kept). Absent: the run's clock now, in UTC.
 */
import type { FieldError, PrepareResult } from '../../input/validation.js';
import type { JsonObject } from '@bre-batch/core/types';
import { fieldError } from '../../input/coerce.js';
import { getField } from '@bre-batch/formats/input/fields';
import type { FilesRoot } from '../../input/files-root.js';
import { tableSchema, TOP_FIELDS, validateTable } from '../field-table.js';
import type { FileCache } from './file-cache.js';
import { FEATURE_FORMAT_TYPES } from './formats.js';
import { resolveBureauReport } from './report.js';

export const BUREAU_PATH = '/api/bureau';
const BUREAU_RAW_FIELDS = ['raw_data', 'external.bureau_raw_json'] as const;
const BUREAU_FORMAT_FIELDS = ['format_type', 'external.bureau_type'] as const;
export const REFUSED_FEATURE_FORMATS: Readonly<Record<string, string>> = {
  bureau_c_softpull_json_v2:
    'bureau_c_softpull_json_v2 is not accepted by the bureau feature endpoint /api/bureau (spec 2.7 lists it for the workflows only)',
};

export interface BureauRequestOptions {
  /** The folder `bureau_report_path` must lie inside (../../input/files-root.ts). */
  readonly filesRoot: FilesRoot;
  /** A format forced for every row (stage option `format`). */
  readonly format?: string;
  readonly now: () => Date;
  readonly cache?: FileCache;
}

const TS_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?\s*(?:Z|[+-]\d{2}:?\d{2})?$/i;
const TS_EXPECTED = 'a timestamp YYYY-MM-DD HH:MM:SS (ISO 8601 accepted)';

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** `YYYY-MM-DD HH:MM:SS` of a date, in UTC (spec 2.8 shape). */
export function formatTimestampUtc(d: Date): string {
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** The 2.8 shape of a user's timestamp, or undefined when it is not a real date and time. */
export function parseFetchedTimestamp(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const m = TS_RE.exec(value.trim());
  if (!m) return undefined;
  const [y, mo, d, h = 0, mi = 0, s = 0] = m
    .slice(1, 7)
    .map((x) => (x === undefined ? undefined : Number(x))) as number[];
  const probe = new Date(Date.UTC(y, mo - 1, d));
  if (probe.getUTCMonth() !== mo - 1 || probe.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) return undefined;
  return `${m[1]}-${m[2]}-${m[3]} ${pad(h)}:${pad(mi)}:${pad(s)}`;
}

const topSchema = tableSchema(TOP_FIELDS);

export async function buildBureauFeaturesRequest(
  data: Record<string, unknown>,
  opts: BureauRequestOptions,
): Promise<PrepareResult<{ readonly body: JsonObject }>> {
  const errors: FieldError[] = [];
  const top = validateTable(data, TOP_FIELDS, topSchema);
  if (!top.ok) errors.push(...top.errors);

  let fetched: string | undefined;
  const ts = getField(data, 'fetched_timestamp');
  if (ts) {
    fetched = parseFetchedTimestamp(ts.value);
    if (fetched === undefined) errors.push(fieldError(ts.column, TS_EXPECTED, ts.value));
  } else {
    fetched = formatTimestampUtc(opts.now());
  }

  const report = await resolveBureauReport(data, {
    accepted: FEATURE_FORMAT_TYPES,
    rawFields: BUREAU_RAW_FIELDS,
    formatFields: BUREAU_FORMAT_FIELDS,
    forcedFormat: opts.format,
    filesRoot: opts.filesRoot,
    refusedFormats: REFUSED_FEATURE_FORMATS,
    cache: opts.cache,
  });
  if (!report.ok) errors.push(...report.errors);
  if (errors.length || !top.ok || !report.ok || fetched === undefined) return { ok: false, errors };

  const body: JsonObject = {
    user_id: top.value.user_id as string,
    reference_id: top.value.reference_id as string,
    fetched_timestamp: fetched,
    raw_data: report.value.base64,
    format_type: report.value.format,
  };
  return report.value.warnings.length
    ? { ok: true, value: { body }, warnings: report.value.warnings }
    : { ok: true, value: { body } };
}
