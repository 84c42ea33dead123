/**
 * The named workflows' input tables (spec 2.2, 4.2–4.6) as field tables, and how a row picks its input mode.
 * Every documented field is required in its mode; the spec marks none optional.
 */
import type { ColumnSpec } from '../../input/validation.js';
import { zBoolean, zNumber, zString } from '../../input/coerce.js';
import { getField, getFirstField } from '@bre-batch/formats/input/fields';
import { hasReport, REPORT_PATH_FIELD } from '../bureau/report.js';
import { BANK_DATA_FIELD, BANK_PATH_FIELD, hasBankData } from './bank-data.js';
import { ID_MAX, type FieldSpec } from '../field-table.js';

function str(column: string): FieldSpec {
  return { column, target: `input_data.${column}`, schema: zString() };
}
function num(column: string, rule: Parameters<typeof zNumber>[0] = {}): FieldSpec {
  return { column, target: `input_data.${column}`, schema: zNumber(rule), number: rule };
}

const LEAD_ID = str('lead_id');
const APP_USER_ID: FieldSpec = {
  column: 'app_user_id',
  target: 'input_data.app_user_id',
  schema: zString({ maxLength: ID_MAX }),
};
// the spec types it "number"; a negative income is a data error worth catching before the call
const DECLARED_INCOME = num('declared_income', { min: 0 });
const BANK_TYPES = ['bank_aa', 'bank_bsa'] as const;
const EXTERNAL_BANK_TYPE: FieldSpec = {
  column: 'external.bank_type',
  target: 'input_data.external.bank_type',
  schema: zString({ oneOf: BANK_TYPES }),
};

/** 4.2 */
export const LOCATION_FIELDS: readonly FieldSpec[] = [
  LEAD_ID,
  num('latitude', { min: -90, max: 90 }),
  num('longitude', { min: -180, max: 180 }),
];

/** 4.3, always. */
export const BUREAU_MOBILE_FIELDS: readonly FieldSpec[] = [LEAD_ID, APP_USER_ID, DECLARED_INCOME];

/** The applicant's identity as 4.3 and 4.6 both ask for it (PAN, Aadhaar name and address, phone). */
const IDENTITY_COLUMNS = [
  'pan_number',
  'name_aadhar',
  'address_aadhar',
  'state_aadhar',
  'city_aadhar',
  'pincode_aadhar',
  'phone',
] as const;

/** 4.3, when the workflow fetches the bureau itself. */
export const PERSONAL_COLUMNS = [
  ...IDENTITY_COLUMNS,
  'pan_name',
  'dob',
  'profession',
  'salary_source',
  'loan_purpose',
  'income_type',
  'gender',
] as const;
export const BUREAU_FETCHED_FIELDS: readonly FieldSpec[] = PERSONAL_COLUMNS.map(str);

/** 4.4, the three modes. bank_type is implied by the mode when the row leaves it out. */
export const BANK_AA_FIELDS: readonly FieldSpec[] = [
  str('request_id'),
  {
    column: 'bank_type',
    aliases: ['external.bank_type'],
    target: 'input_data.bank_type',
    schema: zString({ oneOf: ['bank_aa'] }),
    default: 'bank_aa',
  },
];
export const BANK_BSA_FIELDS: readonly FieldSpec[] = [
  str('report_id'),
  str('auth_token'),
  {
    column: 'bank_type',
    aliases: ['external.bank_type'],
    target: 'input_data.bank_type',
    schema: zString({ oneOf: ['bank_bsa'] }),
    default: 'bank_bsa',
  },
];
export const BANK_SUPPLIED_FIELDS: readonly FieldSpec[] = [LEAD_ID, DECLARED_INCOME, EXTERNAL_BANK_TYPE];

/** 4.5 (the report and bank data are resolved by ../bureau/report.ts and ./bank-data.ts). */
export const BUREAU_MOBILE_BANK_FIELDS: readonly FieldSpec[] = [
  LEAD_ID,
  APP_USER_ID,
  DECLARED_INCOME,
  EXTERNAL_BANK_TYPE,
];

/** 4.6: every field required. */
export const REPEAT_FIELDS: readonly FieldSpec[] = [
  ...[...IDENTITY_COLUMNS, 'dob'].map(str),
  ...[
    'max_dpd_last_loan',
    'max_dpd_ever_internal',
    'previous_loan_amount',
    'decided_tenure_last_loan',
    'actual_tenure_last_loan',
    'days_since_last_loan_closed',
    'number_of_loans_closed',
    'days_since_last_loan_taken',
    'days_since_first_loan_taken',
  ].map((c) => num(c)),
  { column: 'flag_current_default', target: 'input_data.flag_current_default', schema: zBoolean() },
  num('number_of_loans_closed_with_dpd_0_full_cycle'),
];

/** Columns that may carry the base64 report for the workflows (4.3, 4.5). */
export const BRE_REPORT_FIELDS = ['external.bureau_raw_json'] as const;
export const BRE_FORMAT_FIELDS = ['external.bureau_type'] as const;

