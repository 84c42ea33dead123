/**
 * Reading the shared parts of workflow inputs: the caller-supplied bureau report (decision spec 4.3, 4.5),
 * mobile intel inputs, and bank data in its three modes (4.4, 2.6). Validation problems are collected in
 * the Validator (422); well-formed but unusable values end in a 500 (section 7).
 */
import {
  WORKFLOW_BUREAU_FORMATS,
  ReportError,
  profileFromRaw,
  syntheticProfile,
  type BureauFormat,
  type BureauProfile,
} from '../bureau.js';
import type { BankTxn } from '../bank.js';
import { aaAccount, bsaAccounts, bsaPeriod, isFailing, isStuck, isUnknownSession } from '../sessions.js';
import { monthsBefore, transactionsBetween } from '../transactions.js';
import { toNum } from '../bureau.js';
import { IST_OFFSET_MS } from '../time.js';
import { isObj, type Loc, type Obj, type Validator } from '../../validate.js';
import { unexpected, type WorkflowContext } from './common.js';

const PERSONAL_FIELDS = [
  'pan_number',
  'name_aadhar',
  'address_aadhar',
  'state_aadhar',
  'city_aadhar',
  'pincode_aadhar',
  'phone',
  'pan_name',
  'dob',
  'profession',
  'salary_source',
  'loan_purpose',
  'income_type',
  'gender',
] as const;

const BANK_TYPES = ['bank_aa', 'bank_bsa'] as const;

/** Deferred checks that run after the 422 gate (so a body with both kinds of problem answers 422). */
export type Later<T> = () => T;

export function readBureauExternal(v: Validator, external: Obj, loc: Loc): Later<BureauProfile> | undefined {
  const type = v.str(external, 'bureau_type', loc);
  const raw = v.str(external, 'bureau_raw_json', loc);
  if (type === undefined || raw === undefined) return undefined;
  return () => {
    if (!(WORKFLOW_BUREAU_FORMATS as readonly string[]).includes(type)) {
      unexpected(`unsupported bureau_type '${type}': expected one of ${WORKFLOW_BUREAU_FORMATS.join(', ')}`);
    }
    try {
      return profileFromRaw(raw, type as BureauFormat);
    } catch (err) {
      if (err instanceof ReportError) unexpected(`error in decoding bureau_raw_json: ${err.message}`);
      throw err;
    }
  };
}

/** PAN shape: five letters, four digits, one letter. */
const PAN = /^[A-Z]{5}[0-9]{4}[A-Z]$/i;

/** Bureau "fetched by the workflow" from the personal fields: a profile derived from the PAN. */
export function readBureauPersonal(v: Validator, input: Obj, loc: Loc): Later<BureauProfile> | undefined {
  const values = PERSONAL_FIELDS.map((f) => v.str(input, f, loc));
  const pan = values[0];
  if (values.some((x) => x === undefined)) return undefined;
  return () => {
    if (!PAN.test(pan!.trim())) unexpected('pan_number is not a valid PAN: expected 5 letters, 4 digits and 1 letter');
    return syntheticProfile(pan!.trim());
  };
}

function parseTimestamp(text: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(Z|[+-]\d{2}:?\d{2})?$/.exec(text.trim());
  if (!m) return null;
  const [y, mo, d, h, mi, s] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i]));
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) return null;
  const local = Date.UTC(y, mo - 1, d, h, mi, s);
  if (!m[7]) return local - IST_OFFSET_MS;
  if (m[7] === 'Z') return local;
  const sign = m[7][0] === '-' ? -1 : 1;
  const digits = m[7].slice(1).replace(':', '');
  return local - sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60_000;
}

