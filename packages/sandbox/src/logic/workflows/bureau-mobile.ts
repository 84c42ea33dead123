/**
 * bureau_mobile_bre (decision spec 4.3): payday decision from bureau and mobile intelligence. The bureau
 * comes from the caller (external.bureau_type + external.bureau_raw_json) or is "fetched by the workflow"
 * from the personal fields (a profile derived from the PAN). Chain: basic -> bureau_intel -> mobile_intel.
 */
import { mobileFeatures } from '../mobile.js';
import { Validator } from '../../validate.js';
import { INPUT_LOC, assertValid, decisionReason, runChain, type WorkflowRun } from './common.js';
import { readBureauExternal, readBureauPersonal } from './inputs.js';
import { CUTOFFS, basicStage, bureauIntel, bureauStage, mobileStage, paydayAmount } from './rules.js';

export const bureauMobile: WorkflowRun = (input, ctx) => {
  const v = new Validator();
  v.str(input, 'lead_id', INPUT_LOC);
  const appUserId = v.str(input, 'app_user_id', INPUT_LOC, true, { maxLength: 64 });
  const declared = v.num(input, 'declared_income', INPUT_LOC);
  let bureau: ReturnType<typeof readBureauPersonal>;
  if (input.external !== undefined) {
    const external = v.obj(input, 'external', INPUT_LOC);
    if (external) bureau = readBureauExternal(v, external, [...INPUT_LOC, 'external']);
  } else {
    bureau = readBureauPersonal(v, input, INPUT_LOC);
  }
  assertValid(v);
  const profile = bureau!();
  const c = CUTOFFS[ctx.variant];
  const b = bureauIntel(profile, declared!);
  const m = mobileFeatures(appUserId!, declared!);
  const chain = runChain([basicStage(c, declared!), bureauStage(c, b), mobileStage(c, m)]);
  return {
    workflowName: 'bureau',
    outputData: {
      ecm: {},
      rules_output: {
        final_decision: {
          Decision: chain.approved ? 'Approve' : 'Reject',
          LoanAmount: chain.approved ? paydayAmount(c, m, b) : null,
          RulesEvaluation: chain.rulesEvaluation,
          DecisionReason: decisionReason(chain),
          version: ctx.variant,
          rule_engine_name: chain.engine,
        },
        basic: {},
        mobile_intel: {},
      },
      features: {
        output_features: { bureau_intel: { ...b }, mobile_intel: { ...m } },
        prev_output_features: {},
      },
    },
  };
};
