/**
 * Bank data supplied by the caller (spec 2.6; bank_bre "Supplied by the caller" in 4.4, and 4.5).
 * Sources (CONTRACT "Input"): `bank_data` (or `external.bank_data`): an object or array in NDJSON, or its
 * JSON text in a CSV cell; or `bank_data_path`: a JSON file inside the run's files root (the input file's
 * folder or --files-root: ../row-file.ts), read, parsed and checked once per run (../bureau/file-cache.ts).
 *
 * Shape checks follow 2.6 to the letter where it is definite: an account is an object with `metadata`
 * (object) and `transaction_data` (array) — both required by 4.5. The spec does not say which metadata and
 * transaction fields are required, so fields are checked only when present: metadata fields are strings;
 * txnId, type, narration strings; amount a number; currentBalance numeric text; transactionTimestamp
 * `YYYY-MM-DD HH:MM:SS`. At most MAX_PROBLEMS problems are listed per row, then a count.
 */
import type { Json } from '@bre-batch/core/types';
import type { FieldError } from '../../input/validation.js';
import { describeValue } from '../../input/coerce.js';
import { getField, isPlainObject, type FieldValue } from '@bre-batch/formats/input/fields';
import type { FilesRoot } from '../../input/files-root.js';
import type { FileCache } from '../bureau/file-cache.js';
import { readRowFile } from '../row-file.js';

export const BANK_DATA_FIELD = 'external.bank_data';
export const BANK_PATH_FIELD = 'bank_data_path';
const MAX_PROBLEMS = 10;

const METADATA_FIELDS = [
  'currency',
  'bank_name',
  'ifsc_code',
  'account_type',
  'employer_name',
  'account_number',
  'account_holder_name',
  'statement_fetch_date',
  'statement_start_date',
  'statement_end_date',
] as const;
const TIMESTAMP_RE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const NUMERIC_TEXT_RE = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;

/** A problem inside the bank data: `at` is the path inside it (`transaction_data[3].amount`). */
interface Problem {
  readonly at: string;
  readonly expected: string;
  readonly got: string;
}

function checkAccount(acc: unknown, at: string, out: Problem[]): void {
  const prefix = at ? `${at}.` : '';
  if (!isPlainObject(acc)) {
    out.push({
      at: at || '(top level)',
      expected: 'an account object with metadata and transaction_data',
      got: describeValue(acc, true),
    });
    return;
  }
  const meta = acc.metadata;
  if (!isPlainObject(meta)) {
    out.push({ at: `${prefix}metadata`, expected: 'an object (account metadata)', got: describeValue(meta, true) });
  } else {
    for (const f of METADATA_FIELDS) {
      const v = meta[f];
      if (v !== undefined && v !== null && typeof v !== 'string')
        out.push({ at: `${prefix}metadata.${f}`, expected: 'a string', got: describeValue(v, true) });
    }
  }
  const txns = acc.transaction_data;
  if (!Array.isArray(txns)) {
    out.push({ at: `${prefix}transaction_data`, expected: 'an array of transactions', got: describeValue(txns, true) });
    return;
  }
  txns.forEach((t, i) => {
    const tp = `${prefix}transaction_data[${i}]`;
    if (!isPlainObject(t)) {
      out.push({ at: tp, expected: 'a transaction object', got: describeValue(t, true) });
      return;
    }
    for (const f of ['txnId', 'type', 'narration'] as const) {
      const v = t[f];
      if (v !== undefined && typeof v !== 'string')
        out.push({ at: `${tp}.${f}`, expected: 'a string', got: describeValue(v, f === 'narration') });
    }
    if (t.amount !== undefined && (typeof t.amount !== 'number' || !Number.isFinite(t.amount))) {
      out.push({ at: `${tp}.amount`, expected: 'a number', got: describeValue(t.amount) });
    }
    const bal = t.currentBalance;
    if (bal !== undefined && !(typeof bal === 'string' && NUMERIC_TEXT_RE.test(bal.trim()))) {
      out.push({
        at: `${tp}.currentBalance`,
        expected: 'numeric text, e.g. "1520.75"',
        got: typeof bal === 'number' ? `the number ${bal}` : describeValue(bal),
      });
    }
    const ts = t.transactionTimestamp;
    if (ts !== undefined && !(typeof ts === 'string' && TIMESTAMP_RE.test(ts))) {
      out.push({
        at: `${tp}.transactionTimestamp`,
        expected: 'a timestamp YYYY-MM-DD HH:MM:SS',
        got: describeValue(ts),
      });
    }
  });
}

/** All shape problems of bank data, whether one account or an array of accounts. */
function bankDataProblems(value: unknown): Problem[] {
  const out: Problem[] = [];
  if (Array.isArray(value)) {
    if (value.length === 0) out.push({ at: '(top level)', expected: 'at least one account', got: 'an empty array' });
    value.forEach((acc, i) => {
      checkAccount(acc, `[${i}]`, out);
    });
  } else {
    checkAccount(value, '', out);
  }
  return out;
}

