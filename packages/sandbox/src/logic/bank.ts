/**
 * Account features from bank transactions, for bank_bre and bureau_mobile_bank_bre (decision spec 4.4,
 * 4.5). Works on one normalised list whatever the source: the caller's bank_data (2.6), or the generated
 * histories of the AA / BSA sessions when the workflow fetches them itself. Transactions are classified
 * from their narration, as a statement analyser would.
 */
import { istMonthIndex } from './time.js';

export interface BankTxn {
  readonly ts: number;
  readonly type: 'CREDIT' | 'DEBIT';
  readonly amount: number;
  readonly balance: number | null;
  readonly narration: string;
}

export interface AccountFeatures {
  readonly months_of_data: number;
  readonly transaction_count: number;
  readonly salary_months: number;
  readonly monthly_salary: number;
  readonly monthly_credit: number;
  readonly monthly_emi: number;
  readonly bounce_count: number;
  readonly average_balance: number;
  readonly min_balance: number;
  readonly total_credit: number;
  readonly total_debit: number;
  readonly income_estimate: number;
  readonly foir: number;
}

const SALARY = /\bSAL(?:ARY)?\b|PAYROLL/i;
const BOUNCE = /RETURN|BOUNCE|INSUFF|\bNSF\b|DISHONOU?R/i;
const EMI = /\bEMI\b|\bNACH\b|\bACH D|\bECS\b|LOAN REPAY/i;
const SELF = /SELF TRANSFER/i;

export function classify(t: BankTxn): 'salary' | 'bounce' | 'emi' | 'self' | 'other' {
  if (BOUNCE.test(t.narration)) return 'bounce';
  if (t.type === 'CREDIT' && SALARY.test(t.narration)) return 'salary';
  if (t.type === 'DEBIT' && EMI.test(t.narration)) return 'emi';
  if (SELF.test(t.narration)) return 'self';
  return 'other';
}

const r2 = (x: number) => Math.round(x * 100) / 100;

/** `declaredIncome`, when given, stands in for income when no salary is seen (capped by actual credits). */
export function accountFeatures(txns: readonly BankTxn[], declaredIncome?: number): AccountFeatures {
  const months = new Set<number>();
  const salaryMonths = new Set<number>();
  let salary = 0,
    emi = 0,
    bounces = 0,
    credit = 0,
    debit = 0,
    selfIn = 0;
  let balSum = 0,
    balN = 0,
    balMin = Infinity;
  for (const t of txns) {
    const m = istMonthIndex(t.ts);
    months.add(m);
    const kind = classify(t);
    if (t.type === 'CREDIT') {
      credit += t.amount;
      if (kind === 'self') selfIn += t.amount;
    } else debit += t.amount;
    if (kind === 'salary') {
      salary += t.amount;
      salaryMonths.add(m);
    } else if (kind === 'emi') emi += t.amount;
    else if (kind === 'bounce') bounces++;
    if (t.balance !== null && Number.isFinite(t.balance)) {
      balSum += t.balance;
      balN++;
      balMin = Math.min(balMin, t.balance);
    }
  }
  const nMonths = Math.max(1, months.size);
  const monthlySalary = salaryMonths.size > 0 ? Math.round(salary / salaryMonths.size) : 0;
  const monthlyCredit = Math.round((credit - selfIn) / nMonths);
  const monthlyEmi = Math.round(emi / nMonths);
  let income = monthlySalary;
  if (income === 0)
    income =
      declaredIncome !== undefined && declaredIncome > 0
        ? Math.min(declaredIncome, monthlyCredit)
        : Math.round(monthlyCredit * 0.6);
  return {
    months_of_data: months.size,
    transaction_count: txns.length,
    salary_months: salaryMonths.size,
    monthly_salary: monthlySalary,
    monthly_credit: monthlyCredit,
    monthly_emi: monthlyEmi,
    bounce_count: bounces,
    average_balance: balN > 0 ? Math.round(balSum / balN) : 0,
    min_balance: balN > 0 ? r2(balMin) : 0,
    total_credit: r2(credit),
    total_debit: r2(debit),
    income_estimate: income,
    foir: income > 0 ? r2(monthlyEmi / income) : 1,
  };
}
