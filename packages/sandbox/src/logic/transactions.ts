/**
 * Deterministic, realistic bank account histories. One generator feeds the AA endpoints (account spec
 * 2.2), the BSA endpoints (2.7), the CSV report, and bank_bre's "fetched inside the workflow" modes
 * (decision spec 4.4), so the same (user_id, session) always shows the same account.
 *
 * An account is a profile derived from a hash of its key (salary, pay day, EMI, bounce propensity, spend
 * level...). Each calendar month (IST) is generated on its own from hash(key, month): it opens at a
 * balance B(month) that is a pure function of (key, month), and a final self-transfer on the last day
 * lands exactly on B(month + 1). Hence any date range gives the same transactions with consistent running
 * balances, without generating the account's whole past.
 */
import { digitsFrom, hash53, hexId, intBetween, mulberry32, unit, type Rng } from './hash.js';
import { daysInMonth, istInstant, istMonthIndex, monthStart } from './time.js';

type TxnKind =
  | 'salary'
  | 'business_credit'
  | 'emi'
  | 'bounce'
  | 'upi_debit'
  | 'upi_credit'
  | 'atm'
  | 'card'
  | 'bill'
  | 'cash_deposit'
  | 'cheque_deposit'
  | 'cheque_issue'
  | 'interest'
  | 'loan_disbursal'
  | 'transfer_in'
  | 'transfer_out';

export interface Txn {
  /** Instant (ms since epoch). */
  readonly ts: number;
  readonly type: 'CREDIT' | 'DEBIT';
  /** Positive amount in rupees (2 decimals at most). */
  readonly amount: number;
  /** Balance after the transaction. */
  readonly balance: number;
  readonly mode: string;
  readonly narration: string;
  readonly txnId: string;
  readonly reference: string;
  /** Cheque number for cheque transactions, else ''. */
  readonly chqNo: string;
  readonly kind: TxnKind;
}

export interface Account {
  readonly key: string;
  readonly bankName: string;
  readonly fipId: string;
  readonly ifsc: string;
  readonly micr: string;
  readonly branch: string;
  readonly accountNumber: string;
  readonly maskedAccNumber: string;
  readonly accountType: 'SAVINGS' | 'CURRENT';
  readonly openingDate: string;
  readonly holderName: string;
  readonly holderDob: string;
  readonly holderMobile: string;
  readonly holderEmail: string;
  readonly holderPan: string;
  readonly holderAddress: string;
  readonly nominee: 'REGISTERED' | 'NOT-REGISTERED';
  readonly employer: string | null;
  readonly monthlyIncome: number;
  readonly salaryDay: number;
  readonly emi: number;
  readonly lender: string;
  readonly bounceRate: number;
  readonly spendLevel: number;
  readonly baseBalance: number;
}

// Clearly fictional institutions and employers.
const BANKS = [
  { name: 'Sandbox Bank', code: 'SNDB' },
  { name: 'Example National Bank', code: 'EXNB' },
  { name: 'Demo Co-operative Bank', code: 'DMCB' },
  { name: 'Mock City Bank', code: 'MKCB' },
];
const EMPLOYERS = [
  'ACME TECHNOLOGIES PVT LTD',
  'GLOBEX RETAIL LLP',
  'INITECH SERVICES PVT LTD',
  'UMBRELLA LOGISTICS LTD',
  'STARK MANUFACTURING PVT LTD',
  'WAYNE HOSPITALITY PVT LTD',
  'HOOLI SOFTWARE PVT LTD',
  'SOYLENT FOODS PVT LTD',
  'VANDELAY IMPORTS LLP',
  'PIED PIPER SYSTEMS PVT LTD',
];
const LENDERS = ['SANDBOX FINANCE LTD', 'EXAMPLE CAPITAL LTD', 'DEMO HOME LOANS LTD', 'MOCK AUTO FINANCE LTD'];
const MERCHANTS = [
  'GROCERMART',
  'QUICKFOOD',
  'CITYCABS',
  'PHARMAPLUS',
  'FUELSTOP',
  'BOOKNOOK',
  'MEGABAZAAR',
  'TEASTALL',
  'METRORAIL',
  'STREAMFLIX',
];
const FIRST = ['AARAV', 'DIYA', 'ROHAN', 'ANANYA', 'VIKRAM', 'MEERA', 'KABIR', 'ISHA', 'ARJUN', 'NEHA'];
const LAST = ['SHARMA', 'IYER', 'PATEL', 'REDDY', 'SINGH', 'DAS', 'NAIR', 'KHAN', 'GUPTA', 'MENON'];
const CITIES = ['MUMBAI', 'PUNE', 'BENGALURU', 'CHENNAI', 'HYDERABAD', 'DELHI', 'KOLKATA', 'JAIPUR'];
const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];

