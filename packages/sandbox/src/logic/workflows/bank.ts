/**
 * bank_bre (decision spec 4.4): payday decision from account transactions, in three input modes:
 * AA fetched inside the workflow (request_id, bank_type bank_aa), statement analyser fetched inside
 * (report_id + auth_token, bank_type bank_bsa), or supplied by the caller (lead_id, declared_income,
 * external{bank_type, bank_data}, one account or an array of accounts). As in the spec's example,
 * prev_output_features is a sibling of features here, and LoanAmount is null on Reject.
 */
import { accountFeatures } from '../bank.js';
import { Validator } from '../../validate.js';
import { INPUT_LOC, assertValid, decisionReason, runChain, type WorkflowRun } from './common.js';
import { readBankExternal, readBankFetched } from './inputs.js';
import { CUTOFFS, bankAmount, bankStage } from './rules.js';

export const bank: WorkflowRun = (input, ctx) => {
  const v = new Validator();
  let declared: number | undefined;
  let txns: ReturnType<typeof readBankFetched>;
  if (input.external !== undefined) {
    v.str(input, 'lead_id', INPUT_LOC);
    declared = v.num(input, 'declared_income', INPUT_LOC);
    const external = v.obj(input, 'external', INPUT_LOC);
    if (external) txns = readBankExternal(v, external, [...INPUT_LOC, 'external'], true);
  } else {
    txns = readBankFetched(v, input, INPUT_LOC, ctx);
  }
  assertValid(v);
  const features = accountFeatures(txns!(), declared);
  const c = CUTOFFS[ctx.variant];
  const chain = runChain([bankStage(c, features)]);
  return {
    workflowName: 'bank',
    outputData: {
      ecm: {},
      rules_output: {
        final_decision: {
          Decision: chain.approved ? 'Approve' : 'Reject',
          LoanAmount: chain.approved ? bankAmount(c, features) : null,
          DecisionReason: decisionReason(chain),
          RulesEvaluation: chain.rulesEvaluation,
          version: ctx.variant,
          rule_engine_name: 'bank',
        },
        pre_bureau: {},
      },
      features: { output_features: { account_intel: { ...features } } },
      prev_output_features: {},
    },
  };
};
