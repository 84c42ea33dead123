/**
 * repeat_bre (decision spec 4.6): decision for a returning customer from the lender's own loan history.
 * All fields are required. The repayment date (`ReplaymentDate`, spelled as in the spec) is today on the
 * sandbox clock (IST) plus the tenure decided for the last loan (in days, 7..180; 30 when not positive).
 */
import { DAY_MS, istDate } from '../time.js';
import { Validator } from '../../validate.js';
import { INPUT_LOC, assertValid, floorTo, runChain, unexpected, type WorkflowRun } from './common.js';

const STRINGS = [
  'pan_number',
  'name_aadhar',
  'address_aadhar',
  'state_aadhar',
  'city_aadhar',
  'pincode_aadhar',
  'phone',
  'dob',
] as const;
const NUMBERS = [
  'max_dpd_last_loan',
  'max_dpd_ever_internal',
  'previous_loan_amount',
  'decided_tenure_last_loan',
  'actual_tenure_last_loan',
  'days_since_last_loan_closed',
  'number_of_loans_closed',
  'days_since_last_loan_taken',
  'days_since_first_loan_taken',
] as const;

const CUT = {
  v1: { maxDpdLast: 5, maxDpdEver: 30, maxDaysSinceClosed: 180, stepUpAfter: 2, stepUp: 1.25, cap: 100_000 },
  v2: { maxDpdLast: 4, maxDpdEver: 25, maxDaysSinceClosed: 150, stepUpAfter: 1, stepUp: 1.2, cap: 100_000 },
} as const;

export const repeat: WorkflowRun = (input, ctx) => {
  const v = new Validator();
  for (const f of STRINGS) v.str(input, f, INPUT_LOC);
  const n: Partial<Record<(typeof NUMBERS)[number], number>> = {};
  for (const f of NUMBERS) n[f] = v.num(input, f, INPUT_LOC);
  const currentDefault = v.bool(input, 'flag_current_default', INPUT_LOC);
  const dpd0Loans = v.num(input, 'number_of_loans_closed_with_dpd_0_full_cycle', INPUT_LOC);
  assertValid(v);
  for (const f of NUMBERS) if (n[f]! < 0) unexpected(`${f} must not be negative, got ${n[f]}`);
  if (dpd0Loans! < 0) unexpected(`number_of_loans_closed_with_dpd_0_full_cycle must not be negative, got ${dpd0Loans}`);

  const c = CUT[ctx.variant];
  const chain = runChain([
    {
      engine: 'basic',
      rules: [
        { name: 'no current default', pass: !currentDefault },
        { name: `max dpd last loan at most ${c.maxDpdLast}`, pass: n.max_dpd_last_loan! <= c.maxDpdLast },
        { name: `max dpd ever at most ${c.maxDpdEver}`, pass: n.max_dpd_ever_internal! <= c.maxDpdEver },
        { name: 'at least one loan closed', pass: n.number_of_loans_closed! >= 1 },
        {
          name: `last loan closed within ${c.maxDaysSinceClosed} days`,
          pass: n.days_since_last_loan_closed! <= c.maxDaysSinceClosed,
        },
      ],
    },
  ]);
  let amount: number | null = null;
  let date: string | null = null;
  if (chain.approved) {
    let step = dpd0Loans! >= c.stepUpAfter ? c.stepUp : 1;
    if (n.actual_tenure_last_loan! > n.decided_tenure_last_loan!) step *= 0.9;
    amount = Math.min(c.cap, Math.max(1_000, floorTo(n.previous_loan_amount! * step, 500)));
    const tenure =
      n.decided_tenure_last_loan! > 0 ? Math.min(180, Math.max(7, Math.round(n.decided_tenure_last_loan!))) : 30;
    date = istDate(ctx.now + tenure * DAY_MS);
  }
  return {
    workflowName: 'repeat',
    outputData: {
      ecm: {},
      rules_output: {
        final_decision: {
          Decision: chain.approved ? 'Approve' : 'Reject',
          LoanAmount: amount,
          ReplaymentDate: date,
          DecisionReason: chain.approved
            ? 'repeat bre passed with approval'
            : `repeat bre rejected: ${chain.failed.join('; ')}`,
          RulesEvaluation: chain.rulesEvaluation,
          version: ctx.variant,
          rule_engine_name: 'basic',
        },
      },
      features: { output_features: {}, prev_output_features: {} },
    },
  };
};
