/**
 * Normalised results of the account stages (CONTRACT "Account stages": account summary fields; the
 * transactions themselves go to transactions.csv). Flat keys; API field names kept where the API names the
 * value (`account.currentBalance`, `summary.total.credits`).
 *
 * Several accounts (and several consents) stay apart: the first is `account.<field>` /
 * `insights.<field>`, further ones `account.<n>.<field>` / `insights.<n>.<field>` (n from 2), so the first
 * account's columns are always filled and a results.csv header stays stable for single-account rows.
 *
 * Personal data (names, dob, mobile, e-mail, PAN, address, nominee, landline: Profile.Holders,
 * insights.account_holder_*, customerInfo) is never copied; account numbers only masked (account-personal.ts).
 */
import {
  resultFields,
  type Json,
  type NormalisedResult,
  type NormalisedTransaction,
  type ResultField,
} from '@bre-batch/core/types';
import { asList, asObject, flattenInto, toBool, toJson, toNumber, toText } from './account-json.js';
import { isPersonalKey, maskAccountNumber } from './account-personal.js';
import {
  aaAccountName,
  aaAccounts,
  bsaAccountName,
  bsaAccountXns,
  normaliseAaTransactions,
  normaliseBsaTransactions,
  normaliseTimestamp,
} from './transactions.js';

export interface AccountStageOutput {
  readonly result: NormalisedResult;
  readonly transactions: NormalisedTransaction[];
}

/** `base.<field>` for the first item, `base.<n>.<field>` for n >= 2. */
function indexedPrefix(base: string, n: number): string {
  return n === 1 ? base : `${base}.${n}`;
}

/** Distinct non-empty texts joined with ';' (one value for one call), or null. */
function joinDistinct(values: readonly unknown[]): string | null {
  const texts = [...new Set(values.map(toText).filter((t): t is string => t !== null))];
  return texts.length === 0 ? null : texts.join(';');
}

/** insights flattened without personal fields; `account_number` kept masked (2.3 says it is masked). */
export function flattenInsights(target: Record<string, Json>, prefix: string, insights: unknown): void {
  flattenInto(target, prefix, insights, isPersonalKey);
  const acc = `${prefix}.account_number`;
  if (typeof target[acc] === 'string') target[acc] = maskAccountNumber(target[acc] as string);
}

const AA_NUMERIC_SUMMARY = new Set(['currentBalance', 'currentODLimit', 'drawingLimit']);

/** One AA account's summary (2.2 Summary) under `prefix`. */
function aaAccountFields(
  target: Record<string, Json>,
  prefix: string,
  fi: Record<string, unknown>,
  fip: Record<string, unknown>,
  position: number,
  txnCount: number,
): number | null {
  target[`${prefix}.maskedAccNumber`] = aaAccountName(fi, position);
  target[`${prefix}.fipId`] = toText(fip.fipId);
  target[`${prefix}.fipName`] = toText(fip.fipName);
  target[`${prefix}.type`] = toText(fi.type);
  const summary = asObject(fi.Summary) ?? {};
  for (const [key, value] of Object.entries(summary)) {
    if (isPersonalKey(key) || key === 'pendingTxns') continue;
    if (AA_NUMERIC_SUMMARY.has(key)) target[`${prefix}.${key}`] = toNumber(value);
    else if (key === 'balanceDateTime') target[`${prefix}.${key}`] = normaliseTimestamp(value) ?? toText(value);
    else if (!asObject(value) && !Array.isArray(value)) {
      const j = toJson(value);
      if (j !== undefined) target[`${prefix}.${key}`] = j;
    }
  }
  const pending = asList(asObject(summary.pendingTxns)?.PendingTxn);
  target[`${prefix}.pendingTxnsCount`] = pending ? pending.length : 0;
  const txns = asObject(fi.Transactions);
  target[`${prefix}.transactionsStartDate`] = toText(txns?.startDate);
  target[`${prefix}.transactionsEndDate`] = toText(txns?.endDate);
  target[`${prefix}.transactionsCount`] = txnCount;
  return toNumber(summary.currentBalance);
}

/**
 * The AA fetch_data result over the responses of one row: one response per consent handle (multi-consent,
 * spec 4.1), or a single one. Accounts are numbered across all responses in order.
 */
