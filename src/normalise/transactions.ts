/**
 * AA and BSA transactions into the one schema of transactions.csv (CONTRACT; `NormalisedTransaction`).
 * Pure and defensive (spec 9): an unknown response shape gives no transactions and `status:
 * 'unrecognised_shape'` rather than an exception; a transaction without a usable type or amount is skipped
 * and counted; a bad balance becomes null and the transaction is kept. Timestamps, accounts, ids and modes are
 * made as docs/decisions/account-transactions.md says, and why.
 */
import { createHash } from 'node:crypto';
import type { NormalisedTransaction } from '@bre-batch/core/types';
import { asList, asObject, toNumber, toText } from './account-json.js';
import { maskAccountNumber } from './account-personal.js';

type TransactionsStatus = 'ok' | 'unrecognised_shape';

export interface TransactionsParse {
  readonly transactions: NormalisedTransaction[];
  readonly status: TransactionsStatus;
  /** Transactions dropped for lack of a usable type or amount. */
  readonly skipped: number;
}

const ISO_TS_RE = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2})(:\d{2}(?:\.\d+)?)?\s*(Z|[+-]\d{2}:?\d{2})?)?$/i;

function validDate(ymd: string): boolean {
  const [y, m, d] = ymd.split('-').map(Number);
  const t = new Date(Date.UTC(y, m - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d;
}

/** Regular ISO-8601 form of a timestamp, offset kept; null when it is not an ISO date/datetime. */
export function normaliseTimestamp(v: unknown): string | null {
  const text = toText(v);
  if (text === null) return null;
  const m = ISO_TS_RE.exec(text);
  if (!m || !validDate(m[1])) return null;
  if (m[2] === undefined) return `${m[1]}T00:00:00`;
  const [hh, mm] = m[2].split(':').map(Number);
  const seconds = m[3] ?? ':00';
  if (hh > 23 || mm > 59 || Number(seconds.slice(1, 3)) > 59) return null;
  let offset = m[4] ?? '';
  if (offset.toUpperCase() === 'Z') offset = 'Z';
  else if (offset !== '' && !offset.includes(':')) offset = `${offset.slice(0, 3)}:${offset.slice(3)}`;
  if (offset !== '' && offset !== 'Z' && (Number(offset.slice(1, 3)) > 23 || Number(offset.slice(4, 6)) > 59))
    return null;
  return `${m[1]}T${m[2]}${seconds}${offset}`;
}

/** The date part `YYYY-MM-DD` of an ISO date or datetime, as written; null otherwise. */
export function normaliseDate(v: unknown): string | null {
  const text = toText(v);
  if (text === null) return null;
  const m = ISO_TS_RE.exec(text);
  return m && validDate(m[1]) ? m[1] : null;
}

const DMY_RE = /^(\d{2})[/-](\d{2})[/-](\d{4})$/;

/** A BSA date (YYYY-MM-DD; DD/MM/YYYY and DD-MM-YYYY also read) as `YYYY-MM-DD`; null otherwise. */
export function normaliseBsaDate(v: unknown): string | null {
  const text = toText(v);
  if (text === null) return null;
  const dmy = DMY_RE.exec(text);
  if (dmy) {
    const ymd = `${dmy[3]}-${dmy[2]}-${dmy[1]}`;
    return validDate(ymd) ? ymd : null;
  }
  return normaliseDate(text);
}

function txnType(v: unknown): 'DEBIT' | 'CREDIT' | null {
  const t = toText(v)?.toUpperCase();
  return t === 'DEBIT' || t === 'CREDIT' ? t : null;
}

/** One AA account: a fiObjects[] element and the body[] entry (FIP) it came from. */
export interface AaAccount {
  readonly fi: Record<string, unknown>;
  readonly fip: Record<string, unknown>;
}

/** The accounts (fiObjects) of an AA fetch_data response (2.2); undefined for an unknown shape. */
export function aaAccounts(response: unknown): AaAccount[] | undefined {
  const sr = asObject(asObject(response)?.service_response);
  if (!sr) return undefined;
  const body = asList(asObject(sr.fetched_data)?.body ?? sr.body);
  if (!body) return undefined;
  const out: AaAccount[] = [];
  for (const entry of body) {
    const fip = asObject(entry);
    for (const raw of asList(fip?.fiObjects) ?? []) {
      const obj = asObject(raw);
      // Some providers wrap the account in `Account` (XML-to-JSON of the ReBIT schema).
      if (obj && fip) out.push({ fi: asObject(obj.Account) ?? obj, fip });
    }
  }
  return out;
}

/** The name under which an AA account's transactions are listed (see header). */
export function aaAccountName(fi: Record<string, unknown>, position: number): string {
  const masked = toText(fi.maskedAccNumber);
  if (masked !== null) return maskAccountNumber(masked);
  return toText(fi.linkedAccRef) ?? `account-${position}`;
}

/**
 * Transactions of one AA fetch_data response. `firstPosition` numbers accounts without a name when several
 * responses (multi-consent) are merged.
 */
export function normaliseAaTransactions(response: unknown, firstPosition = 1): TransactionsParse {
  const accounts = aaAccounts(response);
  if (!accounts) return { transactions: [], status: 'unrecognised_shape', skipped: 0 };
  const transactions: NormalisedTransaction[] = [];
  let skipped = 0;
  accounts.forEach(({ fi }, i) => {
    const account = aaAccountName(fi, firstPosition + i);
    for (const raw of asList(asObject(fi.Transactions)?.Transaction) ?? []) {
      const t = asObject(raw);
      const type = txnType(t?.type);
      const amount = toNumber(t?.amount);
      if (!t || type === null || amount === null) {
        skipped += 1;
        continue;
      }
      transactions.push({
        source: 'aa',
        account,
        txn_id: toText(t.txnId),
        timestamp: normaliseTimestamp(t.transactionTimestamp),
        value_date: normaliseDate(t.valueDate),
        type,
        amount: Math.abs(amount),
        balance: toNumber(t.transactionalBalance),
        mode: toText(t.mode),
        narration: toText(t.narration),
      });
    }
  });
  return { transactions, status: 'ok', skipped };
}

/** The accountXns of a BSA fetch_data response (2.7); undefined for an unknown shape. */
export function bsaAccountXns(response: unknown): Record<string, unknown>[] | undefined {
  const sr = asObject(asObject(response)?.service_response);
  const list = asList(sr?.accountXns);
  if (!list) return undefined;
  return list.map((a) => asObject(a)).filter((a): a is Record<string, unknown> => a !== undefined);
}

export function bsaAccountName(acc: Record<string, unknown>, position: number): string {
  const no = toText(acc.accountNo);
  return no === null ? `account-${position}` : maskAccountNumber(no);
}

function bsaTxnId(parts: readonly unknown[]): string {
  return `bsa-${createHash('sha256')
    .update(parts.map((p) => String(p ?? '')).join('\u0000'))
    .digest('hex')
    .slice(0, 16)}`;
}

/** Transactions of one BSA fetch_data response. */
export function normaliseBsaTransactions(response: unknown): TransactionsParse {
  const accounts = bsaAccountXns(response);
  if (!accounts) return { transactions: [], status: 'unrecognised_shape', skipped: 0 };
  const transactions: NormalisedTransaction[] = [];
  let skipped = 0;
  accounts.forEach((acc, i) => {
    const account = bsaAccountName(acc, i + 1);
    const seen = new Map<string, number>();
    for (const raw of asList(acc.xns) ?? []) {
      const x = asObject(raw);
      const signed = toNumber(x?.amount);
      if (!x || signed === null) {
        skipped += 1;
        continue;
      }
      const date = normaliseBsaDate(x.date);
      const balance = toNumber(x.balance);
      const narration = toText(x.narration);
      const tuple = [account, date ?? toText(x.date), signed, balance, narration, toText(x.chqNo)];
      const key = JSON.stringify(tuple);
      const occurrence = (seen.get(key) ?? 0) + 1;
      seen.set(key, occurrence);
      transactions.push({
        source: 'bsa',
        account,
        txn_id: bsaTxnId([...tuple, occurrence]),
        timestamp: date === null ? null : `${date}T00:00:00`,
        value_date: null,
        type: signed > 0 ? 'CREDIT' : 'DEBIT',
        amount: Math.abs(signed),
        balance,
        mode: null,
        narration,
      });
    }
  });
  return { transactions, status: 'ok', skipped };
}
