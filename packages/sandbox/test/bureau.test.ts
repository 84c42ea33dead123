/** /api/bureau (decision spec 2.8, 4.7) over HTTP, one fake report per format; workflow bureau_intel agrees. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../src/index.js';
import { b64, post, reportB64 } from './helpers.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox({ rate: { bureau: null, workflow: null } });
});
afterAll(async () => {
  await sb.close();
});

const body = (raw: string, format: string) => ({
  user_id: 'u1',
  reference_id: 'ref-1',
  fetched_timestamp: '2026-01-01 10:15:00',
  raw_data: raw,
  format_type: format,
});

// Hand-computed from each fixture's summary numbers (see packages/sandbox/src/logic/bureau.ts for the formulas).
const CASES: [string, string, Record<string, unknown>][] = [
  [
    'bureau_a_json.json',
    'bureau_a_json',
    {
      score: 745,
      cbs_risk_grade_v1: 3,
      is_risky_customer: false,
      income_calculated: 20000,
      cbs_monthly_affordability_v1: 5800,
      cbs_stpl_v1: 11500,
      total_accounts: 5,
      active_accounts: 4,
      overdue_accounts: 1,
      recent_enquiries: 3,
    },
  ],
  [
    'bureau_a_json_nohit.json',
    'bureau_a_json',
    {
      score: -1,
      bureau_hit: false,
      cbs_risk_grade_v1: 4,
      is_risky_customer: false,
      income_calculated: 0,
      cbs_monthly_affordability_v1: 0,
      cbs_stpl_v1: 0,
    },
  ],
  [
    'bureau_b_json.json',
    'bureau_b_json',
    {
      score: 712,
      cbs_risk_grade_v1: 4,
      is_risky_customer: true,
      write_off_accounts: 1,
      total_accounts: 5,
      active_accounts: 4,
      overdue_amount: 1500,
      total_current_balance: 100000,
      income_calculated: 20000,
      cbs_monthly_affordability_v1: 4500,
      cbs_stpl_v1: 0,
      recent_enquiries: 2,
    },
  ],
  [
    'bureau_b_hardpull.json',
    'bureau_b_hardpull',
    {
      score: 712,
      cbs_risk_grade_v1: 4,
      is_risky_customer: true,
      total_accounts: 5,
      cbs_monthly_affordability_v1: 4500,
    },
  ],
  [
    'bureau_b_xml.xml',
    'bureau_b_xml',
    {
      score: 712,
      cbs_risk_grade_v1: 4,
      is_risky_customer: true,
      total_accounts: 5,
      recent_enquiries: 2,
      cbs_monthly_affordability_v1: 4500,
    },
  ],
  // Lists wrapped in -ITEM elements; one inquiry; a score with leading zero. grade 2 (score 755), obligation 1400, income 10000.
  [
    'bureau_b_xml_items.xml',
    'bureau_b_xml',
    {
      score: 755,
      recent_enquiries: 1,
      total_accounts: 2,
      active_accounts: 1,
      write_off_accounts: 0,
      cbs_risk_grade_v1: 2,
      monthly_obligation: 1400,
      income_calculated: 10000,
      cbs_monthly_affordability_v1: 4100,
      cbs_stpl_v1: 10000,
    },
  ],
  [
    'bureau_b_json_v2.json',
    'bureau_b_json_v2',
    {
      score: 790,
      cbs_risk_grade_v1: 1,
      is_risky_customer: false,
      total_accounts: 3,
      total_current_balance: 50000,
      total_sanctioned_amount: 150000,
      income_calculated: 10000,
      cbs_monthly_affordability_v1: 4250,
      cbs_stpl_v1: 12500,
    },
  ],
  [
    'bureau_c_softpull_json.json',
    'bureau_c_softpull_json',
    {
      score: 688,
      cbs_risk_grade_v1: 4,
      is_risky_customer: false,
      overdue_accounts: 1,
      overdue_amount: 3000,
      total_current_balance: 150000,
      total_sanctioned_amount: 400000,
      income_calculated: 26700,
      cbs_monthly_affordability_v1: 5430,
      cbs_stpl_v1: 5000,
    },
  ],
  [
    'bureau_d_softpull_json.json',
    'bureau_d_softpull_json',
    {
      score: 765,
      cbs_risk_grade_v1: 2,
      monthly_obligation: 6000,
      income_calculated: 17100,
      cbs_monthly_affordability_v1: 3405,
      cbs_stpl_v1: 8500,
      recent_enquiries: 2,
    },
  ],
];

describe('bureau features per format', () => {
  it.each(CASES)('%s as %s', async (file, format, expected) => {
    const r = await post(sb, '/api/bureau', body(reportB64(file), format));
    expect(r.status).toBe(200);
    expect(r.json.reference_id).toBe('ref-1');
    expect(r.json).toMatchObject(expected);
    // The documented features, with their documented types (spec 2.8).
    for (const k of ['cbs_stpl_v1', 'cbs_monthly_affordability_v1', 'cbs_risk_grade_v1', 'score', 'income_calculated'])
      expect(typeof r.json[k]).toBe('number');
    expect(typeof r.json.is_risky_customer).toBe('boolean');
    expect(r.json.user_id).toBeUndefined();
  });

  it('gives bureau_intel in a workflow the same values as /api/bureau for the same report', async () => {
    for (const [file, format] of CASES) {
      const features = (await post(sb, '/api/bureau', body(reportB64(file), format))).json;
      const wf = await post(sb, `/execute/${sb.clientId}/bureau_mobile_bre`, {
        user_id: 'u1',
        reference_id: 'r1',
        input_data: {
          lead_id: 'l1',
          app_user_id: 'app1',
          declared_income: 40000,
          external: { bureau_type: format, bureau_raw_json: reportB64(file) },
        },
      });
      expect(wf.status).toBe(200);
      const bi = wf.json.output_data.features.output_features.bureau_intel;
      expect(bi).toMatchObject({
        bureau_score: features.score,
        cbs_risk_grade: features.cbs_risk_grade_v1,
        cbs_stpl_v1: features.cbs_stpl_v1,
        cbs_monthly_affordability_v1: features.cbs_monthly_affordability_v1,
      });
      expect(typeof bi.bureau_affordability).toBe('number');
    }
  });

  it('reads bureau_c_softpull_json_v2 in workflows (same shape as bureau_c_softpull_json)', async () => {
    const wf = await post(sb, `/execute/${sb.clientId}/bureau_mobile_bre`, {
      user_id: 'u1',
      reference_id: 'r1',
      input_data: {
        lead_id: 'l1',
        app_user_id: 'app1',
        declared_income: 40000,
        external: {
          bureau_type: 'bureau_c_softpull_json_v2',
          bureau_raw_json: reportB64('bureau_c_softpull_json_v2.json'),
        },
      },
    });
    expect(wf.status).toBe(200);
    expect(wf.json.output_data.features.output_features.bureau_intel).toMatchObject({
      bureau_score: 640,
      cbs_risk_grade: 5,
      is_risky_customer: true,
    });
    expect(wf.json.output_data.rules_output.final_decision).toMatchObject({
      Decision: 'Reject',
      rule_engine_name: 'bureau_intel',
    });
  });
});

describe('bureau feature errors', () => {
  it.each([
    ['not base64', '***not base64***', 'bureau_a_json', /^error in decoding raw_data: Invalid base64-encoded string/],
    ['bad padding', 'eyJh', 'bureau_a_json', /^error in decoding raw_data: /],
    ['not JSON', b64('this is not json'), 'bureau_a_json', /^error in decoding raw_data: invalid JSON: /],
    ['JSON array', b64('[1,2]'), 'bureau_a_json', /^error in decoding raw_data: the report is not a JSON object$/],
    [
      'wrong format',
      reportB64('bureau_d_softpull_json.json'),
      'bureau_a_json',
      /^error in decoding raw_data: the report is not a bureau_a_json report/,
    ],
    [
      'bad XML',
      b64('<CIR-REPORT-FILE><A></B></CIR-REPORT-FILE>'),
      'bureau_b_xml',
      /^error in decoding raw_data: not well-formed XML: /,
    ],
    [
      'not UTF-8',
      Buffer.from([0xff, 0xfe, 0xfd, 0x00]).toString('base64'),
      'bureau_a_json',
      /^error in decoding raw_data: 'utf-8' codec/,
    ],
  ])('%s -> 500 with the documented detail', async (_name, raw, format, detail) => {
    const r = await post(sb, '/api/bureau', body(raw, format));
    expect(r.status).toBe(500);
    expect(Object.keys(r.json)).toEqual(['detail']);
    expect(r.json.detail).toMatch(detail);
  });

  it('rejects an unsupported format_type with a 422 literal_error (bureau_c_softpull_json_v2 included)', async () => {
    for (const format of ['bureau_x_json', 'bureau_c_softpull_json_v2']) {
      const r = await post(sb, '/api/bureau', body(reportB64('bureau_a_json.json'), format));
      expect(r.status).toBe(422);
      expect(r.json.detail).toHaveLength(1);
      expect(r.json.detail[0]).toMatchObject({ type: 'literal_error', loc: ['body', 'format_type'], input: format });
      expect(r.json.detail[0].msg).toContain("'bureau_d_softpull_json'");
    }
  });

  it('422 lists every missing field with the received body as input', async () => {
    const sent = { user_id: 'u1', raw_data: 'e30=' };
    const r = await post(sb, '/api/bureau', sent);
    expect(r.status).toBe(422);
    expect(r.json.detail).toEqual(
      ['reference_id', 'fetched_timestamp', 'format_type'].map((f) => ({
        type: 'missing',
        loc: ['body', f],
        msg: 'Field required',
        input: sent,
      })),
    );
  });

  it('checks field types and the fetched_timestamp shape', async () => {
    const r = await post(sb, '/api/bureau', {
      ...body('e30=', 'bureau_a_json'),
      user_id: 12,
      fetched_timestamp: '2026-01-01T10:15:00Z',
      raw_data: 'x'.repeat(10),
      reference_id: 'x',
    });
    expect(r.status).toBe(422);
    expect(r.json.detail.map((d: { type: string }) => d.type)).toEqual(['string_type', 'string_pattern_mismatch']);
    expect(r.json.detail[0]).toEqual({
      type: 'string_type',
      loc: ['body', 'user_id'],
      msg: 'Input should be a valid string',
      input: 12,
    });
    const long = await post(sb, '/api/bureau', { ...body('e30=', 'bureau_a_json'), user_id: 'u'.repeat(65) });
    expect(long.json.detail[0]).toMatchObject({
      type: 'string_too_long',
      loc: ['body', 'user_id'],
      ctx: { max_length: 64 },
    });
  });
});
