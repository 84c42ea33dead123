/** Never crash, never hang: random bodies on every path, raw garbage on the socket; the server keeps serving. */
import fc from 'fast-check';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../src/index.js';
import { WORKFLOW_ENDPOINTS } from '../src/logic/workflows/index.js';
import { PERSONAL, bankData, post, reportB64 } from './helpers.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox({ rate: { workflow: null, bureau: null, account: null }, bsaReadyAfterMs: 0 });
});
afterAll(async () => {
  await sb.close();
});

const PATHS = () => [
  ...WORKFLOW_ENDPOINTS.map((e) => `/execute/${sb.clientId}/${e}`),
  '/api/bureau',
  '/aa/fetch_data',
  '/aa/retrieve_report',
  '/bsa/status_check',
  '/bsa/fetch_uploaded',
  '/bsa/fetch_data',
];

// Plausible field names (so random bodies reach deep validation), with values of every JSON type.
const KEYS = [
  'user_id',
  'reference_id',
  'input_data',
  'lead_id',
  'latitude',
  'longitude',
  'app_user_id',
  'declared_income',
  'external',
  'bureau_type',
  'bureau_raw_json',
  'bank_type',
  'bank_data',
  'metadata',
  'transaction_data',
  'type',
  'amount',
  'transactionTimestamp',
  'currentBalance',
  'request_id',
  'report_id',
  'auth_token',
  'aa_session_id',
  'datetimerangefrom',
  'datetimerangeto',
  'consent_handle',
  'generate_insights',
  'fetched_timestamp',
  'raw_data',
  'format_type',
  'flag_current_default',
  'max_dpd_last_loan',
  ...Object.keys(PERSONAL),
];
const leaf = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(
    'bank_aa',
    'bank_bsa',
    'bureau_a_json',
    'bureau_b_xml',
    'unknown-1',
    'multi-1',
    '01/01/2025 10:00:00 AM',
    'CREDIT',
    'DEBIT',
    '2025-01-01 10:00:00',
    reportB64('bureau_a_json.json'),
  ),
);
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small' },
    leaf,
    fc.array(tie('node'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom(...KEYS), tie('node'), { maxKeys: 6 }),
  ),
})).node;

describe('robustness', () => {
  it('answers random bodies on every path with a JSON 200/4xx/500, never an internal error', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat(), fc.dictionary(fc.constantFrom(...KEYS), value, { maxKeys: 8 }), async (i, body) => {
        const paths = PATHS();
        const r = await post(sb, paths[i % paths.length], body);
        expect([200, 400, 404, 409, 422, 500]).toContain(r.status);
        expect(r.json).toBeDefined();
        if (r.status === 500) expect(typeof r.json.detail).toBe('string');
      }),
      { numRuns: 400 },
    );
    for (const s of Object.values(sb.stats().services)) expect(s.internalErrors).toBe(0);
  });

  it('survives structured near-valid inputs for every workflow', async () => {
    const inputs = [
      {
        lead_id: 'l',
        app_user_id: 'a',
        declared_income: 'NaN',
        external: {
          bureau_type: 'bureau_b_xml',
          bureau_raw_json: reportB64('bureau_a_json.json'),
          bank_type: 'bank_aa',
          bank_data: { metadata: [], transaction_data: [null, 1, {}] },
        },
      },
      { lead_id: 'l', declared_income: 5, external: { bank_type: 'bank_aa', bank_data: [] } },
      {
        lead_id: 'l',
        declared_income: 5,
        external: {
          bank_type: 'bank_aa',
          bank_data: {
            ...bankData(),
            transaction_data: [{ type: 'CREDIT', amount: 1, transactionTimestamp: '2025-13-45 99:99:99' }],
          },
        },
      },
      {
        lead_id: 'l',
        declared_income: 5,
        external: {
          bank_type: 'bank_aa',
          bank_data: {
            ...bankData(),
            transaction_data: [
              { type: 'CREDIT', amount: 1, transactionTimestamp: '2025-01-01 10:00:00', currentBalance: 'lots' },
            ],
          },
        },
      },
      { ...PERSONAL, lead_id: 'l', app_user_id: 'a', declared_income: -5 },
    ];
    for (const e of WORKFLOW_ENDPOINTS) {
      for (const input of inputs) {
        const r = await post(sb, `/execute/${sb.clientId}/${e}`, {
          user_id: 'u',
          reference_id: 'r',
          input_data: input,
        });
        expect([200, 422, 500]).toContain(r.status);
      }
    }
    for (const s of Object.values(sb.stats().services)) expect(s.internalErrors).toBe(0);
  });

  it('answers raw garbage on the socket with 400 and keeps serving', async () => {
    const reply = await new Promise<string>((resolve) => {
      const s = connect(Number(new URL(sb.url).port), '127.0.0.1');
      let data = '';
      s.on('data', (d) => {
        data += d;
      });
      s.on('close', () => resolve(data));
      s.on('error', () => resolve(data));
      s.write('THIS IS NOT HTTP\r\n\r\n');
    });
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    const ok = await post(sb, `/execute/${sb.clientId}/location_bre`, {
      user_id: 'u',
      reference_id: 'r',
      input_data: { lead_id: 'l', latitude: 20, longitude: 78 },
    });
    expect(ok.status).toBe(200);
  });
});
