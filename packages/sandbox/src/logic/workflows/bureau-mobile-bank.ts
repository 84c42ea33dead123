/**
 * bureau_mobile_bank_bre (decision spec 4.5): bureau, mobile and bank data, all supplied by the caller.
 * Serves BOTH products (spec 1.6, 2.4): Decision/LoanAmount (payday) and EmiDecision/LoanOffers (EMI) in
 * the same final_decision. Chain: basic -> mobile_intel -> bank -> bureau_intel (the example's
 * rule_engine_name is bureau_intel, the last engine). EMI is offered when the payday chain approves and
 * the bureau risk grade is good enough; the payday amount is the lower of the mobile/bureau and bank
 * amounts.
 */
import { accountFeatures } from '../bank.js';
import { mobileFeatures } from '../mobile.js';
import { Validator } from '../../validate.js';
import { INPUT_LOC, assertValid, decisionReason, runChain, type WorkflowRun } from './common.js';
import { readBankExternal, readBureauExternal } from './inputs.js';
import {
  CUTOFFS,
  bankAmount,
  bankStage,
  basicStage,
  bureauIntel,
  bureauStage,
  emiOffers,
  mobileStage,
  paydayAmount,
} from './rules.js';

export const bureauMobileBank: WorkflowRun = (input, ctx) => {
  const v = new Validator();
  v.str(input, 'lead_id', INPUT_LOC);
  const appUserId = v.str(input, 'app_user_id', INPUT_LOC, true, { maxLength: 64 });
  const declared = v.num(input, 'declared_income', INPUT_LOC);
  const external = v.obj(input, 'external', INPUT_LOC);
  let bureau: ReturnType<typeof readBureauExternal>;
  let txns: ReturnType<typeof readBankExternal>;
  if (external) {
    const loc = [...INPUT_LOC, 'external'];
    bureau = readBureauExternal(v, external, loc);
    txns = readBankExternal(v, external, loc, false);
  }
  assertValid(v);
  const profile = bureau!();
  const account = accountFeatures(txns!(), declared);
  const c = CUTOFFS[ctx.variant];
  const b = bureauIntel(profile, declared!);
  const m = mobileFeatures(appUserId!, declared!);
  const chain = runChain([basicStage(c, declared!), mobileStage(c, m), bankStage(c, account), bureauStage(c, b)]);
  const capacity = Math.round(account.income_estimate * 0.5 - account.monthly_emi);
  const offers = chain.approved ? emiOffers(c, b.cbs_risk_grade, capacity) : [];
  return {
    workflowName: 'bureau_mobile_bank',
    outputData: {
      ecm: {},
      rules_output: {
        final_decision: {
          Decision: chain.approved ? 'Approve' : 'Reject',
          LoanAmount: chain.approved ? Math.min(paydayAmount(c, m, b), bankAmount(c, account)) : null,
          EmiDecision: offers.length > 0 ? 'Approve' : 'Reject',
          LoanOffers: offers,
          RulesEvaluation: chain.rulesEvaluation,
          DecisionReason: decisionReason(chain),
          version: ctx.variant,
          rule_engine_name: chain.engine,
        },
        basic: {},
      },
      features: {
        output_features: { bureau_intel: { ...b }, mobile_intel: { ...m }, account_intel: { ...account } },
        prev_output_features: {},
      },
    },
  };
};
