/** Workflow answers in the shapes the spec shows (2.3–2.5, 4.2–4.6). Synthetic values. */
import type { Json } from '@bre-batch/core/types';

type Obj = { [k: string]: Json };

export function answer(
  workflow: string,
  finalDecision: Obj,
  features: Obj = {},
  extra: { rules?: Obj; outputData?: Obj } = {},
): Obj {
  return {
    request_id: 'req-0001',
    user_id: 'user0001',
    reference_id: 'ref0001',
    workflow_version_path: workflow,
    engine_history: [],
    output_data: {
      ecm: {},
      rules_output: { ...(extra.rules ?? {}), final_decision: finalDecision },
      features: { output_features: {}, prev_output_features: {}, ...features },
      ...(extra.outputData ?? {}),
    },
  };
}

/** 4.2: location. */
export const LOCATION = answer(
  'workflow_location_v1',
  {
    Decision: 'Approve',
    DecisionReason: 'geocoding bre checked',
    RulesEvaluation: { 'geocoding bre checked': true },
    version: 'v1',
    rule_engine_name: 'geocoding',
  },
  { output_features: { geocoding: { state: 'Maharashtra', pincode: '400001', city: 'Mumbai' } } },
);

/** 4.3: bureau + mobile, payday product. */
export const BUREAU_MOBILE = answer(
  'workflow_bureau_v1',
  {
    Decision: 'Approve',
    LoanAmount: 15000,
    RulesEvaluation: { 'mobile_intel bre checked': true },
    DecisionReason: 'mobile_intel bre checked',
    version: 'v1',
    rule_engine_name: 'mobile_intel',
  },
  {
    output_features: {
      bureau_intel: {
        bureau_score: 742,
        cbs_risk_grade: 3,
        cbs_stpl_v1: 0.12,
        cbs_monthly_affordability_v1: 9000,
        bureau_affordability: 12000,
      },
      mobile_intel: {
        fraud_flag: false,
        all_sms_count: 812,
        vendor_payday_score: 0.71,
        mobile_intel_affordability: 11000,
        estimated_salary: 42000,
      },
    },
    bureau_intel: {},
    mobile_intel: {},
  },
  { rules: { basic: {}, mobile_intel: {} } },
);

/** 4.4: bank, Reject with LoanAmount null; prev_output_features beside features (2.3). */
export const BANK_REJECT: Obj = {
  request_id: 'req-bank',
  user_id: 'u',
  reference_id: 'r',
  workflow_version_path: 'workflow_bank_v1',
  engine_history: [],
  output_data: {
    ecm: { fetched: { big: 'raw personal data' } },
    rules_output: {
      pre_bureau: {},
      final_decision: {
        Decision: 'Reject',
        LoanAmount: null,
        DecisionReason: 'bank bre checked',
        RulesEvaluation: { 'bank bre checked': false, 'salary credits found': true, 'no bounces': false },
        version: 'v1',
        rule_engine_name: 'bank',
      },
    },
    features: { output_features: { account_intel: { avg_balance: 1520.5 } } },
    prev_output_features: { bureau_intel: { bureau_score: 700 } },
  },
};

/** 4.5: bureau + mobile + bank. */
export const BUREAU_MOBILE_BANK = answer(
  'workflow_bureau_mobile_bank_v1',
  {
    Decision: 'Approve',
    LoanAmount: 30000,
    RulesEvaluation: {},
    DecisionReason: 'bureau_intel bre checked',
    version: 'v1',
    rule_engine_name: 'bureau_intel',
  },
  { output_features: { bureau_intel: { bureau_score: 760 }, mobile_intel: { fraud_flag: false }, account_intel: {} } },
  { rules: { basic: {} } },
);

/** 4.6: repeat, with ReplaymentDate. */
export const REPEAT = answer('workflow_repeat_v1', {
  Decision: 'Approve',
  LoanAmount: 12000,
  ReplaymentDate: '2026-12-20',
  DecisionReason: 'repeat bre passed with approval',
  RulesEvaluation: { 'repeat bre passed with approval': true },
  version: 'v1',
  rule_engine_name: 'basic',
});

const OFFERS: Json[] = [
  { product_code: 'EMI3', tenure_months: 3, pf_percent: 2, interest_rate: 24, emi_amount: 7000, loan_amount: 20000 },
  { product_code: 'EMI6', tenure_months: 6, pf_percent: 2, interest_rate: 22, emi_amount: 6500, loan_amount: 36000 },
  {
    product_code: 'EMI12',
    tenure_months: 12,
    pf_percent: 2.5,
    interest_rate: 20,
    emi_amount: 3400,
    loan_amount: 36000,
  },
];

/** 2.4 (6): EMI only. */
export const EMI_ONLY = answer('workflow_emi_v1', {
  EmiDecision: 'Approve',
  LoanOffers: OFFERS,
  RulesEvaluation: { 'emi bre checked': true },
  version: 'v1',
  rule_engine_name: 'bureau_bre',
});

/** 2.4: both products in one final_decision. */
export const BOTH = answer('workflow_bureau_v1', {
  Decision: 'Approve',
  LoanAmount: 10000,
  DecisionReason: 'bureau_bre checked',
  EmiDecision: 'Approve',
  LoanOffers: OFFERS,
  RulesEvaluation: { 'bureau_bre checked': true },
  version: 'v1',
  rule_engine_name: 'bureau_bre',
});
