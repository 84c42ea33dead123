/**
 * A row -> the body of POST /execute/{client_id}/{workflow_endpoint} (spec 2.2: user_id, reference_id,
 * input_data). Named workflows (4.2–4.6) are validated field by field from their tables (./endpoints.ts);
 * any other endpoint is a client's own workflow: user_id and reference_id are checked and every other
 * column goes into input_data (./extra-columns.ts). All problems of a row are returned together.
 *
 * For any endpoint, a bureau report given in the row (bureau_raw_json or bureau_report_path) is checked and
 * sent as input_data.external.bureau_raw_json with input_data.external.bureau_type (named or detected), and
 * bank data (bank_data or bank_data_path) as input_data.external.bank_data — the places 4.3–4.5 document.
 */
import type { FieldError, PrepareResult } from '../../input/validation.js';
import type { Json, JsonObject, NumberStyle } from '@bre-batch/core/types';
import { COMMA_STYLE } from '@bre-batch/formats/input/numbers';
import { setPath } from '@bre-batch/formats/input/fields';
import type { FilesRoot } from '../../input/files-root.js';
import type { FileCache } from '../bureau/file-cache.js';
import { BRE_BUREAU_FORMATS } from '../bureau/formats.js';
import { hasReport, REPORT_PATH_FIELD, resolveBureauReport } from '../bureau/report.js';
import { BANK_DATA_FIELD, BANK_PATH_FIELD, hasBankData, resolveBankData } from './bank-data.js';
import {
  BANK_AA_FIELDS,
  BANK_BSA_FIELDS,
  BANK_SUPPLIED_FIELDS,
  bankMode,
  BRE_FORMAT_FIELDS,
  BRE_REPORT_FIELDS,
  BUREAU_FETCHED_FIELDS,
  BUREAU_MOBILE_BANK_FIELDS,
  BUREAU_MOBILE_FIELDS,
  bureauMode,
  isNamedEndpoint,
  LOCATION_FIELDS,
  PERSONAL_COLUMNS,
  REPEAT_FIELDS,
  type NamedEndpoint,
} from './endpoints.js';
import { copyColumns, type ColumnType } from './extra-columns.js';
import { tableSchema, TOP_FIELDS, validateTable, type FieldSpec } from '../field-table.js';

export interface WorkflowRequestOptions {
  /** The folder `bureau_report_path` and `bank_data_path` must lie inside (../../input/files-root.ts). */
  readonly filesRoot: FilesRoot;
  /** Named workflows: further columns sent in input_data as given. Default none. */
  readonly passColumns?: readonly string[];
  /** Client workflows: columns never sent. Default none. */
  readonly excludeColumns?: readonly string[];
  /** Coercion of pass-through columns (CSV text otherwise stays text). Default none. */
  readonly columnTypes?: Readonly<Record<string, ColumnType>>;
  /** How numbers written as text are read (the CSV file's separator, --decimal-comma). Default: a comma file's. */
  readonly numberStyle?: NumberStyle;
  readonly cache?: FileCache;
}

export interface WorkflowRequest {
  readonly body: JsonObject;
  /** The input mode chosen (e.g. `bureau_supplied`, `bank_aa`), or the endpoint kind. */
  readonly mode: string;
}

interface Plan {
  readonly mode: string;
  readonly table: readonly FieldSpec[];
  readonly report: boolean;
  readonly bank?: { readonly allowArray: boolean };
  /** Set when the row fits no mode: the one error to report. */
  readonly noMode?: FieldError;
}

// Field tables and their schemas are built once per number style (one a run), not per row.
const schemas = new Map<NumberStyle, Map<readonly FieldSpec[], ReturnType<typeof tableSchema>>>();
function schemaOf(table: readonly FieldSpec[], style: NumberStyle): ReturnType<typeof tableSchema> {
  let byTable = schemas.get(style);
  if (!byTable) {
    byTable = new Map();
    schemas.set(style, byTable);
  }
  let s = byTable.get(table);
  if (!s) {
    s = tableSchema(table, style);
    byTable.set(table, s);
  }
  return s;
}
const tables = new Map<string, readonly FieldSpec[]>();
function withTop(key: string, fields: readonly FieldSpec[]): readonly FieldSpec[] {
  let t = tables.get(key);
  if (!t) {
    t = [...TOP_FIELDS, ...fields];
    tables.set(key, t);
  }
  return t;
}

function plan(endpoint: NamedEndpoint, data: Record<string, unknown>): Plan {
  switch (endpoint) {
    case 'location_bre':
      return { mode: endpoint, table: withTop(endpoint, LOCATION_FIELDS), report: false };
    case 'repeat_bre':
      return { mode: endpoint, table: withTop(endpoint, REPEAT_FIELDS), report: false };
    case 'bureau_mobile_bank_bre':
      return {
        mode: endpoint,
        table: withTop(endpoint, BUREAU_MOBILE_BANK_FIELDS),
        report: true,
        bank: { allowArray: false },
      };
    case 'bureau_mobile_bre': {
      const mode = bureauMode(data);
      if (mode === 'bureau_supplied') return { mode, table: withTop(mode, BUREAU_MOBILE_FIELDS), report: true };
      if (mode === 'bureau_fetched')
        return { mode, table: withTop(mode, [...BUREAU_MOBILE_FIELDS, ...BUREAU_FETCHED_FIELDS]), report: false };
      const expected = `either a supplied bureau report (external.bureau_raw_json or ${REPORT_PATH_FIELD}, with external.bureau_type) or the personal fields for the workflow to fetch it (${PERSONAL_COLUMNS.join(', ')})`;
      return {
        mode: 'none',
        table: withTop('bureau_mobile_base', BUREAU_MOBILE_FIELDS),
        report: false,
        noMode: {
          field: 'external.bureau_raw_json',
          expected,
          message: `bureau_mobile_bre: the row has no bureau input; expected ${expected}`,
        },
      };
    }
    case 'bank_bre': {
      const mode = bankMode(data);
      if (mode === 'bank_supplied')
        return { mode, table: withTop(mode, BANK_SUPPLIED_FIELDS), report: false, bank: { allowArray: true } };
      if (mode === 'bank_bsa') return { mode, table: withTop(mode, BANK_BSA_FIELDS), report: false };
      if (mode === 'bank_aa') return { mode, table: withTop(mode, BANK_AA_FIELDS), report: false };
      const expected = `one of: request_id (account aggregator, bank_type bank_aa); report_id and auth_token (statement analyzer, bank_type bank_bsa); ${BANK_DATA_FIELD} or ${BANK_PATH_FIELD} with lead_id, declared_income and external.bank_type (supplied)`;
      return {
        mode: 'none',
        table: withTop('top', []),
        report: false,
        noMode: { field: 'bank_type', expected, message: `bank_bre: the row has no bank input; expected ${expected}` },
      };
    }
  }
}

