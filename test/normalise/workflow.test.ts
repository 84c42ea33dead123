import { expectDeclared } from '../helpers/declared.js';
import { describe, expect, it } from 'vitest';
import { BreError } from '@bre-batch/core/errors';
import {
  bestOffer,
  normaliseWorkflow,
  parseWorkflowVersionPath,
  workflowResultColumns,
} from '../../src/normalise/workflow.js';
import type { Json } from '@bre-batch/core/types';
import {
  answer,
  BANK_REJECT,
  BOTH,
  BUREAU_MOBILE,
  BUREAU_MOBILE_BANK,
  EMI_ONLY,
  LOCATION,
  REPEAT,
} from './workflow-fixtures.js';

const NO_OFFER = {
  'best_offer.product_code': null,
  'best_offer.tenure_months': null,
  'best_offer.pf_percent': null,
  'best_offer.interest_rate': null,
  'best_offer.emi_amount': null,
  'best_offer.loan_amount': null,
};

describe('normaliseWorkflow over every variant the spec shows', () => {
  const cases: Array<[string, unknown, Record<string, Json>]> = [
    [
      'location, payday fields only (4.2)',
      LOCATION,
      {
        decision: 'Approve',
        decision_reason: 'geocoding bre checked',
        loan_amount: null,
        repayment_date: null,
        emi_decision: null,
        loan_offers: [],
        offers_count: 0,
        ...NO_OFFER,
        rule_engine_name: 'geocoding',
        rules_version: 'v1',
        rules_failed: [],
        workflow: 'location',
        workflow_version: 'v1',
        request_id: 'req-0001',
        'geocoding.state': 'Maharashtra',
        'geocoding.pincode': '400001',
        'geocoding.city': 'Mumbai',
      },
    ],
    [
      'bureau + mobile with features of two engines (4.3)',
      BUREAU_MOBILE,
      {
        decision: 'Approve',
        decision_reason: 'mobile_intel bre checked',
        loan_amount: 15000,
        repayment_date: null,
        emi_decision: null,
        loan_offers: [],
        offers_count: 0,
        ...NO_OFFER,
        rule_engine_name: 'mobile_intel',
        rules_version: 'v1',
        rules_failed: [],
        workflow: 'bureau',
        workflow_version: 'v1',
        request_id: 'req-0001',
        'bureau_intel.bureau_score': 742,
        'bureau_intel.cbs_risk_grade': 3,
        'bureau_intel.cbs_stpl_v1': 0.12,
        'bureau_intel.cbs_monthly_affordability_v1': 9000,
        'bureau_intel.bureau_affordability': 12000,
        'mobile_intel.fraud_flag': false,
        'mobile_intel.all_sms_count': 812,
        'mobile_intel.vendor_payday_score': 0.71,
        'mobile_intel.mobile_intel_affordability': 11000,
        'mobile_intel.estimated_salary': 42000,
      },
    ],
    [
      'bank reject: LoanAmount null, failed rules, prev_output_features beside features (4.4)',
      BANK_REJECT,
      {
        decision: 'Reject',
        decision_reason: 'bank bre checked',
        loan_amount: null,
        repayment_date: null,
        emi_decision: null,
        loan_offers: [],
        offers_count: 0,
        ...NO_OFFER,
        rule_engine_name: 'bank',
        rules_version: 'v1',
        rules_failed: ['bank bre checked', 'no bounces'],
        workflow: 'bank',
        workflow_version: 'v1',
        request_id: 'req-bank',
        'account_intel.avg_balance': 1520.5,
        'prev.bureau_intel.bureau_score': 700,
      },
    ],
    [
      'bureau + mobile + bank, empty RulesEvaluation and an empty engine (4.5)',
      BUREAU_MOBILE_BANK,
      {
        decision: 'Approve',
        decision_reason: 'bureau_intel bre checked',
        loan_amount: 30000,
        repayment_date: null,
        emi_decision: null,
        loan_offers: [],
        offers_count: 0,
        ...NO_OFFER,
        rule_engine_name: 'bureau_intel',
        rules_version: 'v1',
        rules_failed: [],
        workflow: 'bureau_mobile_bank',
        workflow_version: 'v1',
        request_id: 'req-0001',
        'bureau_intel.bureau_score': 760,
        'mobile_intel.fraud_flag': false,
      },
    ],
    [
      'repeat with ReplaymentDate (4.6)',
      REPEAT,
      {
        decision: 'Approve',
        decision_reason: 'repeat bre passed with approval',
        loan_amount: 12000,
        repayment_date: '2026-12-20',
        emi_decision: null,
        loan_offers: [],
        offers_count: 0,
        ...NO_OFFER,
        rule_engine_name: 'basic',
        rules_version: 'v1',
        rules_failed: [],
        workflow: 'repeat',
        workflow_version: 'v1',
        request_id: 'req-0001',
      },
    ],
  ];
  it.each(cases)('%s', (_name, input, expected) => {
    const out = normaliseWorkflow(input);
    expect(out).toEqual(expected);
    // fixed columns first, in the documented order
    const fields = workflowResultColumns();
    expect(Object.keys(out).slice(0, fields.length)).toEqual(fields.map((f) => f.name));
    expectDeclared(out, fields);
  });

  it('EMI only: offers, count and the best offer (largest amount, then lowest rate)', () => {
    const out = normaliseWorkflow(EMI_ONLY);
    expect(out.decision).toBeNull();
    expect(out.loan_amount).toBeNull();
    expect(out.emi_decision).toBe('Approve');
    expect(out.offers_count).toBe(3);
    expect((out.loan_offers as Json[]).length).toBe(3);
    expect(out['best_offer.product_code']).toBe('EMI12');
    expect(out['best_offer.loan_amount']).toBe(36000);
    expect(out['best_offer.interest_rate']).toBe(20);
    expect(out['best_offer.tenure_months']).toBe(12);
    expect(out['best_offer.emi_amount']).toBe(3400);
    expect(out['best_offer.pf_percent']).toBe(2.5);
    expect(out.workflow).toBe('emi');
  });

  it('both products in one final_decision', () => {
    const out = normaliseWorkflow(BOTH);
    expect([out.decision, out.loan_amount, out.emi_decision, out.offers_count, out['best_offer.product_code']]).toEqual(
      ['Approve', 10000, 'Approve', 3, 'EMI12'],
    );
  });

  it('prev_output_features inside features is prefixed prev.', () => {
    const out = normaliseWorkflow(
      answer('workflow_x_v1', { Decision: 'Approve' }, { prev_output_features: { geocoding: { city: 'Pune' } } }),
    );
    expect(out['prev.geocoding.city']).toBe('Pune');
    expect(out['geocoding.city']).toBeUndefined();
  });

  it('unknown final_decision keys are kept verbatim under final_decision.', () => {
    const out = normaliseWorkflow(
      answer('workflow_x_v1', { Decision: 'Proceed To Bank', RiskBand: 'B', Limits: { max: 5 } }),
    );
    expect(out.decision).toBe('Proceed To Bank');
    expect(out['final_decision.RiskBand']).toBe('B');
    expect(out['final_decision.Limits']).toEqual({ max: 5 });
  });

  it('nested feature values stay JSON; scalar engines and non-empty side objects are kept', () => {
    const out = normaliseWorkflow(
      answer(
        'workflow_x_v1',
        { Decision: 'Approve' },
        {
          output_features: {
            bureau_intel: { tradelines: [{ a: 1 }], summary: { n: 2 } },
            flat_score: 5,
            prev: { x: 1 },
          },
          bureau_intel: { internal: 1 },
        },
        { rules: { basic: { passed: true }, empty: {} } },
      ),
    );
    expect(out['bureau_intel.tradelines']).toEqual([{ a: 1 }]);
    expect(out['bureau_intel.summary']).toEqual({ n: 2 });
    expect(out.flat_score).toBe(5);
    expect(out['output_features.prev.x']).toBe(1); // an engine named like a reserved prefix cannot collide
    expect(out['features.bureau_intel.internal']).toBe(1);
    expect(out['rules_output.basic.passed']).toBe(true);
    expect(Object.keys(out).some((k) => k.startsWith('rules_output.empty'))).toBe(false);
  });

  it('ecm and engine_history are not copied', () => {
    const out = normaliseWorkflow(BANK_REJECT);
    expect(Object.keys(out).some((k) => k.includes('ecm') || k.includes('fetched'))).toBe(false);
  });

  it('RulesEvaluation: false and "false" fail, true and others pass', () => {
    const out = normaliseWorkflow(
      answer('workflow_x_v1', { Decision: 'Reject', RulesEvaluation: { a: true, b: false, c: 'false', d: null } }),
    );
    expect(out.rules_failed).toEqual(['b', 'c']);
  });

  it('numeric text amounts become numbers; a single offer object is a list of one', () => {
    const out = normaliseWorkflow(
      answer('workflow_x_v1', {
        Decision: 'Approve',
        LoanAmount: '15000',
        LoanOffers: { product_code: 'P', loan_amount: '5000' },
      }),
    );
    expect(out.loan_amount).toBe(15000);
    expect(out.offers_count).toBe(1);
    expect(out['best_offer.loan_amount']).toBe(5000);
  });

  it('missing output_data parts other than final_decision are tolerated', () => {
    const out = normaliseWorkflow({ output_data: { rules_output: { final_decision: { Decision: 'Approve' } } } });
    expect(out.decision).toBe('Approve');
    expect(out.workflow).toBeNull();
    expect(out.request_id).toBeNull();
    expect(Object.keys(out)).toEqual(workflowResultColumns().map((f) => f.name));
  });

  it('engines and features named like Object.prototype members, or __proto__, are ordinary keys', () => {
    const answerText =
      '{"output_data":{"rules_output":{"final_decision":{"Decision":"Approve","constructor":1},' +
      '"__proto__":{"polluted":true}},"features":{"output_features":{"__proto__":{"x":1},"toString":{"y":2},"constructor":3}}}}';
    const out = normaliseWorkflow(JSON.parse(answerText));
    expect(out['final_decision.constructor']).toBe(1);
    expect(out['__proto__.x']).toBe(1);
    expect(out['toString.y']).toBe(2);
    expect(Object.hasOwn(out, 'constructor')).toBe(true);
    expect(out.constructor).toBe(3);
    expect(out['rules_output.__proto__.polluted']).toBe(true);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('a repeated workflow_version_path gives the same parse, and a different one its own', () => {
    const base = { output_data: { rules_output: { final_decision: { Decision: 'Approve' } } } };
    expect(normaliseWorkflow({ ...base, workflow_version_path: 'workflow_bank_v2' }).workflow_version).toBe('v2');
    expect(normaliseWorkflow({ ...base, workflow_version_path: 'workflow_bank_v2' }).workflow).toBe('bank');
    expect(normaliseWorkflow({ ...base, workflow_version_path: 'workflow_repeat_v3' }).workflow).toBe('repeat');
    expect(normaliseWorkflow(base).workflow).toBeNull();
  });

  const bad: Array<[string, unknown, RegExp]> = [
    ['not an object', 'oops', /expected an object, got a string/],
    ['an array', [], /got an array/],
    ['null', null, /got null/],
    [
      'no output_data',
      { request_id: 'r', detail: 'x' },
      /output_data should be an object, got nothing \(answer: an object with keys \[request_id, detail\]\)/,
    ],
    ['no rules_output', { output_data: { features: {} } }, /rules_output should be an object/],
    [
      'no final_decision',
      { output_data: { rules_output: { basic: {} } } },
      /final_decision should be an object, got nothing/,
    ],
    ['final_decision not an object', { output_data: { rules_output: { final_decision: 'Approve' } } }, /got a string/],
  ];
  it.each(bad)('BAD_RESPONSE: %s', (_name, input, message) => {
    let err: unknown;
    try {
      normaliseWorkflow(input);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(BreError);
    expect((err as BreError).code).toBe('BAD_RESPONSE');
    expect((err as BreError).message).toMatch(message);
  });

  it('BAD_RESPONSE never quotes values (personal data)', () => {
    try {
      normaliseWorkflow({ pan_number: 'ABCDE1234F', output_data: 'FAKE TESTPERSON' });
      expect.unreachable();
    } catch (e) {
      expect((e as Error).message).not.toMatch(/ABCDE1234F|TESTPERSON/);
    }
  });
});

describe('parseWorkflowVersionPath', () => {
  const cases: Array<[Json | undefined, string | null, string | null]> = [
    ['workflow_location_v1', 'location', 'v1'],
    ['workflow_bureau_mobile_bank_v1', 'bureau_mobile_bank', 'v1'],
    ['workflow_repeat_v12', 'repeat', 'v12'],
    ['workflow_bank_v2.1', 'bank', 'v2.1'],
    ['workflow_bank_3', 'bank', '3'],
    ['workflow_location', 'location', null],
    ['bureau_mobile_v1', 'bureau_mobile', 'v1'],
    ['strategies/workflow_bank_v1.json', 'bank', 'v1'],
    ['', null, null],
    [null, null, null],
    [undefined, null, null],
    [42, null, null],
  ];
  it.each(cases)('%j -> %j %j', (path, workflow, version) => {
    expect(parseWorkflowVersionPath(path)).toEqual({ workflow, version });
  });
});

describe('bestOffer', () => {
  it('ties on amount and rate go to the lower EMI, then the first listed; amountless offers come last', () => {
    const a = { product_code: 'A', loan_amount: 100, interest_rate: 10, emi_amount: 50 };
    const b = { product_code: 'B', loan_amount: 100, interest_rate: 10, emi_amount: 40 };
    const c = { product_code: 'C', loan_amount: 100, interest_rate: 10, emi_amount: 40 };
    const d = { product_code: 'D', interest_rate: 1 };
    expect(bestOffer([d, a, b, c])?.product_code).toBe('B');
    expect(bestOffer([d])?.product_code).toBe('D');
    expect(bestOffer([])).toBeUndefined();
    expect(bestOffer(['x', 3])).toBeUndefined();
  });
});