export function normaliseAaFetch(responses: readonly unknown[]): AccountStageOutput {
  const result: Record<string, Json> = {
    request_id: joinDistinct(responses.map((r) => asObject(r)?.request_id)),
    service: joinDistinct(responses.map((r) => asObject(r)?.service)),
    success: null,
    consent_status: joinDistinct(responses.map((r) => asObject(asObject(r)?.service_response)?.consent_status)),
    fi_request_status: joinDistinct(responses.map((r) => asObject(asObject(r)?.service_response)?.fi_request_status)),
    consents_count: responses.length,
    accounts_count: 0,
    transactions_count: 0,
    transactions_status: 'ok',
    transactions_skipped: 0,
    current_balance_total: null,
  };
  const successes = responses.map((r) => asObject(r)?.success).filter((s): s is boolean => typeof s === 'boolean');
  result.success = successes.length === 0 ? null : successes.every(Boolean);

  const transactions: NormalisedTransaction[] = [];
  let position = 1;
  let balanceTotal: number | null = 0;
  let insightsN = 0;
  for (const response of responses) {
    const parsed = normaliseAaTransactions(response, position);
    if (parsed.status !== 'ok') result.transactions_status = parsed.status;
    result.transactions_skipped = (result.transactions_skipped as number) + parsed.skipped;
    transactions.push(...parsed.transactions);
    for (const { fi, fip } of aaAccounts(response) ?? []) {
      const name = aaAccountName(fi, position);
      const count = parsed.transactions.filter((t) => t.account === name).length;
      const balance = aaAccountFields(result, indexedPrefix('account', position), fi, fip, position, count);
      balanceTotal = balance === null || balanceTotal === null ? null : balanceTotal + balance;
      position += 1;
    }
    const insights = asObject(asObject(response)?.insights);
    if (insights) {
      insightsN += 1;
      flattenInsights(result, indexedPrefix('insights', insightsN), insights);
    }
  }
  result.accounts_count = position - 1;
  result.transactions_count = transactions.length;
  result.current_balance_total = position > 1 ? balanceTotal : null;
  return { result, transactions };
}

/** Columns present for every AA fetch result (first account and first insights object may add more). */
export const AA_FETCH_COLUMNS: readonly ResultField[] = [
  ...resultFields('string', 'request_id', 'service'),
  ...resultFields('boolean', 'success'),
  ...resultFields('string', 'consent_status', 'fi_request_status'),
  ...resultFields('int64', 'consents_count', 'accounts_count', 'transactions_count'),
  ...resultFields('string', 'transactions_status'),
  ...resultFields('int64', 'transactions_skipped'),
  ...resultFields('double', 'current_balance_total'),
  ...resultFields('string', 'account.maskedAccNumber', 'account.fipId', 'account.fipName', 'account.type'),
  ...resultFields('double', 'account.currentBalance'),
  ...resultFields('string', 'account.currency', 'account.balanceDateTime'),
  ...resultFields('int64', 'account.pendingTxnsCount'),
  ...resultFields('string', 'account.transactionsStartDate', 'account.transactionsEndDate'),
  ...resultFields('int64', 'account.transactionsCount'),
];

/** summaryInfo (2.7): instName, accNo (masked), accType, fullMonthCount, total.*, average.*; numbers coerced. */
function bsaSummaryFields(target: Record<string, Json>, summaryInfo: unknown): void {
  const info = asObject(summaryInfo);
  if (!info) return;
  for (const [key, value] of Object.entries(info)) {
    if (isPersonalKey(key)) continue;
    const sub = asObject(value);
    if (sub) {
      for (const [k, v] of Object.entries(sub)) {
        if (isPersonalKey(k) || asObject(v)) continue;
        const n = toNumber(v);
        const j = n ?? toJson(v);
        if (j !== undefined) target[`summary.${key}.${k}`] = j;
      }
    } else if (key === 'accNo') {
      const t = toText(value);
      target['summary.accNo'] = t === null ? null : maskAccountNumber(t);
    } else if (key === 'fullMonthCount') {
      target['summary.fullMonthCount'] = toNumber(value);
    } else if (!Array.isArray(value)) {
      const j = toJson(value);
      if (j !== undefined) target[`summary.${key}`] = j;
    }
  }
}

