/** Shared shapes that cross folder boundaries: a row as read, and a stage's normalised result. */

/** A plain JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/**
 * How a number written as text is read, which depends on the file: in a comma-separated file a comma in a
 * number can only group digits; in a file separated otherwise it may be a decimal comma, and is not guessed
 * (src/input/coerce.ts).
 */
export interface NumberStyle {
  /** --decimal-comma: the comma is the decimal separator and dots group digits. */
  readonly decimalComma: boolean;
  /** The CSV file's field separator; ',' for NDJSON and Parquet, whose numbers are typed. */
  readonly separator: string;
}

/** One data row as the reader hands it over. */
export interface InputRow {
  /** Data row number, from 1 (the header is not a data row). */
  readonly row: number;
  /** Physical line in the input where the row starts, from 1. */
  readonly line: number;
  /** Column name -> raw value (strings for CSV; any JSON for NDJSON). */
  readonly data: Record<string, unknown>;
  /**
   * Set when the row could not be read (ragged CSV, NDJSON that is not an object...), or, from a database,
   * has no key or shares its key with other rows (src/input/db/).
   */
  readonly readError?: {
    readonly code: 'MALFORMED_ROW' | 'MISSING_KEY' | 'DUPLICATE_KEY';
    readonly message: string;
    readonly expected: string;
    readonly field?: string;
  };
  /**
   * A database row: its key as the database gave it, as text (null: NULL), which a resume passes back to start
   * after it. The key written to the output files is the row's key column as for any row (src/input/shard.ts).
   */
  readonly sourceKey?: string | null;
  /**
   * A database row that is the last of its key (or of the rows without a key): every row read up to it has
   * been read, whatever the database's order among equal keys, so a resume may start after its key.
   */
  readonly groupEnd?: boolean;
}

/**
 * A stage's normalised result: flat keys (dotted for features, `<engine>.<feature>`), values JSON.
 * Arrays (loan_offers, rules_failed) stay arrays in NDJSON and are JSON-encoded in CSV.
 */
export type NormalisedResult = Record<string, Json>;

/** One bank transaction in the one schema shared by AA and BSA (contract: transactions.csv). */
export interface NormalisedTransaction {
  readonly source: 'aa' | 'bsa';
  readonly account: string;
  readonly txn_id: string | null;
  /** ISO-8601. */
  readonly timestamp: string | null;
  /** ISO date (YYYY-MM-DD) when known. */
  readonly value_date: string | null;
  readonly type: 'DEBIT' | 'CREDIT';
  /** Always positive; the sign is in `type`. */
  readonly amount: number;
  readonly balance: number | null;
  readonly mode: string | null;
  readonly narration: string | null;
}

/** A value the service returned that must never reach results, errors or logs (report URLs, file passwords). */
export interface SecretValue {
  readonly name: string;
  readonly value: string;
  /** ISO-8601, when the secret expires (report links: 7 days). */
  readonly expiresAt?: string;
}

/** The three services of the API; every per-service table is built from this list. */
export const SERVICES = ['workflow', 'bureau', 'account'] as const;
export type ServiceName = (typeof SERVICES)[number];

/** A value for every service, in SERVICES order. */
export function perService<T>(value: (service: ServiceName) => T): Record<ServiceName, T> {
  return Object.fromEntries(SERVICES.map((s) => [s, value(s)])) as Record<ServiceName, T>;
}

/**
 * The type of an output column, one list for every place that types columns: results.parquet
 * (src/output/files/parquet/schema.ts) and the database sink's tables (src/db/sink-sql.ts, src/output/sink/).
 */
export type ColumnKind =
  | 'boolean'
  | 'int64'
  | 'double'
  | 'string'
  | 'json'
  /** Wall-clock time as the source wrote it (no offset applied). */
  | 'timestamp_local_ms'
  /** A calendar date. */
  | 'date';

/**
 * A field a stage kind declares its results have (`StageKind.resultFields`): its name in the stage's result and
 * the kind of its values, so that results.parquet and the sink's tables have its column, typed, before any
 * value is seen. A value of another kind widens the column as a field never declared would.
 */
export interface ResultField {
  readonly name: string;
  readonly kind: ColumnKind;
}

/** `fields(kind, 'a', 'b')`: result fields of one kind, for a stage kind's declaration. */
export function resultFields(kind: ColumnKind, ...names: readonly string[]): ResultField[] {
  return names.map((name) => ({ name, kind }));
}
