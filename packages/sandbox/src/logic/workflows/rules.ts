/**
 * Engine features and rule stages shared by the bureau/mobile/bank workflows, with the champion (v1) and
 * challenger (v2) cut-offs side by side. The cut-offs are meant to be plausible for small-ticket lending,
 * and different enough that a back-test of v1 against v2 shows real swaps.
 */
import { bureauFeatures, type BureauProfile } from '../bureau.js';
import type { AccountFeatures } from '../bank.js';
import type { MobileFeatures } from '../mobile.js';
import type { Stage, Variant } from './common.js';

export const CUTOFFS = {
  v1: {
    minIncome: 12_000,
    minScore: 600,
    ntcAllowed: true,
    maxOverdueAccounts: 1,
    minVendorScore: 450,
    minSms: 50,
    minBankIncome: 15_000,
    maxBounces: 2,
    maxFoir: 0.55,
    minAvgBalance: 2_000,
    paydayMultiple: 2,
    bankMultiple: 0.6,
    emiMaxGrade: 3,
    emiTenures: [3, 6, 9, 12],
    emiRates: { 1: 14, 2: 16.5, 3: 19.5, 4: 24, 5: 28 } as Record<number, number>,
  },
  v2: {
    minIncome: 15_000,
    minScore: 640,
    ntcAllowed: true,
    maxOverdueAccounts: 0,
    minVendorScore: 500,
    minSms: 50,
    minBankIncome: 18_000,
    maxBounces: 1,
    maxFoir: 0.5,
    minAvgBalance: 3_000,
    paydayMultiple: 2.5,
    bankMultiple: 0.7,
    emiMaxGrade: 3,
    emiTenures: [6, 12, 18],
    emiRates: { 1: 13.5, 2: 16, 3: 20, 4: 24, 5: 28 } as Record<number, number>,
  },
} as const;

export type Cutoffs = (typeof CUTOFFS)[Variant];

export interface BureauIntel {
  readonly bureau_score: number;
  readonly cbs_risk_grade: number;
  readonly cbs_stpl_v1: number;
  readonly cbs_monthly_affordability_v1: number;
  readonly bureau_affordability: number;
  readonly is_risky_customer: boolean;
  readonly income_calculated: number;
  readonly bureau_hit: boolean;
  readonly overdue_accounts: number;
  readonly recent_enquiries: number;
}

/** bureau_intel features (2.5); the cbs_* values equal /api/bureau's for the same report. */
export function bureauIntel(profile: BureauProfile, declaredIncome: number): BureauIntel {
  const f = bureauFeatures(profile);
  const declaredCap = Math.round(Math.max(0, declaredIncome) * 0.5);
  const base =
    f.bureau_hit && f.income_calculated > 0
      ? f.cbs_monthly_affordability_v1
      : Math.round(Math.max(0, declaredIncome) * 0.3);
  return {
    bureau_score: f.score,
    cbs_risk_grade: f.cbs_risk_grade_v1,
    cbs_stpl_v1: f.cbs_stpl_v1,
    cbs_monthly_affordability_v1: f.cbs_monthly_affordability_v1,
    bureau_affordability: Math.min(base, declaredCap),
    is_risky_customer: f.is_risky_customer,
    income_calculated: f.income_calculated,
    bureau_hit: f.bureau_hit,
    overdue_accounts: f.overdue_accounts,
    recent_enquiries: f.recent_enquiries,
  };
}

export function basicStage(c: Cutoffs, declaredIncome: number): Stage {
  return {
    engine: 'basic',
    rules: [{ name: `declared income at least ${c.minIncome}`, pass: declaredIncome >= c.minIncome }],
  };
}

export function bureauStage(c: Cutoffs, b: BureauIntel): Stage {
  return {
    engine: 'bureau_intel',
    rules: [
      {
        name: `bureau score at least ${c.minScore}${c.ntcAllowed ? ' or new to credit' : ''}`,
        pass: b.bureau_hit ? b.bureau_score >= c.minScore : c.ntcAllowed,
      },
      { name: 'not a risky customer', pass: !b.is_risky_customer },
      { name: `overdue accounts at most ${c.maxOverdueAccounts}`, pass: b.overdue_accounts <= c.maxOverdueAccounts },
    ],
  };
}

export function mobileStage(c: Cutoffs, m: MobileFeatures): Stage {
  return {
    engine: 'mobile_intel',
    rules: [
      { name: 'no mobile fraud flag', pass: !m.fraud_flag },
      { name: `vendor payday score at least ${c.minVendorScore}`, pass: m.vendor_payday_score >= c.minVendorScore },
      { name: `sms count at least ${c.minSms}`, pass: m.all_sms_count >= c.minSms },
    ],
  };
}

export function bankStage(c: Cutoffs, a: AccountFeatures): Stage {
  return {
    engine: 'bank',
    rules: [
      { name: `bank income at least ${c.minBankIncome}`, pass: a.income_estimate >= c.minBankIncome },
      { name: `bounces at most ${c.maxBounces}`, pass: a.bounce_count <= c.maxBounces },
      { name: `foir at most ${c.maxFoir}`, pass: a.foir <= c.maxFoir },
      { name: `average balance at least ${c.minAvgBalance}`, pass: a.average_balance >= c.minAvgBalance },
    ],
  };
}

const floor500 = (x: number) => Math.floor(x / 500) * 500;
const clampAmount = (x: number) => Math.min(50_000, Math.max(1_000, floor500(x)));

/** Payday amount from mobile and bureau affordability. */
export function paydayAmount(c: Cutoffs, m: MobileFeatures, b: BureauIntel): number {
  return clampAmount(
    Math.min(m.mobile_intel_affordability, b.bureau_affordability || m.mobile_intel_affordability) * c.paydayMultiple,
  );
}

/** Payday amount from bank cash flow. */
export function bankAmount(c: Cutoffs, a: AccountFeatures): number {
  return clampAmount(a.income_estimate * Math.max(0, 1 - a.foir) * c.bankMultiple);
}

export interface LoanOffer {
  readonly product_code: string;
  readonly tenure_months: number;
  readonly pf_percent: number;
  readonly interest_rate: number;
  readonly emi_amount: number;
  readonly loan_amount: number;
}

const PF: Record<number, number> = { 1: 1.5, 2: 2, 3: 2.5, 4: 3, 5: 3.5 };

/** EMI offers (2.4 LoanOffers): one per tenure the monthly capacity supports (>= 5000, <= 300000). */
export function emiOffers(c: Cutoffs, grade: number, monthlyCapacity: number): LoanOffer[] {
  if (grade > c.emiMaxGrade || monthlyCapacity <= 0) return [];
  const annual = c.emiRates[grade];
  const r = annual / 1200;
  const offers: LoanOffer[] = [];
  for (const n of c.emiTenures) {
    const factor = (1 - (1 + r) ** -n) / r;
    const loan = Math.floor(Math.min(monthlyCapacity * factor, 300_000) / 1000) * 1000;
    if (loan < 5_000) continue;
    offers.push({
      product_code: `EMI_${String(n).padStart(2, '0')}M`,
      tenure_months: n,
      pf_percent: PF[grade],
      interest_rate: annual,
      emi_amount: Math.round(loan / factor),
      loan_amount: loan,
    });
  }
  return offers;
}
