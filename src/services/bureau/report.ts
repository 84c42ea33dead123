/**
 * The raw bureau report of a row, ready to send: base64 text and its format name (spec 2.7: "The report
 * is encoded as a base64 string of the report text in UTF-8 before sending").
 *
 * Sources (CONTRACT "Input"): base64 in `bureau_raw_json` (or `external.bureau_raw_json`; `raw_data` for the
 * bureau feature stage), or a file named by `bureau_report_path`, inside the run's files root (the input
 * file's folder or --files-root: ../row-file.ts), read once per run (./file-cache.ts) and encoded here.
 * Giving both is an error (which one is meant?).
 *
 * Checked before sending, because the service answers 500 to a report it cannot decode (spec 4.7, 7):
 * valid standard base64, UTF-8 text, JSON (XML for bureau_b_xml). The SOAP form of bureau_c is refused
 * (REPORT_FORMAT_UNSUPPORTED). Format: a forced format (stage option) wins, then the row's format column,
 * then detection (./detect.ts); undetectable -> REPORT_FORMAT_UNKNOWN. A named format that disagrees with
 * what detection sees is sent as named, with a warning.
 */
import type { FieldError } from '../../input/validation.js';
import { describeValue, fieldError } from '../../input/coerce.js';
import { getField, getFirstField, type FieldValue } from '@bre-batch/formats/input/fields';
import { inspectReport, type ReportInspection } from './detect.js';
import type { FilesRoot } from '../../input/files-root.js';
import { readRowFile } from '../row-file.js';
import type { FileCache } from './file-cache.js';
import { XML_FORMATS, type BureauFormat } from './formats.js';

export const REPORT_PATH_FIELD = 'bureau_report_path';

export interface ReportOptions {
  /** Format names this endpoint accepts (2.7: bureau_format_name or format_type). */
  readonly accepted: readonly BureauFormat[];
  /** Columns that may hold base64, most specific first; the first names the field in errors. */
  readonly rawFields: readonly string[];
  /** Columns that may name the format, most specific first. */
  readonly formatFields: readonly string[];
  /** A format forced by the stage's options; beats the row. */
  readonly forcedFormat?: string;
  /** The folder `bureau_report_path` must lie inside (relative paths resolve against it). */
  readonly filesRoot: FilesRoot;
  /** Why a known name is not accepted here (bureau_c_softpull_json_v2 at /api/bureau). */
  readonly refusedFormats?: Readonly<Record<string, string>>;
  readonly cache?: FileCache;
}

interface ResolvedReport {
  readonly base64: string;
  readonly format: BureauFormat;
  /** Column the report came from (`bureau_raw_json`, `bureau_report_path`, ...). */
  readonly column: string;
  /** Column that named the format; undefined when forced or detected. */
  readonly formatColumn?: string;
  readonly detected: boolean;
  readonly warnings: readonly string[];
}

export type ReportResult =
  | { readonly ok: true; readonly value: ResolvedReport }
  | { readonly ok: false; readonly errors: FieldError[] };

/** True when the row carries a report in any of its accepted columns (used to choose a workflow's mode). */
export function hasReport(data: Record<string, unknown>, rawFields: readonly string[]): boolean {
  return getFirstField(data, rawFields) !== undefined || getField(data, REPORT_PATH_FIELD) !== undefined;
}

interface Loaded {
  readonly base64: string;
  readonly inspection: ReportInspection;
}

const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

function analyse(bytes: Buffer): ReportInspection {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return {
      syntax: 'invalid',
      syntaxError: 'is not UTF-8 text',
      result: { unknown: 'the report is not UTF-8 text', code: 'REPORT_FORMAT_UNKNOWN' },
    };
  }
  return inspectReport(text);
}

function fromBase64(field: FieldValue): Loaded | FieldError {
  const expected = 'base64 of the bureau report';
  if (typeof field.value !== 'string')
    return fieldError(field.column, expected, field.value, { code: 'REPORT_UNREADABLE' });
  const b64 = field.value.replace(/\s+/g, '');
  if (b64.startsWith('{') || b64.startsWith('<')) {
    return {
      field: field.column,
      expected,
      code: 'REPORT_UNREADABLE',
      message: `${field.column}: Expected ${expected}, got the report text itself: encode it as base64, or give its file in ${REPORT_PATH_FIELD}`,
    };
  }
  if (!BASE64_RE.test(b64)) {
    const why =
      /[-_]/.test(b64) && /^[A-Za-z0-9_-]+={0,2}$/.test(b64)
        ? 'URL-safe base64 (- and _); the service decodes standard base64 (+ and /)'
        : b64.length % 4 !== 0
          ? `text whose length (${b64.length}) is not a multiple of 4 (truncated or unpadded base64?)`
          : 'characters outside the base64 alphabet';
    return {
      field: field.column,
      expected,
      code: 'REPORT_UNREADABLE',
      message: `${field.column}: Expected ${expected}, got ${why}`,
    };
  }
  return { base64: b64, inspection: analyse(Buffer.from(b64, 'base64')) };
}

async function fromPath(field: FieldValue, opts: ReportOptions): Promise<Loaded | FieldError> {
  const read = await readRowFile(
    field,
    {
      what: 'bureau report',
      expected: 'the path of a readable bureau report file',
      kind: 'bureau-report',
      transform: (bytes): Loaded => ({ base64: bytes.toString('base64'), inspection: analyse(bytes) }),
    },
    opts,
  );
  return read.ok ? read.value : read.error;
}

