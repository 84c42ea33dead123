/**
 * A journal value as the value of a sink column of a kind, for a statement's parameter. Pure, and the same
 * rules as results.parquet's (src/output/files/parquet/schema.ts): a value the kind cannot hold is null there and
 * here (it is whole in the `result` column all the same); text columns take anything, non-text as its JSON.
 */
import type { ColumnKind } from '@bre-batch/core/types';
import { localMillis } from '../files/parquet/schema.js';

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/** Milliseconds since the epoch as `YYYY-MM-DD HH:MM:SS.mmm` (UTC wall clock): both databases read it as a timestamp. */
export function sqlTimestamp(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}`;
}

export function sinkValue(kind: ColumnKind, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (kind) {
    case 'boolean':
      return typeof v === 'boolean' ? v : null;
    case 'int64':
      return typeof v === 'number' && Number.isSafeInteger(v) ? v : null;
    case 'double':
      return typeof v === 'number' && Number.isFinite(v) ? v : null;
    case 'string':
      return typeof v === 'string' ? v : JSON.stringify(v);
    case 'json':
      // As text: the driver would turn an array into a SQL array, not JSON.
      return JSON.stringify(v);
    case 'timestamp_local_ms': {
      const t = typeof v === 'string' ? localMillis(v) : null;
      return t === null ? null : sqlTimestamp(t);
    }
    case 'date': {
      const t = typeof v === 'string' ? localMillis(v) : null;
      return t === null ? null : sqlTimestamp(t).slice(0, 10);
    }
  }
}