const cents = (x: number) => Math.round(x * 100) / 100;
const pickOf = <T>(list: readonly T[], key: string, salt: string): T => list[intBetween(key, salt, 0, list.length - 1)];

/** Masks all but the first letter of each word: RAHUL SHARMA -> R**** S*****. */
export function maskName(name: string): string {
  return name
    .split(' ')
    .map((w) => w.slice(0, 1) + '*'.repeat(Math.max(0, w.length - 1)))
    .join(' ');
}

export function accountFor(key: string): Account {
  const bank = pickOf(BANKS, key, 'acc.bank');
  const accountNumber = `${intBetween(key, 'acc.lead', 1, 9)}${digitsFrom(`${key}|accno`, 11)}`;
  const salaried = unit(key, 'acc.salaried') < 0.85;
  const monthlyIncome = Math.round((10_000 * Math.exp(unit(key, 'acc.income') * Math.log(12))) / 100) * 100;
  const payDayDraw = unit(key, 'acc.payday');
  const hasEmi = unit(key, 'acc.hasemi') < 0.55;
  const bouncy = unit(key, 'acc.bouncy') >= 0.65;
  const openYear = 2012 + intBetween(key, 'acc.openy', 0, 10);
  const first = pickOf(FIRST, key, 'acc.first');
  const last = pickOf(LAST, key, 'acc.last');
  return {
    key,
    bankName: bank.name,
    fipId: `${bank.code}-FIP`,
    ifsc: `${bank.code}0${digitsFrom(`${key}|ifsc`, 6)}`,
    micr: digitsFrom(`${key}|micr`, 9),
    branch: `${pickOf(CITIES, key, 'acc.branch')} MAIN`,
    accountNumber,
    maskedAccNumber: `XXXXXXXX${accountNumber.slice(-4)}`,
    accountType: salaried ? 'SAVINGS' : unit(key, 'acc.current') < 0.5 ? 'CURRENT' : 'SAVINGS',
    openingDate: `${openYear}-${String(intBetween(key, 'acc.openm', 1, 12)).padStart(2, '0')}-${String(intBetween(key, 'acc.opend', 1, 28)).padStart(2, '0')}`,
    holderName: `${first} ${last}`,
    holderDob: `${1965 + intBetween(key, 'acc.doby', 0, 38)}-${String(intBetween(key, 'acc.dobm', 1, 12)).padStart(2, '0')}-${String(intBetween(key, 'acc.dobd', 1, 28)).padStart(2, '0')}`,
    holderMobile: `XXXXXX${digitsFrom(`${key}|mob`, 4)}`,
    holderEmail: `${first[0].toLowerCase()}xxxxx@example.com`,
    holderPan: `XXXXX${digitsFrom(`${key}|pan`, 4)}X`,
    holderAddress: `XXXX, ${pickOf(CITIES, key, 'acc.branch')}`,
    nominee: unit(key, 'acc.nominee') < 0.6 ? 'REGISTERED' : 'NOT-REGISTERED',
    employer: salaried ? pickOf(EMPLOYERS, key, 'acc.employer') : null,
    monthlyIncome,
    salaryDay: payDayDraw < 0.5 ? 1 : payDayDraw < 0.7 ? 7 : 31,
    emi: hasEmi ? Math.round(monthlyIncome * (0.08 + 0.45 * unit(key, 'acc.emi'))) : 0,
    lender: pickOf(LENDERS, key, 'acc.lender'),
    bounceRate: bouncy ? 0.03 + 0.3 * unit(key, 'acc.bouncerate') : 0,
    spendLevel: 0.5 + unit(key, 'acc.spend'),
    baseBalance: Math.max(3_000, Math.round(monthlyIncome * (0.2 + 0.8 * unit(key, 'acc.base')))),
  };
}