/** One bank_data object (2.6): metadata and transaction_data. */
function readAccount(v: Validator, acc: Obj, loc: Loc): Later<BankTxn[]> | undefined {
  const meta = v.obj(acc, 'metadata', loc);
  const list = v.list(acc, 'transaction_data', loc);
  if (!meta || !list) return undefined;
  const rows: { type: string; amount: number; ts: string; balance: unknown; narration: string; index: number }[] = [];
  const before = v.issues.length;
  list.forEach((t, i) => {
    const at = [...loc, 'transaction_data', i];
    if (!isObj(t)) {
      v.add({ type: 'dict_type', loc: at, msg: 'Input should be a valid dictionary', input: t });
      return;
    }
    const type = v.str(t, 'type', at);
    const amount = v.num(t, 'amount', at);
    const ts = v.str(t, 'transactionTimestamp', at);
    const narration = v.str(t, 'narration', at, false);
    v.str(t, 'txnId', at, false);
    if (type !== undefined && amount !== undefined && ts !== undefined)
      rows.push({ type, amount, ts, balance: t.currentBalance, narration: narration ?? '', index: i });
  });
  if (v.issues.length > before) return undefined;
  const where = loc.slice(2).join('.');
  return () =>
    rows.map((r) => {
      const type = r.type.toUpperCase();
      if (type !== 'DEBIT' && type !== 'CREDIT')
        unexpected(`${where}.transaction_data[${r.index}].type '${r.type}' is not DEBIT or CREDIT`);
      if (r.amount < 0) unexpected(`${where}.transaction_data[${r.index}].amount must not be negative`);
      const ts = parseTimestamp(r.ts);
      if (ts === null)
        unexpected(
          `${where}.transaction_data[${r.index}].transactionTimestamp '${r.ts}' is not a date-time (YYYY-MM-DD HH:MM:SS)`,
        );
      let balance: number | null = null;
      if (r.balance !== undefined && r.balance !== null && r.balance !== '') {
        balance = toNum(r.balance);
        if (balance === null) unexpected(`${where}.transaction_data[${r.index}].currentBalance is not numeric text`);
      }
      return { ts: ts!, type, amount: r.amount, balance, narration: r.narration } satisfies BankTxn;
    });
}

/**
 * Caller-supplied bank data: external.bank_type and external.bank_data (one object, or for bank_bre an
 * array of objects for several accounts).
 */
export function readBankExternal(
  v: Validator,
  external: Obj,
  loc: Loc,
  allowArray: boolean,
): Later<BankTxn[]> | undefined {
  const bankType = v.str(external, 'bank_type', loc);
  const data = external.bank_data;
  const at = [...loc, 'bank_data'];
  let parts: (Later<BankTxn[]> | undefined)[] = [];
  if (data === undefined) v.missing(external, at);
  else if (Array.isArray(data) && allowArray) {
    if (data.length === 0)
      v.add({
        type: 'too_short',
        loc: at,
        msg: 'List should have at least 1 item after validation, not 0',
        input: data,
        ctx: { field_type: 'List', min_length: 1, actual_length: 0 },
      });
    parts = data.map((d, i) => {
      if (isObj(d)) return readAccount(v, d, [...at, i]);
      v.add({ type: 'dict_type', loc: [...at, i], msg: 'Input should be a valid dictionary', input: d });
      return undefined;
    });
  } else if (isObj(data)) parts = [readAccount(v, data, at)];
  else v.add({ type: 'dict_type', loc: at, msg: 'Input should be a valid dictionary', input: data });
  if (bankType === undefined || parts.length === 0 || parts.some((p) => p === undefined)) return undefined;
  return () => {
    if (!(BANK_TYPES as readonly string[]).includes(bankType))
      unexpected(`unsupported bank_type '${bankType}': expected bank_aa or bank_bsa`);
    return parts.flatMap((p) => p!()).sort((a, b) => a.ts - b.ts);
  };
}

/** bank_bre's fetched modes: the same generated transactions the account endpoints serve. */
export function readBankFetched(
  v: Validator,
  input: Obj,
  loc: Loc,
  ctx: WorkflowContext,
): Later<BankTxn[]> | undefined {
  const bankType = v.str(input, 'bank_type', loc);
  if (bankType === undefined) return undefined;
  if (bankType === 'bank_aa') {
    const id = v.str(input, 'request_id', loc);
    if (id === undefined) return undefined;
    return () => {
      if (isUnknownSession(id)) unexpected(`no aa session found for request_id '${id}'`);
      const acc = aaAccount(ctx.userId, id);
      return transactionsBetween(acc, monthsBefore(ctx.now, 6), ctx.now);
    };
  }
  if (bankType === 'bank_bsa') {
    const id = v.str(input, 'report_id', loc);
    const token = v.str(input, 'auth_token', loc);
    if (id === undefined || token === undefined) return undefined;
    return () => {
      if (isUnknownSession(id)) unexpected(`no bsa sessions found for report_id '${id}'`);
      if (isStuck(id) || isFailing(id))
        unexpected(`bsa report '${id}' is not available: statement analysis has not completed`);
      const { from, to } = bsaPeriod(ctx.sessions.bsaStatementEnd(ctx.userId, id));
      return bsaAccounts(ctx.userId, id)
        .flatMap((a) => transactionsBetween(a, from, to))
        .sort((a, b) => a.ts - b.ts);
    };
  }
  return () => unexpected(`unsupported bank_type '${bankType}': expected bank_aa or bank_bsa`);
}
