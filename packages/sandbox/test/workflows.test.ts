/** The named workflows (decision spec 2.3-2.5, 4.2-4.6): shapes at the right nesting, rules, challengers. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../src/index.js';
import { istInstant } from '../src/logic/time.js';
import { PERSONAL, bankData, post, reportB64 } from './helpers.js';

let sb: Sandbox;
const T0 = istInstant(2026, 0, 15, 12, 0, 0);
beforeAll(async () => {
  sb = await startSandbox({ rate: { workflow: null, account: null }, now: () => T0, bsaReadyAfterMs: 0 });
});
afterAll(async () => {
  await sb.close();
});

const run = (endpoint: string, input: unknown, extra: Record<string, unknown> = {}) =>
  post(sb, `/execute/${sb.clientId}/${endpoint}`, {
    user_id: 'user-1',
    reference_id: 'ref-1',
    input_data: input,
    ...extra,
  });

function expectEnvelope(body: any, path: string): void {
  expect(Object.keys(body)).toEqual([
    'request_id',
    'user_id',
    'reference_id',
    'workflow_version_path',
    'engine_history',
    'output_data',
  ]);
  expect(body.request_id).toMatch(/^[a-z0-9]+$/);
  expect(body.user_id).toBe('user-1');
  expect(body.reference_id).toBe('ref-1');
  expect(body.workflow_version_path).toBe(path);
  expect(body.engine_history).toEqual([]);
  expect(Object.keys(body.output_data).slice(0, 3)).toEqual(['ecm', 'rules_output', 'features']);
  expect(body.output_data.ecm).toEqual({});
  const fd = body.output_data.rules_output.final_decision;
  expect(['Approve', 'Reject']).toContain(fd.Decision);
  expect(typeof fd.DecisionReason).toBe('string');
  expect(typeof fd.RulesEvaluation).toBe('object');
  for (const v of Object.values(fd.RulesEvaluation)) expect(typeof v).toBe('boolean');
}

const bureauMobileInput = (i: number, income = 40000) => ({
  lead_id: `l${i}`,
  app_user_id: `app-${i}`,
  declared_income: income,
  ...PERSONAL,
  pan_number: `ABCDE${String(1000 + i).slice(-4)}F`,
});

describe('location_bre', () => {
  it('geocodes to a real pincode with city and state', async () => {
    const r = await run('location_bre', { lead_id: 'l1', latitude: 19.076, longitude: 72.8777 });
    expect(r.status).toBe(200);
    expectEnvelope(r.json, 'workflow_location_v1');
    const fd = r.json.output_data.rules_output.final_decision;
    expect(Object.keys(fd)).toEqual(['Decision', 'DecisionReason', 'RulesEvaluation', 'version', 'rule_engine_name']);
    expect(fd).toMatchObject({ version: 'v1', rule_engine_name: 'geocoding' });
    const geo = r.json.output_data.features.output_features.geocoding;
    expect(geo.state).toBe('Maharashtra');
    expect(geo.pincode).toMatch(/^400\d{3}$/);
    expect(geo.city).toMatch(/Mumbai/);
    expect(r.json.output_data.features.prev_output_features).toEqual({});
  });
  it('rejects a point outside India', async () => {
    const r = await run('location_bre', { lead_id: 'l1', latitude: 48.8566, longitude: 2.3522 });
    expect(r.status).toBe(200);
    const fd = r.json.output_data.rules_output.final_decision;
    expect(fd.Decision).toBe('Reject');
    expect(fd.RulesEvaluation['location within india']).toBe(false);
    expect(r.json.output_data.features.output_features.geocoding).toEqual({ state: '', pincode: '', city: '' });
  });
  it('500 for coordinates out of range', async () => {
    const r = await run('location_bre', { lead_id: 'l1', latitude: 999, longitude: 77 });
    expect(r.status).toBe(500);
    expect(r.json).toEqual({ detail: 'latitude 999 is out of range: expected -90 to 90' });
  });
  it('422 with full loc paths for nested input_data fields', async () => {
    const sent = { lead_id: 'l1', latitude: 'north' };
    const r = await run('location_bre', sent);
    expect(r.status).toBe(422);
    expect(r.json.detail).toEqual([
      {
        type: 'float_parsing',
        loc: ['body', 'input_data', 'latitude'],
        msg: 'Input should be a valid number, unable to parse string as a number',
        input: 'north',
      },
      { type: 'missing', loc: ['body', 'input_data', 'longitude'], msg: 'Field required', input: sent },
    ]);
  });
  it('422 for envelope fields, together with the workflow fields', async () => {
    const r = await post(sb, `/execute/${sb.clientId}/location_bre`, {
      reference_id: 'r',
      input_data: { lead_id: 'l' },
    });
    expect(r.status).toBe(422);
    expect(r.json.detail.map((d: { loc: string[] }) => d.loc.join('.'))).toEqual([
      'body.user_id',
      'body.input_data.latitude',
      'body.input_data.longitude',
    ]);
    const notObject = await post(sb, `/execute/${sb.clientId}/location_bre`, {
      user_id: 'u',
      reference_id: 'r',
      input_data: [1],
    });
    expect(notObject.json.detail).toEqual([
      { type: 'dict_type', loc: ['body', 'input_data'], msg: 'Input should be a valid dictionary', input: [1] },
    ]);
  });
  it('accepts numeric strings like pydantic (lax mode)', async () => {
    expect((await run('location_bre', { lead_id: 'l1', latitude: '12.9716', longitude: '77.5946' })).status).toBe(200);
  });
  it('is deterministic, and the challenger swaps some decisions', async () => {
    let swaps = 0;
    let n = 0;
    for (let lat = 10; lat < 30; lat += 1.3) {
      for (let lng = 73; lng < 88; lng += 1.7) {
        const input = { lead_id: 'l', latitude: lat, longitude: lng };
        const [a, a2, b] = await Promise.all([
          run('location_bre', input),
          run('location_bre', input),
          run('location_bre_challenger', input),
        ]);
        expect(a.json.output_data).toEqual(a2.json.output_data);
        expect(b.json.workflow_version_path).toBe('workflow_location_v2');
        expect(b.json.output_data.rules_output.final_decision.version).toBe('v2');
        if (a.json.output_data.features.output_features.geocoding.pincode === '') continue;
        n++;
        if (
          a.json.output_data.rules_output.final_decision.Decision !==
          b.json.output_data.rules_output.final_decision.Decision
        )
          swaps++;
      }
    }
    expect(n).toBeGreaterThan(50);
    expect(swaps / n).toBeGreaterThan(0.02);
    expect(swaps / n).toBeLessThan(0.3);
  });
});

describe('bureau_mobile_bre', () => {
  it('fetched-by-the-workflow shape (personal fields): payday keys, engines, features', async () => {
    const r = await run('bureau_mobile_bre', bureauMobileInput(1));
    expect(r.status).toBe(200);
    expectEnvelope(r.json, 'workflow_bureau_v1');
    const ro = r.json.output_data.rules_output;
    expect(Object.keys(ro)).toEqual(['final_decision', 'basic', 'mobile_intel']);
    expect(Object.keys(ro.final_decision)).toEqual([
      'Decision',
      'LoanAmount',
      'RulesEvaluation',
      'DecisionReason',
      'version',
      'rule_engine_name',
    ]);
    const of = r.json.output_data.features.output_features;
    expect(Object.keys(of)).toEqual(['bureau_intel', 'mobile_intel']);
    for (const k of [
      'bureau_score',
      'cbs_risk_grade',
      'cbs_stpl_v1',
      'cbs_monthly_affordability_v1',
      'bureau_affordability',
    ])
      expect(typeof of.bureau_intel[k]).toBe('number');
    expect(typeof of.mobile_intel.fraud_flag).toBe('boolean');
    for (const k of ['all_sms_count', 'vendor_payday_score', 'mobile_intel_affordability', 'estimated_salary'])
      expect(typeof of.mobile_intel[k]).toBe('number');
    expect(r.json.output_data.features.prev_output_features).toEqual({});
  });
  it('approves with an amount and rejects with null, naming the engine that decided', async () => {
    const seen = { Approve: 0, Reject: 0 };
    const engines = new Set<string>();
    let swaps = 0;
    for (let i = 0; i < 80; i++) {
      const [a, b] = await Promise.all([
        run('bureau_mobile_bre', bureauMobileInput(i, 9000 + i * 600)),
        run('bureau_mobile_bre_challenger', bureauMobileInput(i, 9000 + i * 600)),
      ]);
      const fd = a.json.output_data.rules_output.final_decision;
      seen[fd.Decision as 'Approve' | 'Reject']++;
      engines.add(fd.rule_engine_name);
      if (fd.Decision === 'Approve') {
        expect(fd.LoanAmount).toBeGreaterThanOrEqual(1000);
        expect(fd.LoanAmount % 500).toBe(0);
        expect(fd.DecisionReason).toBe('mobile_intel bre checked');
        expect(fd.rule_engine_name).toBe('mobile_intel');
      } else {
        expect(fd.LoanAmount).toBeNull();
        expect(fd.DecisionReason).toMatch(/^(basic|bureau_intel|mobile_intel) bre rejected: /);
        const failed = Object.entries(fd.RulesEvaluation)
          .filter(([, v]) => !v)
          .map(([k]) => k);
        expect(failed.length).toBeGreaterThan(0);
      }
      if (fd.Decision !== b.json.output_data.rules_output.final_decision.Decision) swaps++;
    }
    expect(seen.Approve).toBeGreaterThan(10);
    expect(seen.Reject).toBeGreaterThan(10);
    expect(engines.size).toBeGreaterThan(1);
    expect(swaps).toBeGreaterThan(2);
    expect(swaps).toBeLessThan(40);
  });
  it('caller-supplied bureau (external): 422 for missing external fields, 500 for an unknown bureau_type', async () => {
    const missing = await run('bureau_mobile_bre', {
      lead_id: 'l',
      app_user_id: 'a',
      declared_income: 1,
      external: { bureau_type: 'bureau_a_json' },
    });
    expect(missing.status).toBe(422);
    expect(missing.json.detail).toEqual([
      {
        type: 'missing',
        loc: ['body', 'input_data', 'external', 'bureau_raw_json'],
        msg: 'Field required',
        input: { bureau_type: 'bureau_a_json' },
      },
    ]);
    const unknown = await run('bureau_mobile_bre', {
      lead_id: 'l',
      app_user_id: 'a',
      declared_income: 1,
      external: { bureau_type: 'bureau_z', bureau_raw_json: reportB64('bureau_a_json.json') },
    });
    expect(unknown.status).toBe(500);
    expect(unknown.json.detail).toMatch(/^unsupported bureau_type 'bureau_z'/);
    const garbage = await run('bureau_mobile_bre', {
      lead_id: 'l',
      app_user_id: 'a',
      declared_income: 1,
      external: { bureau_type: 'bureau_a_json', bureau_raw_json: '%%%' },
    });
    expect(garbage.status).toBe(500);
    expect(garbage.json.detail).toMatch(/^error in decoding bureau_raw_json: /);
  });
  it('requires the personal fields when the bureau is fetched by the workflow; checks the PAN', async () => {
    const r = await run('bureau_mobile_bre', {
      lead_id: 'l',
      app_user_id: 'a',
      declared_income: 1,
      pan_number: 'ABCDE1234F',
    });
    expect(r.status).toBe(422);
    expect(r.json.detail).toHaveLength(13);
    expect(r.json.detail[0].loc).toEqual(['body', 'input_data', 'name_aadhar']);
    const pan = await run('bureau_mobile_bre', { ...bureauMobileInput(1), pan_number: '12345' });
    expect(pan.status).toBe(500);
    expect(pan.json.detail).toBe('pan_number is not a valid PAN: expected 5 letters, 4 digits and 1 letter');
    const long = await run('bureau_mobile_bre', { ...bureauMobileInput(1), app_user_id: 'a'.repeat(65) });
    expect(long.json.detail[0]).toMatchObject({ type: 'string_too_long', loc: ['body', 'input_data', 'app_user_id'] });
  });
});

describe('bank_bre', () => {
  function expectBankShape(body: any): void {
    expectEnvelope(body, 'workflow_bank_v1');
    expect(Object.keys(body.output_data)).toEqual(['ecm', 'rules_output', 'features', 'prev_output_features']);
    expect(body.output_data.prev_output_features).toEqual({});
    expect(body.output_data.features.prev_output_features).toBeUndefined();
    expect(Object.keys(body.output_data.rules_output)).toEqual(['final_decision', 'pre_bureau']);
    const fd = body.output_data.rules_output.final_decision;
    expect(Object.keys(fd)).toEqual([
      'Decision',
      'LoanAmount',
      'DecisionReason',
      'RulesEvaluation',
      'version',
      'rule_engine_name',
    ]);
    expect(fd.rule_engine_name).toBe('bank');
    if (fd.Decision === 'Reject') expect(fd.LoanAmount).toBeNull();
    else expect(fd.LoanAmount).toBeGreaterThan(0);
  }

  it('supplied by the caller: one account', async () => {
    const r = await run('bank_bre', {
      lead_id: 'l',
      declared_income: 40000,
      external: { bank_type: 'bank_aa', bank_data: bankData() },
    });
    expect(r.status).toBe(200);
    expectBankShape(r.json);
    const ai = r.json.output_data.features.output_features.account_intel;
    expect(ai).toMatchObject({
      salary_months: 3,
      monthly_salary: 40000,
      monthly_emi: 5000,
      bounce_count: 0,
      foir: 0.13,
    });
    expect(r.json.output_data.rules_output.final_decision.Decision).toBe('Approve');
  });
  it('supplied by the caller: several accounts (array)', async () => {
    const r = await run('bank_bre', {
      lead_id: 'l',
      declared_income: 40000,
      external: { bank_type: 'bank_bsa', bank_data: [bankData(3, 20000, 0), bankData(3, 10000, 0)] },
    });
    expect(r.status).toBe(200);
    expectBankShape(r.json);
    expect(r.json.output_data.features.output_features.account_intel.transaction_count).toBe(18);
  });
  it('AA fetched inside the workflow: the same transactions as /aa/fetch_data of (user_id, request_id)', async () => {
    const r = await run('bank_bre', { request_id: 'sess-77', bank_type: 'bank_aa' });
    expect(r.status).toBe(200);
    expectBankShape(r.json);
    const ai = r.json.output_data.features.output_features.account_intel;
    // 6 months back from the sandbox clock, as an AA fetch of that range would return.
    const from = '07/15/2025 12:00:00 PM';
    const to = '01/15/2026 12:00:00 PM';
    const aa = await post(sb, '/aa/fetch_data', {
      user_id: 'user-1',
      aa_session_id: 'sess-77',
      datetimerangefrom: from,
      datetimerangeto: to,
    });
    const txns = aa.json.service_response.fetched_data.body[0].fiObjects[0].Transactions.Transaction;
    expect(ai.transaction_count).toBe(txns.length);
    const credits = txns
      .filter((t: { type: string }) => t.type === 'CREDIT')
      .reduce((s: number, t: { amount: number }) => s + t.amount, 0);
    expect(ai.total_credit).toBeCloseTo(credits, 2);
  });
  it('BSA fetched inside the workflow (report_id + auth_token); auth_token is never echoed', async () => {
    const r = await run('bank_bre', { report_id: 'rep-twoacc-1', auth_token: 'secret-token-1', bank_type: 'bank_bsa' });
    expect(r.status).toBe(200);
    expectBankShape(r.json);
    expect(r.text).not.toContain('secret-token-1');
    const miss = await run('bank_bre', { auth_token: 'secret-token-1', bank_type: 'bank_bsa' });
    expect(miss.status).toBe(422);
    expect(miss.json.detail[0].loc).toEqual(['body', 'input_data', 'report_id']);
    expect(miss.text).not.toContain('secret-token-1');
  });
  it('500 for a bank_type that is not bank_aa/bank_bsa, unknown sessions and bad transaction values', async () => {
    const t = await run('bank_bre', { request_id: 'x', bank_type: 'bank_xx' });
    expect(t.status).toBe(500);
    expect(t.json.detail).toBe("unsupported bank_type 'bank_xx': expected bank_aa or bank_bsa");
    const ext = await run('bank_bre', {
      lead_id: 'l',
      declared_income: 1,
      external: { bank_type: 'bank_zz', bank_data: bankData() },
    });
    expect(ext.status).toBe(500);
    const unknown = await run('bank_bre', { request_id: 'unknown-1', bank_type: 'bank_aa' });
    expect(unknown.status).toBe(500);
    const data = bankData();
    (data.transaction_data as Record<string, unknown>[])[1].type = 'SIDEWAYS';
    const bad = await run('bank_bre', {
      lead_id: 'l',
      declared_income: 1,
      external: { bank_type: 'bank_aa', bank_data: data },
    });
    expect(bad.status).toBe(500);
    expect(bad.json.detail).toBe("external.bank_data.transaction_data[1].type 'SIDEWAYS' is not DEBIT or CREDIT");
  });
  it('422 with full loc paths inside bank_data', async () => {
    const data = bankData(1);
    delete (data.transaction_data as Record<string, unknown>[])[2].amount;
    const r = await run('bank_bre', {
      lead_id: 'l',
      declared_income: 1,
      external: { bank_type: 'bank_aa', bank_data: [data, { metadata: {} }] },
    });
    expect(r.status).toBe(422);
    expect(r.json.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([
      ['body', 'input_data', 'external', 'bank_data', 0, 'transaction_data', 2, 'amount'],
      ['body', 'input_data', 'external', 'bank_data', 1, 'transaction_data'],
    ]);
    const noType = await run('bank_bre', { request_id: 'x' });
    expect(noType.json.detail[0].loc).toEqual(['body', 'input_data', 'bank_type']);
  });
  it('challenger changes some decisions over generated accounts', async () => {
    let swaps = 0;
    for (let i = 0; i < 40; i++) {
      const input = { request_id: `req-${i}`, bank_type: 'bank_aa' };
      const [a, b] = await Promise.all([
        run('bank_bre', input, { user_id: `u${i}` }),
        run('bank_bre_challenger', input, { user_id: `u${i}` }),
      ]);
      if (
        a.json.output_data.rules_output.final_decision.Decision !==
        b.json.output_data.rules_output.final_decision.Decision
      )
        swaps++;
    }
    expect(swaps).toBeGreaterThan(0);
    expect(swaps).toBeLessThan(20);
  });
});

describe('bureau_mobile_bank_bre', () => {
  const input = (i: number, bureau = 'bureau_d_softpull_json.json', format = 'bureau_d_softpull_json') => ({
    lead_id: `l${i}`,
    app_user_id: `app-${i}`,
    declared_income: 60000,
    external: {
      bureau_type: format,
      bureau_raw_json: reportB64(bureau),
      bank_type: 'bank_aa',
      bank_data: bankData(3, 60000, 5000),
    },
  });
  it('serves both products and all three engines', async () => {
    let approved: any;
    for (let i = 0; i < 30 && !approved; i++) {
      const r = await run('bureau_mobile_bank_bre', input(i));
      expect(r.status).toBe(200);
      expectEnvelope(r.json, 'workflow_bureau_mobile_bank_v1');
      const fd = r.json.output_data.rules_output.final_decision;
      expect(Object.keys(fd)).toEqual([
        'Decision',
        'LoanAmount',
        'EmiDecision',
        'LoanOffers',
        'RulesEvaluation',
        'DecisionReason',
        'version',
        'rule_engine_name',
      ]);
      expect(Object.keys(r.json.output_data.rules_output)).toEqual(['final_decision', 'basic']);
      expect(Object.keys(r.json.output_data.features.output_features)).toEqual([
        'bureau_intel',
        'mobile_intel',
        'account_intel',
      ]);
      if (fd.Decision === 'Approve') approved = fd;
    }
    expect(approved).toBeDefined();
    expect(approved.rule_engine_name).toBe('bureau_intel');
    expect(approved.EmiDecision).toBe('Approve');
    expect(approved.LoanOffers.length).toBeGreaterThan(0);
    for (const o of approved.LoanOffers) {
      expect(Object.keys(o)).toEqual([
        'product_code',
        'tenure_months',
        'pf_percent',
        'interest_rate',
        'emi_amount',
        'loan_amount',
      ]);
      expect(typeof o.product_code).toBe('string');
      for (const k of ['tenure_months', 'pf_percent', 'interest_rate', 'emi_amount', 'loan_amount'])
        expect(typeof o[k]).toBe('number');
      // The EMI pays the loan off at the stated rate.
      const r = o.interest_rate / 1200;
      expect(o.emi_amount).toBeCloseTo((o.loan_amount * r) / (1 - (1 + r) ** -o.tenure_months), -1);
    }
  });
  it('no EMI for a risky bureau profile', async () => {
    const r = await run('bureau_mobile_bank_bre', input(1, 'bureau_b_json.json', 'bureau_b_json'));
    const fd = r.json.output_data.rules_output.final_decision;
    expect(fd.EmiDecision).toBe('Reject');
    expect(fd.LoanOffers).toEqual([]);
  });
  it('requires every external field; bank_data must be one object here', async () => {
    const r = await run('bureau_mobile_bank_bre', {
      lead_id: 'l',
      app_user_id: 'a',
      declared_income: 1,
      external: { bank_type: 'bank_aa', bank_data: [bankData()] },
    });
    expect(r.status).toBe(422);
    expect(r.json.detail.map((d: { loc: unknown[]; type: string }) => `${d.loc.join('.')}:${d.type}`)).toEqual([
      'body.input_data.external.bureau_type:missing',
      'body.input_data.external.bureau_raw_json:missing',
      'body.input_data.external.bank_data:dict_type',
    ]);
  });
});

describe('repeat_bre', () => {
  const good = {
    ...PERSONAL,
    max_dpd_last_loan: 0,
    max_dpd_ever_internal: 2,
    previous_loan_amount: 10000,
    decided_tenure_last_loan: 30,
    actual_tenure_last_loan: 30,
    days_since_last_loan_closed: 12,
    number_of_loans_closed: 3,
    days_since_last_loan_taken: 45,
    days_since_first_loan_taken: 400,
    flag_current_default: false,
    number_of_loans_closed_with_dpd_0_full_cycle: 3,
  };
  const {
    profession: _a,
    salary_source: _b,
    loan_purpose: _c,
    income_type: _d,
    gender: _e,
    pan_name: _f,
    ...repeatInput
  } = good;
  it('approves with an amount and a ReplaymentDate from the sandbox clock plus the decided tenure', async () => {
    const r = await run('repeat_bre', repeatInput);
    expect(r.status).toBe(200);
    expectEnvelope(r.json, 'workflow_repeat_v1');
    const fd = r.json.output_data.rules_output.final_decision;
    expect(Object.keys(fd)).toEqual([
      'Decision',
      'LoanAmount',
      'ReplaymentDate',
      'DecisionReason',
      'RulesEvaluation',
      'version',
      'rule_engine_name',
    ]);
    expect(fd).toMatchObject({
      Decision: 'Approve',
      LoanAmount: 12500,
      ReplaymentDate: '2026-02-14',
      DecisionReason: 'repeat bre passed with approval',
      rule_engine_name: 'basic',
      version: 'v1',
    });
  });
  it('rejects on DPD and default flags; challenger is stricter', async () => {
    const r = await run('repeat_bre', { ...repeatInput, flag_current_default: true });
    expect(r.json.output_data.rules_output.final_decision).toMatchObject({
      Decision: 'Reject',
      LoanAmount: null,
      ReplaymentDate: null,
    });
    expect(r.json.output_data.rules_output.final_decision.RulesEvaluation['no current default']).toBe(false);
    const mid = { ...repeatInput, max_dpd_last_loan: 5 };
    expect((await run('repeat_bre', mid)).json.output_data.rules_output.final_decision.Decision).toBe('Approve');
    const ch = await run('repeat_bre_challenger', mid);
    expect(ch.json.workflow_version_path).toBe('workflow_repeat_v2');
    expect(ch.json.output_data.rules_output.final_decision.Decision).toBe('Reject');
  });
  it('every field is required, with types checked', async () => {
    const { flag_current_default: _x, ...rest } = repeatInput;
    const r = await run('repeat_bre', { ...rest, max_dpd_last_loan: 'zero', flag_current_default: 'maybe' });
    expect(r.status).toBe(422);
    expect(r.json.detail.map((d: { type: string }) => d.type)).toEqual(['float_parsing', 'bool_parsing']);
    expect((await run('repeat_bre', { ...repeatInput, flag_current_default: 'false' })).status).toBe(200);
    expect((await run('repeat_bre', { ...repeatInput, max_dpd_last_loan: -1 })).status).toBe(500);
  });
});