/** Balance at the start of a month: a pure function of (account, month). */
function openingBalance(acc: Account, monthIndex: number): number {
  return cents(acc.baseBalance * (0.3 + 1.4 * unit(acc.key, `bal.${monthIndex}`)));
}

interface Draft {
  minuteOfMonth: number;
  type: 'CREDIT' | 'DEBIT';
  amount: number;
  mode: string;
  narration: string;
  chqNo: string;
  kind: TxnKind;
  /** Debits that may be shrunk when the balance is short (spends), vs fixed ones (EMI, charges). */
  flexible: boolean;
}

const monthCache = new Map<string, readonly Txn[]>();
/** ~40 transactions a month: 2 000 months stay well under 50 MB. */
const MONTH_CACHE_MAX = 2_000;

/** All transactions of one calendar month (IST), with running balances. Cached (pure). */
export function monthTransactions(acc: Account, monthIndex: number): readonly Txn[] {
  const cacheKey = `${acc.key}\u0000${monthIndex}`;
  const hit = monthCache.get(cacheKey);
  if (hit) return hit;
  const txns = generateMonth(acc, monthIndex);
  if (monthCache.size >= MONTH_CACHE_MAX) monthCache.delete(monthCache.keys().next().value as string);
  monthCache.set(cacheKey, txns);
  return txns;
}