/**
 * Columns a client workflow does not receive as they are: the top-level fields, and — only when the row
 * carries a report / bank data, which are re-placed under input_data.external — the report / bank columns.
 */
const TOP_COLUMNS = ['user_id', 'reference_id'];
const REPORT_COLUMNS = [
  REPORT_PATH_FIELD,
  'bureau_raw_json',
  'external.bureau_raw_json',
  'bureau_type',
  'external.bureau_type',
];
const BANK_COLUMNS = [BANK_PATH_FIELD, 'bank_data', 'external.bank_data'];

function genericColumns(data: Record<string, unknown>, p: Plan, exclude: readonly string[]): string[] {
  const reserved = new Set([
    ...TOP_COLUMNS,
    ...(p.report ? REPORT_COLUMNS : []),
    ...(p.bank ? BANK_COLUMNS : []),
    ...exclude,
  ]);
  return Object.keys(data).filter((c) => !reserved.has(c));
}

/**
 * The request of one row. Synchronous unless the row carries a bureau report or bank data, which may have to
 * be read from a file: a run of thousands of rows a second pays for every promise on its per-row path.
 */
export function buildWorkflowRequest(
  data: Record<string, unknown>,
  endpoint: string,
  opts: WorkflowRequestOptions,
): PrepareResult<WorkflowRequest> | Promise<PrepareResult<WorkflowRequest>> {
  const named = isNamedEndpoint(endpoint);
  const p: Plan = named
    ? plan(endpoint, data)
    : {
        mode: 'custom',
        table: withTop('top', []),
        report: hasReport(data, BRE_REPORT_FIELDS),
        bank: hasBankData(data) ? { allowArray: true } : undefined,
      };
  const errors: FieldError[] = p.noMode ? [p.noMode] : [];
  const warnings: string[] = [];

  const style = opts.numberStyle ?? COMMA_STYLE;
  const validated = validateTable(data, p.table, schemaOf(p.table, style));
  if (!validated.ok) errors.push(...validated.errors);
  const body: Record<string, unknown> = validated.ok ? validated.value : {};
  if (!validated.ok || body.input_data === undefined) body.input_data = {};
  const input = body.input_data as Record<string, unknown>;

  // pass-through columns first, so the documented fields below win over a same-named column
  const extra = named ? (opts.passColumns ?? []) : genericColumns(data, p, opts.excludeColumns ?? []);
  const passInput: Record<string, unknown> = {};
  errors.push(...copyColumns(data, extra, passInput, opts.columnTypes, style));

  const finish = (): PrepareResult<WorkflowRequest> => {
    if (errors.length) return { ok: false, errors };
    body.input_data = mergeUnder(passInput, input);
    return warnings.length
      ? { ok: true, value: { body: body as JsonObject, mode: p.mode }, warnings }
      : { ok: true, value: { body: body as JsonObject, mode: p.mode } };
  };
  if (!p.report && !p.bank) return finish();
  return (async () => {
    if (p.report) {
      const report = await resolveBureauReport(data, {
        accepted: BRE_BUREAU_FORMATS,
        rawFields: BRE_REPORT_FIELDS,
        formatFields: BRE_FORMAT_FIELDS,
        filesRoot: opts.filesRoot,
        cache: opts.cache,
      });
      if (report.ok) {
        warnings.push(...report.value.warnings);
        setPath(input, 'external.bureau_type', report.value.format);
        setPath(input, 'external.bureau_raw_json', report.value.base64);
      } else {
        errors.push(...report.errors);
      }
    }
    if (p.bank) {
      const bank = await resolveBankData(data, {
        allowArray: p.bank.allowArray,
        filesRoot: opts.filesRoot,
        cache: opts.cache,
      });
      if (bank.ok) setPath(input, 'external.bank_data', bank.value);
      else errors.push(...bank.errors);
    }
    return finish();
  })();
}

/** `over` laid on `base`, nested objects merged, undefined leaves dropped. */
function mergeUnder(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, Json> {
  const out: Record<string, unknown> = {};
  for (const src of [base, over]) {
    for (const k of Object.keys(src)) {
      const v = src[k];
      if (v === undefined) continue;
      const prev = out[k];
      const both = isObj(prev) && isObj(v);
      setPath(out, [k], both ? mergeUnder(prev as Record<string, unknown>, v as Record<string, unknown>) : v);
    }
  }
  return out as Record<string, Json>;
}

function isObj(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