/** The BSA fetch_data result (2.7) and its transactions. */
export function normaliseBsaFetch(response: unknown): AccountStageOutput {
  const top = asObject(response) ?? {};
  const sr = asObject(top.service_response) ?? {};
  const statements = (asList(sr.statementdetails) ?? []).map(asObject).filter((s) => s !== undefined);
  const parsed = normaliseBsaTransactions(response);
  const xnsAccounts = bsaAccountXns(response) ?? [];
  const result: Record<string, Json> = {
    request_id: toText(top.request_id),
    status: toText(top.status),
    statement_count: statements.length,
    statement_status: joinDistinct(statements.map((s) => s.statementStatus)),
    accounts_count: xnsAccounts.length,
    transactions_count: parsed.transactions.length,
    transactions_status: parsed.status,
    transactions_skipped: parsed.skipped,
    suspicious_bank_estatements: toBool(
      asObject(asObject(asObject(sr.fCUAnalysis)?.possibleFraudIndicators)?.suspiciousBankEStatements)?.status,
    ),
  };
  // statementAccounts give each account's type and period (2.7); matched to accountXns by account number.
  const periods = new Map<string, Record<string, unknown>>();
  for (const s of statements) {
    for (const a of asList(s.statementAccounts) ?? []) {
      const acc = asObject(a);
      const no = toText(acc?.accountNo);
      if (acc && no !== null) periods.set(maskAccountNumber(no), acc);
    }
  }
  xnsAccounts.forEach((acc, i) => {
    const prefix = indexedPrefix('account', i + 1);
    const name = bsaAccountName(acc, i + 1);
    const period = periods.get(name);
    result[`${prefix}.accountNo`] = name;
    result[`${prefix}.accountType`] = toText(acc.accountType) ?? toText(period?.accountType);
    result[`${prefix}.xnsStartDate`] = toText(period?.xnsStartDate);
    result[`${prefix}.xnsEndDate`] = toText(period?.xnsEndDate);
    result[`${prefix}.transactionsCount`] = parsed.transactions.filter((t) => t.account === name).length;
  });
  bsaSummaryFields(result, sr.summaryInfo);
  const insights = asObject(top.insights);
  if (insights) flattenInsights(result, 'insights', insights);
  return { result, transactions: parsed.transactions };
}

const SUMMARY_FIELDS = [
  'balAvg',
  'balMax',
  'balMin',
  'cashDeposits',
  'cashWithdrawals',
  'chqDeposits',
  'chqIssues',
  'credits',
  'debits',
  'emiOrLoans',
  'inwBounces',
  'loanDisbursals',
  'outwBounces',
  'salaries',
  'totalCashDeposit',
  'totalCashWithdrawal',
  'totalChqDeposit',
  'totalChqIssue',
  'totalCredit',
  'totalDebit',
  'totalEmiOrLoan',
  'totalLoanDisbursal',
  'totalSalary',
];

/** Columns of every BSA fetch result with the example analyser's summaryInfo (2.7). */
export const BSA_FETCH_COLUMNS: readonly ResultField[] = [
  ...resultFields('string', 'request_id', 'status'),
  ...resultFields('int64', 'statement_count'),
  ...resultFields('string', 'statement_status'),
  ...resultFields('int64', 'accounts_count', 'transactions_count'),
  ...resultFields('string', 'transactions_status'),
  ...resultFields('int64', 'transactions_skipped'),
  ...resultFields('boolean', 'suspicious_bank_estatements'),
  ...resultFields('string', 'account.accountNo', 'account.accountType', 'account.xnsStartDate', 'account.xnsEndDate'),
  ...resultFields('int64', 'account.transactionsCount'),
  ...resultFields('string', 'summary.instName', 'summary.accNo', 'summary.accType'),
  ...resultFields('double', 'summary.fullMonthCount'),
  ...resultFields('double', ...SUMMARY_FIELDS.map((f) => `summary.total.${f}`)),
  ...resultFields('double', ...SUMMARY_FIELDS.map((f) => `summary.average.${f}`)),
];