function generateMonth(acc: Account, monthIndex: number): Txn[] {
  const rng: Rng = mulberry32(hash53(`${acc.key}|month|${monthIndex}`) % 4294967296);
  const days = daysInMonth(monthIndex);
  const year = Math.floor(monthIndex / 12);
  const month = monthIndex % 12;
  const at = (day: number, hour: number, minute: number) => ((Math.min(day, days) - 1) * 24 + hour) * 60 + minute;
  const anyTime = () => at(1 + Math.floor(rng() * days), 7 + Math.floor(rng() * 15), Math.floor(rng() * 60));
  const ref = () => String(Math.floor(rng() * 1e12)).padStart(12, '0');
  const drafts: Draft[] = [];
  const add = (d: Omit<Draft, 'chqNo' | 'flexible'> & Partial<Pick<Draft, 'chqNo' | 'flexible'>>) =>
    drafts.push({ chqNo: '', flexible: true, ...d });

  // Income.
  if (acc.employer) {
    if (rng() >= 0.03) {
      const bonus = rng() < 0.08 ? Math.round(acc.monthlyIncome * 0.5) : 0;
      add({
        minuteOfMonth: at(acc.salaryDay, 9, 30),
        type: 'CREDIT',
        amount: acc.monthlyIncome + bonus,
        mode: 'NEFT',
        narration: `NEFT-${acc.ifsc.slice(0, 4)}N${ref().slice(0, 9)}-${acc.employer}-SALARY ${MONTHS[month]} ${year}`,
        kind: 'salary',
      });
    }
  } else {
    const n = 3 + Math.floor(rng() * 6);
    let left = acc.monthlyIncome * (0.7 + 0.6 * rng());
    for (let i = 0; i < n; i++) {
      const amount = i === n - 1 ? left : left * (0.1 + 0.3 * rng());
      left -= amount;
      add({
        minuteOfMonth: anyTime(),
        type: 'CREDIT',
        amount: Math.max(100, Math.round(amount)),
        mode: 'IMPS',
        narration: `IMPS/CR/${ref()}/${pickOf(LAST, `${acc.key}|${monthIndex}|${i}`, 'payer')} TRADERS`,
        kind: 'business_credit',
      });
    }
  }

  // Loan instalment, or its bounce (an inward return with a charge).
  if (acc.emi > 0) {
    if (rng() < acc.bounceRate) {
      add({
        minuteOfMonth: at(5, 6, 15),
        type: 'DEBIT',
        amount: 590,
        mode: 'ACH',
        flexible: false,
        narration: `ACH DEBIT RETURN CHGS INSUFFICIENT FUNDS-${acc.lender}`,
        kind: 'bounce',
      });
    } else {
      add({
        minuteOfMonth: at(5, 6, 10),
        type: 'DEBIT',
        amount: acc.emi,
        mode: 'ACH',
        flexible: false,
        narration: `ACH D- ${acc.lender}-EMI ${ref().slice(0, 8)}`,
        kind: 'emi',
      });
    }
  }

  // Everyday spending.
  const upi = Math.round((8 + rng() * 22) * acc.spendLevel);
  for (let i = 0; i < upi; i++) {
    const amount = cents(Math.exp(Math.log(40) + rng() * Math.log(100)));
    add({
      minuteOfMonth: anyTime(),
      type: 'DEBIT',
      amount,
      mode: 'UPI',
      narration: `UPI/DR/${ref()}/${MERCHANTS[Math.floor(rng() * MERCHANTS.length)]}/${acc.ifsc.slice(0, 4)}/upi`,
      kind: 'upi_debit',
    });
  }
  for (let i = Math.floor(rng() * 3); i > 0; i--) {
    add({
      minuteOfMonth: anyTime(),
      type: 'CREDIT',
      amount: Math.round(100 + rng() * 2000),
      mode: 'UPI',
      narration: `UPI/CR/${ref()}/${FIRST[Math.floor(rng() * FIRST.length)]}/upi`,
      kind: 'upi_credit',
    });
  }
  for (let i = Math.floor(rng() * 4); i > 0; i--) {
    add({
      minuteOfMonth: anyTime(),
      type: 'DEBIT',
      amount: [500, 1000, 2000, 3000, 5000, 10000][Math.floor(rng() * 6)],
      mode: 'ATM',
      narration: `ATM WDL ${CITIES[Math.floor(rng() * CITIES.length)]} ${ref().slice(0, 6)}`,
      kind: 'atm',
    });
  }
  for (let i = Math.floor(rng() * 4); i > 0; i--) {
    add({
      minuteOfMonth: anyTime(),
      type: 'DEBIT',
      amount: cents(200 + rng() * 4000),
      mode: 'CARD',
      narration: `POS ${ref().slice(0, 10)} ${MERCHANTS[Math.floor(rng() * MERCHANTS.length)]}`,
      kind: 'card',
    });
  }
  add({
    minuteOfMonth: at(10 + Math.floor(rng() * 10), 11, 0),
    type: 'DEBIT',
    amount: cents(300 + rng() * 2500),
    mode: 'OTHERS',
    narration: `BILLPAY/ELECTRICITY/${ref().slice(0, 10)}`,
    kind: 'bill',
  });
  if (rng() < 0.05) {
    add({
      minuteOfMonth: anyTime(),
      type: 'CREDIT',
      amount: Math.round(1_000 + rng() * 20_000),
      mode: 'CASH',
      narration: 'CASH DEPOSIT BY SELF',
      kind: 'cash_deposit',
    });
  }
  if (rng() < 0.04) {
    const chq = ref().slice(0, 6);
    add({
      minuteOfMonth: anyTime(),
      type: 'CREDIT',
      amount: Math.round(2_000 + rng() * 30_000),
      mode: 'CHEQUE',
      chqNo: chq,
      narration: `CHQ DEP ${chq} CLG`,
      kind: 'cheque_deposit',
    });
  }
  if (rng() < 0.05) {
    const chq = ref().slice(0, 6);
    add({
      minuteOfMonth: anyTime(),
      type: 'DEBIT',
      amount: Math.round(1_000 + rng() * 15_000),
      mode: 'CHEQUE',
      chqNo: chq,
      narration: `CHQ PAID ${chq} SELF`,
      kind: 'cheque_issue',
    });
  }
  if (rng() < 0.01) {
    add({
      minuteOfMonth: anyTime(),
      type: 'CREDIT',
      amount: Math.round(acc.monthlyIncome * (1 + 3 * rng())),
      mode: 'NEFT',
      narration: `LOAN DISBURSAL ${acc.lender}`,
      kind: 'loan_disbursal',
    });
  }
  if (month % 3 === 2) {
    add({
      minuteOfMonth: at(days, 20, 0),
      type: 'CREDIT',
      amount: cents(acc.baseBalance * 0.008),
      mode: 'OTHERS',
      narration: `INT.PD ${MONTHS[month]} ${year}`,
      kind: 'interest',
    });
  }

  drafts.sort((a, b) => a.minuteOfMonth - b.minuteOfMonth);
  const start = monthStart(monthIndex);
  const out: Txn[] = [];
  let balance = openingBalance(acc, monthIndex);
  let seq = 0;
  let lastMinute = -1;
  let sameMinute = 0;
  const push = (d: Draft) => {
    balance = cents(d.type === 'CREDIT' ? balance + d.amount : balance - d.amount);
    sameMinute = d.minuteOfMonth === lastMinute ? sameMinute + 1 : 0;
    lastMinute = d.minuteOfMonth;
    const id = `${acc.key}|${monthIndex}|${seq++}`;
    out.push({
      ts: start + d.minuteOfMonth * 60_000 + sameMinute * 1000,
      type: d.type,
      amount: d.amount,
      balance,
      mode: d.mode,
      narration: d.narration,
      txnId: `S${hexId(id, 15).toUpperCase()}`,
      reference: digitsFrom(id, 12),
      chqNo: d.chqNo,
      kind: d.kind,
    });
  };
  for (const d of drafts) {
    if (d.type === 'DEBIT' && d.amount > balance) {
      if (d.flexible) {
        // A spend the account cannot cover shrinks (people spend what they have).
        d.amount = cents(Math.floor(balance * 0.6));
        if (d.amount < 20) continue;
      } else if (d.kind === 'emi') {
        // An instalment the balance cannot cover bounces: the bank returns it with a charge.
        if (balance < 590) continue;
        Object.assign(d, {
          amount: 590,
          narration: `ACH DEBIT RETURN CHGS INSUFFICIENT FUNDS-${acc.lender}`,
          kind: 'bounce',
        });
      } else continue;
    }
    push(d);
  }
  // Land exactly on next month's opening balance (see the header comment).
  const target = openingBalance(acc, monthIndex + 1);
  const diff = cents(target - balance);
  if (diff !== 0) {
    push({
      minuteOfMonth: at(days, 23, 55),
      type: diff > 0 ? 'CREDIT' : 'DEBIT',
      amount: Math.abs(diff),
      mode: 'IMPS',
      narration: diff > 0 ? `IMPS/CR/${ref()}/SELF TRANSFER` : `IMPS/DR/${ref()}/SELF TRANSFER SAVINGS`,
      chqNo: '',
      kind: diff > 0 ? 'transfer_in' : 'transfer_out',
      flexible: false,
    });
  }
  return out;
}

/** Transactions with fromMs <= ts <= toMs, oldest first. */
export function transactionsBetween(acc: Account, fromMs: number, toMs: number): Txn[] {
  if (toMs < fromMs) return [];
  const out: Txn[] = [];
  for (let m = istMonthIndex(fromMs); m <= istMonthIndex(toMs); m++) {
    for (const t of monthTransactions(acc, m)) if (t.ts >= fromMs && t.ts <= toMs) out.push(t);
  }
  return out;
}

/** Balance at an instant (after every transaction up to it). */
export function balanceAt(acc: Account, ms: number): number {
  const m = istMonthIndex(ms);
  let bal = openingBalance(acc, m);
  for (const t of monthTransactions(acc, m)) {
    if (t.ts > ms) break;
    bal = t.balance;
  }
  return bal;
}

/** The instant `months` calendar months before `ms` (same day/time, IST), for default statement periods. */
export function monthsBefore(ms: number, months: number): number {
  const d = new Date(ms + 330 * 60_000);
  return istInstant(
    d.getUTCFullYear(),
    d.getUTCMonth() - months,
    d.getUTCDate(),
    d.getUTCHours(),
    d.getUTCMinutes(),
    d.getUTCSeconds(),
  );
}
