/**
 * The spool's chunk size and the variable that sets it, in a module of their own: `run`'s options read the
 * variable (src/cli/run-options/output.ts), and every run parses those options, a usage error too, without
 * loading the spool and the Parquet writer behind it (test/scripts/bundle.test.ts holds this).
 */
import { BreError } from '@bre-batch/core/errors';

/**
 * Rows a chunk holds: one Parquet row group (big enough for good compression and fast scans), and the unit
 * the end uses as it is or encodes again.
 */
export const CHUNK_ROWS = 10_000;

/**
 * The variable that makes a run's chunks smaller (`run` reads it: src/cli/run-options/output.ts), from a tenth of
 * CHUNK_ROWS up to it: smaller row groups for a reader that holds one in memory, and what the end of a resumed
 * run encodes again where its sessions meet. Not larger: the spool's thread holds a row group, and not smaller:
 * each row group's metadata stays in memory for the footer, about 23 KB (docs/decisions/row-group-rows.md).
 */
export const CHUNK_ROWS_VARIABLE = 'BRE_ROW_GROUP_ROWS';
const CHUNK_ROWS_MIN = CHUNK_ROWS / 10;

/** CHUNK_ROWS_VARIABLE's value: undefined when unset or empty, else a whole number in its range (else USAGE). */
export function chunkRowsOf(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const n = /^\s*\d+\s*$/.test(value) ? Number(value) : Number.NaN;
  if (n >= CHUNK_ROWS_MIN && n <= CHUNK_ROWS) return n;
  throw new BreError(
    'USAGE',
    `Expected ${CHUNK_ROWS_VARIABLE} to be a whole number from ${CHUNK_ROWS_MIN} to ${CHUNK_ROWS} (rows per row group of results.parquet), got '${value}'`,
    { field: CHUNK_ROWS_VARIABLE },
  );
}