function isFieldError(x: Loaded | FieldError): x is FieldError {
  return 'message' in x;
}

export async function resolveBureauReport(data: Record<string, unknown>, opts: ReportOptions): Promise<ReportResult> {
  const errors: FieldError[] = [];
  const warnings: string[] = [];
  const acceptedText = opts.accepted.join(', ');

  // the format the user names, checked against the endpoint's list
  const named =
    opts.forcedFormat !== undefined
      ? { value: opts.forcedFormat, column: 'options.format' }
      : getFirstField(data, opts.formatFields);
  let namedFormat: BureauFormat | undefined;
  if (named) {
    const v = typeof named.value === 'string' ? named.value.trim() : named.value;
    if (typeof v === 'string' && (opts.accepted as readonly string[]).includes(v)) {
      namedFormat = v as BureauFormat;
    } else {
      const refused = typeof v === 'string' ? opts.refusedFormats?.[v] : undefined;
      errors.push(
        refused
          ? {
              field: named.column,
              expected: `one of ${acceptedText}`,
              message: `${named.column}: ${refused}`,
              code: 'REPORT_FORMAT_UNSUPPORTED',
            }
          : {
              field: named.column,
              expected: `one of ${acceptedText}`,
              message: `${named.column}: Expected one of ${acceptedText}, got ${describeValue(v)}`,
            },
      );
    }
  }

  const raw = getFirstField(data, opts.rawFields);
  const path = getField(data, REPORT_PATH_FIELD);
  if (raw && path) {
    errors.push({
      field: REPORT_PATH_FIELD,
      expected: `either ${raw.column} or ${REPORT_PATH_FIELD}, not both`,
      message: `${REPORT_PATH_FIELD}: the row gives the report twice (${raw.column} and ${REPORT_PATH_FIELD}); keep one`,
    });
    return { ok: false, errors };
  }
  if (!raw && !path) {
    errors.push({
      field: opts.rawFields[0],
      expected: `base64 of the bureau report, or its file in ${REPORT_PATH_FIELD}`,
      message: `Missing required field '${opts.rawFields[0]}': expected base64 of the bureau report, or its file in ${REPORT_PATH_FIELD}`,
    });
    return { ok: false, errors };
  }
  const source = (raw ?? path) as FieldValue;
  const loaded = raw ? fromBase64(raw) : await fromPath(source, opts);
  if (isFieldError(loaded)) return { ok: false, errors: [...errors, loaded] };

  const { inspection } = loaded;
  const { result } = inspection;
  if ('unknown' in result && result.code === 'REPORT_FORMAT_UNSUPPORTED') {
    errors.push({
      field: source.column,
      expected: `a report in one of ${acceptedText}`,
      message: `${source.column}: ${result.unknown}`,
      code: 'REPORT_FORMAT_UNSUPPORTED',
    });
    return { ok: false, errors };
  }
  if (inspection.syntax === 'invalid') {
    const expected = `a JSON bureau report${opts.accepted.some((f) => XML_FORMATS.has(f)) ? ' (XML for bureau_b_xml)' : ''}`;
    errors.push({
      field: source.column,
      expected,
      message: `${source.column}: Expected ${expected}; the report ${inspection.syntaxError}`,
      code: 'REPORT_UNREADABLE',
    });
    return { ok: false, errors };
  }
  if (errors.length) return { ok: false, errors };

  if (namedFormat) {
    const wantsXml = XML_FORMATS.has(namedFormat);
    if (wantsXml !== (inspection.syntax === 'xml')) {
      const col = named?.column ?? 'format';
      return {
        ok: false,
        errors: [
          {
            field: col,
            expected: `a format matching the report (${inspection.syntax.toUpperCase()})`,
            message: `${col}: ${namedFormat} is an ${wantsXml ? 'XML' : 'JSON'} format but the report in ${source.column} is ${inspection.syntax.toUpperCase()}`,
          },
        ],
      };
    }
    if ('format' in result && result.format !== namedFormat) {
      warnings.push(
        `${named?.column}: the row names ${namedFormat} but the report looks like ${result.format}; sent as ${namedFormat}`,
      );
    }
    return {
      ok: true,
      value: {
        base64: loaded.base64,
        format: namedFormat,
        column: source.column,
        formatColumn: opts.forcedFormat === undefined ? named?.column : undefined,
        detected: false,
        warnings,
      },
    };
  }
  if ('format' in result && (opts.accepted as readonly string[]).includes(result.format)) {
    return {
      ok: true,
      value: { base64: loaded.base64, format: result.format, column: source.column, detected: true, warnings },
    };
  }
  const reason = 'unknown' in result ? result.unknown : `${result.format} is not accepted here`;
  return {
    ok: false,
    errors: [
      {
        field: source.column,
        expected: `a report whose format can be detected, or the format named in ${opts.formatFields[0]}`,
        message: `${source.column}: cannot tell the bureau format of the report (${reason}); name it in ${opts.formatFields[0]} (one of ${acceptedText})`,
        code: 'REPORT_FORMAT_UNKNOWN',
      },
    ],
  };
}
