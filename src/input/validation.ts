/**
 * What validating a row yields, in the words of the input: the field errors that become errors.ndjson lines,
 * a value built from a valid row, and the columns a stage reads. Services build requests with these and
 * stage kinds pass them on, so they live below both.
 */

/** A field-level validation failure: becomes one errors.ndjson line (code INVALID_ROW or a more precise one). */
export interface FieldError {
  /** The input column concerned, as the user would name it (e.g. `latitude`, `external.bureau_type`). */
  readonly field: string;
  /** What was expected, in words: "a number between -90 and 90". */
  readonly expected: string;
  /** Full sentence for the errors file. Must not contain the field's value when the field is personal data. */
  readonly message: string;
  /** The same sentence quoting a personal field's value as given, for --keep-personal-data only. */
  readonly quoting?: string;
  /** Defaults to INVALID_ROW. */
  readonly code?:
    | 'INVALID_ROW'
    | 'REPORT_UNREADABLE'
    | 'REPORT_FORMAT_UNKNOWN'
    | 'REPORT_FORMAT_UNSUPPORTED'
    | 'FILE_OUTSIDE_ROOT'
    | 'FILES_ROOT_NEEDED';
}

/** A row checked and turned into `P` (a request body, say), or every problem found in it. */
export type PrepareResult<P> =
  | { readonly ok: true; readonly value: P; readonly warnings?: readonly string[] }
  | { readonly ok: false; readonly errors: readonly FieldError[] };

/** The input columns a stage reads, for `bre-batch pipelines` and the docs. */
export interface ColumnSpec {
  /** Needed in every row: the header check stops a run whose input lacks one (packages/formats/src/input/header.ts). */
  readonly required: readonly string[];
  /** A required column -> other names that may stand in for it (aa_fetch: date_from or datetimerangefrom). */
  readonly alternatives?: Readonly<Record<string, readonly string[]>>;
  readonly optional: readonly string[];
  /** Column -> when it is needed, in words (e.g. "when the bureau is supplied by the caller"). */
  readonly conditional: Readonly<Record<string, string>>;
  /**
   * The columns above that name files, read inside the run's files root (./files-root.ts): an input with
   * no root whose header has one of them is refused before anything is called. Default none.
   */
  readonly files?: readonly string[];
}