export type NamedEndpoint = 'location_bre' | 'bureau_mobile_bre' | 'bank_bre' | 'bureau_mobile_bank_bre' | 'repeat_bre';
export const NAMED_ENDPOINTS: readonly NamedEndpoint[] = [
  'location_bre',
  'bureau_mobile_bre',
  'bank_bre',
  'bureau_mobile_bank_bre',
  'repeat_bre',
];

export function isNamedEndpoint(endpoint: string): endpoint is NamedEndpoint {
  return (NAMED_ENDPOINTS as readonly string[]).includes(endpoint);
}

export type BureauMode = 'bureau_fetched' | 'bureau_supplied';
export type BankMode = 'bank_aa' | 'bank_bsa' | 'bank_supplied';

/**
 * bureau_mobile_bre (4.3): a row that carries a report (bureau_raw_json or bureau_report_path) or names a
 * bureau_type supplies the bureau; otherwise the workflow fetches it from the personal fields. A row with
 * neither gets `undefined` (one error naming both alternatives). In supplied mode the personal fields are
 * not sent: the spec needs them only when the workflow fetches the bureau, and they are personal data.
 */
export function bureauMode(data: Record<string, unknown>): BureauMode | undefined {
  if (hasReport(data, BRE_REPORT_FIELDS) || getFirstField(data, BRE_FORMAT_FIELDS)) return 'bureau_supplied';
  if (PERSONAL_COLUMNS.some((c) => getField(data, c))) return 'bureau_fetched';
  return undefined;
}

/**
 * bank_bre (4.4): bank data (inline or by path) -> supplied; else report_id, auth_token or bank_type
 * bank_bsa -> statement analyzer; else request_id or bank_type bank_aa -> account aggregator.
 */
export function bankMode(data: Record<string, unknown>): BankMode | undefined {
  if (hasBankData(data)) return 'bank_supplied';
  const bankType = getFirstField(data, ['bank_type', 'external.bank_type'])?.value;
  const t = typeof bankType === 'string' ? bankType.trim() : undefined;
  if (getField(data, 'report_id') || getField(data, 'auth_token') || t === 'bank_bsa') return 'bank_bsa';
  if (getField(data, 'request_id') || t === 'bank_aa') return 'bank_aa';
  return undefined;
}

const TOP_COLUMNS = ['user_id', 'reference_id'];
const REPORT_RAW = 'external.bureau_raw_json';
const REPORT_TYPE = 'external.bureau_type';

/** What `bre-batch pipelines` shows for each named workflow. */
export const NAMED_COLUMNS: Readonly<Record<NamedEndpoint, ColumnSpec>> = {
  location_bre: { required: [...TOP_COLUMNS, 'lead_id', 'latitude', 'longitude'], optional: [], conditional: {} },
  bureau_mobile_bre: {
    required: [...TOP_COLUMNS, 'lead_id', 'app_user_id', 'declared_income'],
    optional: [],
    conditional: {
      ...Object.fromEntries(
        PERSONAL_COLUMNS.map((c) => [c, 'when the workflow fetches the bureau (no report in the row)']),
      ),
      [REPORT_RAW]: `when the caller supplies the bureau: base64 of the report (or give ${REPORT_PATH_FIELD})`,
      [REPORT_PATH_FIELD]: `when the caller supplies the bureau: the report file, instead of ${REPORT_RAW}`,
      [REPORT_TYPE]: 'with a supplied report: its format (2.7); detected from the report when absent',
    },
    files: [REPORT_PATH_FIELD],
  },
  bank_bre: {
    required: [...TOP_COLUMNS],
    optional: [],
    conditional: {
      request_id: 'account aggregator mode: the prior AA request id',
      report_id: 'statement analyzer mode',
      auth_token: 'statement analyzer mode (a secret: masked in every output)',
      bank_type: 'AA or statement analyzer mode: bank_aa or bank_bsa (implied by request_id / report_id when absent)',
      lead_id: 'supplied mode',
      declared_income: 'supplied mode',
      'external.bank_type': 'supplied mode: bank_aa or bank_bsa',
      [BANK_DATA_FIELD]: `supplied mode: one account object or an array of them (2.6), or give ${BANK_PATH_FIELD}`,
      [BANK_PATH_FIELD]: `supplied mode: a JSON file of the bank data, instead of ${BANK_DATA_FIELD}`,
    },
    files: [BANK_PATH_FIELD],
  },
  bureau_mobile_bank_bre: {
    required: [...TOP_COLUMNS, 'lead_id', 'app_user_id', 'declared_income', 'external.bank_type'],
    optional: [REPORT_TYPE],
    conditional: {
      [REPORT_RAW]: `base64 of the bureau report, unless ${REPORT_PATH_FIELD} is given`,
      [REPORT_PATH_FIELD]: `the bureau report file, unless ${REPORT_RAW} is given`,
      [BANK_DATA_FIELD]: `one account object (2.6), unless ${BANK_PATH_FIELD} is given`,
      [BANK_PATH_FIELD]: `a JSON file of one account, unless ${BANK_DATA_FIELD} is given`,
    },
    files: [REPORT_PATH_FIELD, BANK_PATH_FIELD],
  },
  repeat_bre: { required: [...TOP_COLUMNS, ...REPEAT_FIELDS.map((f) => f.column)], optional: [], conditional: {} },
};