function toFieldErrors(column: string, problems: readonly Problem[]): FieldError[] {
  const shown = problems.slice(0, MAX_PROBLEMS).map(
    (p): FieldError => ({
      field: column,
      expected: p.expected,
      message: `${column}: ${p.at}: Expected ${p.expected}, got ${p.got}`,
    }),
  );
  if (problems.length > MAX_PROBLEMS) {
    shown.push({
      field: column,
      expected: 'bank data in the shape of spec 2.6',
      message: `${column}: ... and ${problems.length - MAX_PROBLEMS} more problems`,
    });
  }
  return shown;
}

/** Shape errors of bank data as FieldErrors of `column`; `allowArray` is true for bank_bre only (4.4). */
function checkBankData(value: unknown, column: string, allowArray: boolean): FieldError[] {
  if (Array.isArray(value) && !allowArray) return [arrayRefused(column)];
  return toFieldErrors(column, bankDataProblems(value));
}

function arrayRefused(column: string): FieldError {
  const expected = 'one account (an object with metadata and transaction_data)';
  return {
    field: column,
    expected,
    message: `${column}: Expected ${expected}, got an array of accounts; several accounts are accepted by bank_bre only`,
  };
}

export interface BankDataOptions {
  readonly allowArray: boolean;
  /** The folder `bank_data_path` must lie inside (relative paths resolve against it). */
  readonly filesRoot: FilesRoot;
  readonly cache?: FileCache;
}

export type BankDataResult =
  | { readonly ok: true; readonly value: Json; readonly column: string }
  | { readonly ok: false; readonly errors: FieldError[] };

export function hasBankData(data: Record<string, unknown>): boolean {
  return getField(data, BANK_DATA_FIELD) !== undefined || getField(data, BANK_PATH_FIELD) !== undefined;
}

interface ParsedFile {
  readonly value?: Json;
  readonly parseError?: string;
  readonly problems: readonly Problem[];
}

function parseFile(bytes: Buffer): ParsedFile {
  let value: Json;
  try {
    value = JSON.parse(bytes.toString('utf8')) as Json;
  } catch (err) {
    const pos = /position (\d+)/.exec(String((err as Error).message));
    return { parseError: `the file is not JSON${pos ? ` (syntax error at character ${pos[1]})` : ''}`, problems: [] };
  }
  return { value, problems: bankDataProblems(value) };
}

async function fromPath(field: FieldValue, opts: BankDataOptions): Promise<BankDataResult> {
  const expected = 'the path of a JSON bank data file';
  const read = await readRowFile(field, { what: 'bank data', expected, kind: 'bank-data', transform: parseFile }, opts);
  if (!read.ok) return { ok: false, errors: [read.error] };
  const parsed = read.value;
  const given = read.given;
  if (parsed.parseError !== undefined || parsed.value === undefined) {
    return {
      ok: false,
      errors: [
        {
          field: field.column,
          expected,
          message: `${field.column}: ${parsed.parseError} ('${given}')`,
          code: 'REPORT_UNREADABLE',
        },
      ],
    };
  }
  if (Array.isArray(parsed.value) && !opts.allowArray) return { ok: false, errors: [arrayRefused(field.column)] };
  if (parsed.problems.length) return { ok: false, errors: toFieldErrors(field.column, parsed.problems) };
  return { ok: true, value: parsed.value, column: field.column };
}

function fromInline(field: FieldValue, opts: BankDataOptions): BankDataResult {
  let value: unknown = field.value;
  if (typeof value === 'string') {
    // a CSV cell holds the JSON text
    try {
      value = JSON.parse(value);
    } catch {
      const expected = 'bank data as a JSON object (or array of them)';
      return {
        ok: false,
        errors: [
          {
            field: field.column,
            expected,
            message: `${field.column}: Expected ${expected}, got text that is not JSON`,
          },
        ],
      };
    }
  }
  const errors = checkBankData(value, field.column, opts.allowArray);
  return errors.length ? { ok: false, errors } : { ok: true, value: value as Json, column: field.column };
}

/** The row's bank data, checked; a row with neither source gets one "missing" error. */
export async function resolveBankData(data: Record<string, unknown>, opts: BankDataOptions): Promise<BankDataResult> {
  const inline = getField(data, BANK_DATA_FIELD);
  const path = getField(data, BANK_PATH_FIELD);
  if (inline && path) {
    return {
      ok: false,
      errors: [
        {
          field: BANK_PATH_FIELD,
          expected: `either ${inline.column} or ${BANK_PATH_FIELD}, not both`,
          message: `${BANK_PATH_FIELD}: the row gives bank data twice (${inline.column} and ${BANK_PATH_FIELD}); keep one`,
        },
      ],
    };
  }
  if (inline) return fromInline(inline, opts);
  if (path) return fromPath(path, opts);
  const expected = `bank data (spec 2.6) in ${BANK_DATA_FIELD}, or its JSON file in ${BANK_PATH_FIELD}`;
  return {
    ok: false,
    errors: [
      {
        field: BANK_DATA_FIELD,
        expected,
        message: `Missing required field '${BANK_DATA_FIELD}': expected ${expected}`,
      },
    ],
  };
}
