/**
 * Parquet column types of the output files, and how a JSON value becomes a value of that type. Pure: the
 * writer (./table-writer.ts) hands each row group's values through `convert`.
 *
 * Result columns get their type from the JSON types seen in the column (src/output/journal/columns.ts):
 * only booleans BOOLEAN, only integers INT64, numbers DOUBLE, only text UTF8, only arrays/objects JSON
 * (UTF8 text with the JSON logical type, so DuckDB and pyarrow read it as JSON); a column of mixed types
 * is text, each value as results.csv writes it (text as is, anything else as JSON). Nulls stay null.
 */
import type { SchemaElement } from 'hyparquet-writer';
import type { ColumnKind } from '@bre-batch/core/types';
import { TYPE } from '../../journal/columns.js';

/** The column kinds are one list for Parquet and the database sink (packages/core/src/types.ts). */
export type ParquetKind = ColumnKind;

export interface ParquetColumn {
  readonly name: string;
  readonly kind: ParquetKind;
}

export function kindOfTypes(types: number): ParquetKind {
  if (types === TYPE.bool) return 'boolean';
  if (types === TYPE.int) return 'int64';
  if (types !== 0 && (types & ~(TYPE.int | TYPE.float)) === 0) return 'double';
  if (types !== 0 && (types & ~(TYPE.array | TYPE.object)) === 0) return 'json';
  return 'string';
}

function schemaElement(c: ParquetColumn): SchemaElement {
  const base = { name: c.name, repetition_type: 'OPTIONAL' as const };
  switch (c.kind) {
    case 'boolean':
      return { ...base, type: 'BOOLEAN' };
    case 'int64':
      return { ...base, type: 'INT64' };
    case 'double':
      return { ...base, type: 'DOUBLE' };
    case 'string':
      return { ...base, type: 'BYTE_ARRAY', converted_type: 'UTF8' };
    case 'json':
      return { ...base, type: 'BYTE_ARRAY', converted_type: 'JSON' };
    case 'timestamp_local_ms':
      return { ...base, type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'MILLIS' } };
    case 'date':
      return { ...base, type: 'INT32', converted_type: 'DATE' };
  }
}

export function schemaOf(columns: readonly ParquetColumn[]): SchemaElement[] {
  return [{ name: 'root', num_children: columns.length }, ...columns.map(schemaElement)];
}

const ISO_LOCAL = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?/;

/** Milliseconds of the wall-clock time written in an ISO text, as if it were UTC (null when not ISO). */
export function localMillis(text: string): number | null {
  const m = ISO_LOCAL.exec(text);
  if (!m) return null;
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
  const t = Date.UTC(
    Number(m[1]),
    Number(m[2]) - 1,
    Number(m[3]),
    Number(m[4] ?? 0),
    Number(m[5] ?? 0),
    Number(m[6] ?? 0),
    ms,
  );
  return Number.isFinite(t) ? t : null;
}

/** The offset an ISO text carries (`Z` as `+00:00`), or null when it has none. */
export function isoOffset(text: string): string | null {
  const m = /(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})$/.exec(text);
  if (!m) return null;
  if (m[1] === 'Z') return '+00:00';
  return m[1].includes(':') ? m[1] : `${m[1].slice(0, 3)}:${m[1].slice(3)}`;
}

/** A JSON value as a value of the column's type; what does not fit is null (never thrown: one odd value must not lose the file). */
export function convert(kind: ParquetKind, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (kind) {
    case 'boolean':
      return typeof v === 'boolean' ? v : null;
    case 'int64':
      return typeof v === 'number' && Number.isSafeInteger(v) ? BigInt(v) : null;
    case 'double':
      return typeof v === 'number' && Number.isFinite(v) ? v : null;
    case 'string':
      return typeof v === 'string' ? v : JSON.stringify(v);
    case 'json':
      return typeof v === 'object' ? v : null;
    case 'timestamp_local_ms': {
      const t = typeof v === 'string' ? localMillis(v) : null;
      return t === null ? null : BigInt(t);
    }
    case 'date': {
      const t = typeof v === 'string' ? localMillis(v) : null;
      return t === null ? null : Math.floor(t / 86_400_000);
    }
  }
}
