import { readFileSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildWorkflowRequest, type WorkflowRequestOptions } from '../../src/services/workflow/request.js';
import { FileCache } from '../../src/services/bureau/file-cache.js';
import type { FieldError } from '../../src/input/validation.js';
import { folderRoot, type FilesRoot } from '../../src/input/files-root.js';

const SAMPLES = join(dirname(fileURLToPath(import.meta.url)), '../../samples');
const opts: WorkflowRequestOptions = { filesRoot: folderRoot(SAMPLES, false), cache: new FileCache() };
const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
const reportFile = (name: string): string => readFileSync(join(SAMPLES, 'reports', name), 'utf8');
const BUREAU_A_B64 = b64(reportFile('bureau_a.json'));
const BUREAU_B_XML_B64 = b64(reportFile('bureau_b.xml'));
const SALARIED = JSON.parse(readFileSync(join(SAMPLES, 'bank/salaried.json'), 'utf8'));
const TWO_ACCOUNTS = JSON.parse(readFileSync(join(SAMPLES, 'bank/two_accounts.json'), 'utf8'));

const TOP = { reference_id: 'R1', user_id: 'U1' };
const PERSONAL = {
  pan_number: 'ABCDE1234F',
  name_aadhar: 'FAKE TESTPERSON',
  address_aadhar: '1 FAKE STREET',
  state_aadhar: 'Maharashtra',
  city_aadhar: 'Mumbai',
  pincode_aadhar: '400001',
  phone: '9000000001',
  pan_name: 'FAKE TESTPERSON',
  dob: '1990-01-01',
  profession: 'salaried',
  salary_source: 'bank_transfer',
  loan_purpose: 'personal',
  income_type: 'salaried',
  gender: 'F',
};
const ACCOUNT = {
  metadata: { currency: 'INR', bank_name: 'FAKE BANK', account_number: 'XXXX1234' },
  transaction_data: [
    {
      txnId: 'T1',
      type: 'DEBIT',
      amount: 100.5,
      currentBalance: '900.00',
      transactionTimestamp: '2026-06-01 11:01:00',
      narration: 'FAKE',
    },
  ],
};

async function ok(endpoint: string, data: Record<string, unknown>, o: WorkflowRequestOptions = opts): Promise<unknown> {
  const r = await buildWorkflowRequest(data, endpoint, o);
  if (!r.ok) throw new Error(`expected a body, got errors: ${JSON.stringify(r.errors)}`);
  return r.value.body;
}
async function errs(
  endpoint: string,
  data: Record<string, unknown>,
  o: WorkflowRequestOptions = opts,
): Promise<FieldError[]> {
  const r = await buildWorkflowRequest(data, endpoint, o);
  if (r.ok) throw new Error(`expected errors, got ${JSON.stringify(r.value.body)}`);
  return [...r.errors];
}
const brief = (es: FieldError[]): Array<[string, string, string | undefined]> =>
  es.map((e) => [e.field, e.expected, e.code]);

describe('valid rows -> exact request bodies', () => {
  const cases: Array<[string, string, Record<string, unknown>, unknown]> = [
    [
      'location, CSV text coerced',
      'location_bre',
      { ...TOP, lead_id: 'L1', latitude: '19.076', longitude: ' 72.8777 ', unrelated: 'x' },
      { user_id: 'U1', reference_id: 'R1', input_data: { lead_id: 'L1', latitude: 19.076, longitude: 72.8777 } },
    ],
    [
      'location, ids stay text',
      'location_bre',
      { reference_id: '00123', user_id: '007', lead_id: '0042', latitude: -90, longitude: 180 },
      { user_id: '007', reference_id: '00123', input_data: { lead_id: '0042', latitude: -90, longitude: 180 } },
    ],
    [
      'bureau_mobile, bureau fetched by the workflow (NDJSON numbers become text where 4.3 says string)',
      'bureau_mobile_bre',
      {
        ...TOP,
        lead_id: 'L1',
        app_user_id: 'A1',
        declared_income: '25,000',
        ...PERSONAL,
        phone: 9000000001,
        pincode_aadhar: 400001,
        bureau_type: '',
        bureau_report_path: '',
      },
      {
        user_id: 'U1',
        reference_id: 'R1',
        input_data: { lead_id: 'L1', app_user_id: 'A1', declared_income: 25000, ...PERSONAL },
      },
    ],
    [
      'bureau_mobile, bureau supplied as base64 with its type (personal fields not sent)',
      'bureau_mobile_bre',
      {
        ...TOP,
        lead_id: 'L1',
        app_user_id: 'A1',
        declared_income: 25000,
        pan_number: 'ABCDE1234F',
        bureau_type: 'bureau_a_json',
        bureau_raw_json: BUREAU_A_B64,
      },
      {
        user_id: 'U1',
        reference_id: 'R1',
        input_data: {
          lead_id: 'L1',
          app_user_id: 'A1',
          declared_income: 25000,
          external: { bureau_type: 'bureau_a_json', bureau_raw_json: BUREAU_A_B64 },
        },
      },
    ],
    [
      'bureau_mobile, nested NDJSON external object',
      'bureau_mobile_bre',
      {
        ...TOP,
        lead_id: 'L1',
        app_user_id: 'A1',
        declared_income: 1,
        external: { bureau_type: 'bureau_b_xml', bureau_raw_json: BUREAU_B_XML_B64 },
      },
      {
        user_id: 'U1',
        reference_id: 'R1',
        input_data: {
          lead_id: 'L1',
          app_user_id: 'A1',
          declared_income: 1,
          external: { bureau_type: 'bureau_b_xml', bureau_raw_json: BUREAU_B_XML_B64 },
        },
      },
    ],
    [
      'bureau_mobile, report by path, format detected',
      'bureau_mobile_bre',
      { ...TOP, lead_id: 'L1', app_user_id: 'A1', declared_income: 1, bureau_report_path: 'reports/bureau_a.json' },
      {
        user_id: 'U1',
        reference_id: 'R1',
        input_data: {
          lead_id: 'L1',
          app_user_id: 'A1',
          declared_income: 1,
          external: { bureau_type: 'bureau_a_json', bureau_raw_json: BUREAU_A_B64 },
        },
      },
    ],
    [
      'bureau_mobile, base64 wrapped over lines is sent unwrapped',
      'bureau_mobile_bre',
      {
        ...TOP,
        lead_id: 'L1',
        app_user_id: 'A1',
        declared_income: 1,
        bureau_raw_json: BUREAU_A_B64.replace(/(.{76})/g, '$1\n'),
      },
      {
        user_id: 'U1',
        reference_id: 'R1',
        input_data: {
          lead_id: 'L1',
          app_user_id: 'A1',
          declared_income: 1,
          external: { bureau_type: 'bureau_a_json', bureau_raw_json: BUREAU_A_B64 },
        },
      },
    ],
    [
      'bureau_mobile, bureau_c_softpull_json_v2 named (never detected) is accepted',
      'bureau_mobile_bre',
      {
        ...TOP,
        lead_id: 'L1',
        app_user_id: 'A1',
        declared_income: 1,
        bureau_type: 'bureau_c_softpull_json_v2',
        bureau_raw_json: b64('{"SomeV2Root":{}}'),
      },
      {
        user_id: 'U1',
        reference_id: 'R1',
        input_data: {
          lead_id: 'L1',
          app_user_id: 'A1',
          declared_income: 1,
          external: { bureau_type: 'bureau_c_softpull_json_v2', bureau_raw_json: b64('{"SomeV2Root":{}}') },
        },
      },
    ],
    [
      'bank AA',
      'bank_bre',
      { ...TOP, request_id: 'aareq-1' },
      { user_id: 'U1', reference_id: 'R1', input_data: { request_id: 'aareq-1', bank_type: 'bank_aa' } },
    ],
    [
      'bank AA with external.bank_type',
      'bank_bre',
      { ...TOP, request_id: 'aareq-1', 'external.bank_type': 'bank_aa' },
      { user_id: 'U1', reference_id: 'R1', input_data: { request_id: 'aareq-1', bank_type: 'bank_aa' } },
    ],
    [
      'bank BSA',
      'bank_bre',
      { ...TOP, report_id: 'bsarep-1', auth_token: 'FAKE-ROW-TOKEN', bank_type: 'bank_bsa' },
      {
        user_id: 'U1',
        reference_id: 'R1',
        input_data: { report_id: 'bsarep-1', auth_token: 'FAKE-ROW-TOKEN', bank_type: 'bank_bsa' },
      },
    ],
    [
      'bank supplied, one account inline (NDJSON)',
      'bank_bre',
      { ...TOP, lead_id: 'L1', declared_income: 65000, external: { bank_type: 'bank_aa', bank_data: ACCOUNT } },
      {
        user_id: 'U1',
        reference_id: 'R1',
        input_data: { lead_id: 'L1', declared_income: 65000, external: { bank_type: 'bank_aa', bank_data: ACCOUNT } },
      },
    ],
    [
      'bank supplied, JSON text in a CSV cell',
      'bank_bre',
      {
        ...TOP,
        lead_id: 'L1',
        declared_income: '65000',
        bank_type: 'bank_bsa',
        bank_data: JSON.stringify([ACCOUNT, ACCOUNT]),
      },
      {
        user_id: 'U1',
        reference_id: 'R1',
        input_data: {
          lead_id: 'L1',
          declared_income: 65000,
          external: { bank_type: 'bank_bsa', bank_data: [ACCOUNT, ACCOUNT] },
        },
      },
    ],
    [
      'bank supplied, many accounts from a file',
      'bank_bre',
      { ...TOP, lead_id: 'L1', declared_income: 70000, bank_type: 'bank_aa', bank_data_path: 'bank/two_accounts.json' },
      {
        user_id: 'U1',
        reference_id: 'R1',
        input_data: {
          lead_id: 'L1',
          declared_income: 70000,
          external: { bank_type: 'bank_aa', bank_data: TWO_ACCOUNTS },
        },
      },
    ],
    [
      'bureau_mobile_bank, all by path',
      'bureau_mobile_bank_bre',
      {
        ...TOP,
        lead_id: 'L1',
        app_user_id: 'A1',
        declared_income: '30000',
        bureau_report_path: 'reports/bureau_a.json',
        bank_type: 'bank_bsa',
        bank_data_path: 'bank/salaried.json',
      },
      {
        user_id: 'U1',
        reference_id: 'R1',
        input_data: {
          lead_id: 'L1',
          app_user_id: 'A1',
          declared_income: 30000,
          external: {
            bank_type: 'bank_bsa',
            bureau_type: 'bureau_a_json',
            bureau_raw_json: BUREAU_A_B64,
            bank_data: SALARIED,
          },
        },
      },
    ],
    [
      'repeat, CSV text',
      'repeat_bre',
      {
        ...TOP,
        pan_number: 'ABCDE1234F',
        name_aadhar: 'FAKE',
        address_aadhar: 'X',
        state_aadhar: 'KA',
        city_aadhar: 'BLR',
        pincode_aadhar: '560001',
        phone: '9100000001',
        dob: '1988-05-11',
        max_dpd_last_loan: '0',
        max_dpd_ever_internal: '12',
        previous_loan_amount: '10,000',
        decided_tenure_last_loan: '30',
        actual_tenure_last_loan: '35',
        days_since_last_loan_closed: '12',
        number_of_loans_closed: '3',
        days_since_last_loan_taken: '45',
        days_since_first_loan_taken: '400',
        flag_current_default: 'FALSE',
        number_of_loans_closed_with_dpd_0_full_cycle: '3',
      },
      {
        user_id: 'U1',
        reference_id: 'R1',
        input_data: {
          pan_number: 'ABCDE1234F',
          name_aadhar: 'FAKE',
          address_aadhar: 'X',
          state_aadhar: 'KA',
          city_aadhar: 'BLR',
          pincode_aadhar: '560001',
          phone: '9100000001',
          dob: '1988-05-11',
          max_dpd_last_loan: 0,
          max_dpd_ever_internal: 12,
          previous_loan_amount: 10000,
          decided_tenure_last_loan: 30,
          actual_tenure_last_loan: 35,
          days_since_last_loan_closed: 12,
          number_of_loans_closed: 3,
          days_since_last_loan_taken: 45,
          days_since_first_loan_taken: 400,
          flag_current_default: false,
          number_of_loans_closed_with_dpd_0_full_cycle: 3,
        },
      },
    ],
    [
      'client workflow: every other column, dotted names nested, text kept as text',
      'my_scorecard_v2',
      { ...TOP, lead_id: '0042', 'applicant.age': '34', 'applicant.city': 'Pune', score: '', nested: { a: 1 } },
      {
        user_id: 'U1',
        reference_id: 'R1',
        input_data: { lead_id: '0042', applicant: { age: '34', city: 'Pune' }, nested: { a: 1 } },
      },
    ],
    [
      'client workflow: a report path becomes external.bureau_raw_json with its detected type',
      'my_scorecard_v2',
      { ...TOP, bureau_report_path: 'reports/bureau_a.json', note: 'n' },
      {
        user_id: 'U1',
        reference_id: 'R1',
        input_data: { note: 'n', external: { bureau_type: 'bureau_a_json', bureau_raw_json: BUREAU_A_B64 } },
      },
    ],
  ];
  it.each(cases)('%s', async (_name, endpoint, data, expected) => {
    expect(await ok(endpoint, data)).toEqual(expected);
  });

  it('client workflow: bureau_type and bank_type without a report or bank data are sent as given', async () => {
    expect(await ok('my_flow', { ...TOP, bureau_type: 'bureau_a_json', bank_type: 'bank_aa' })).toEqual({
      user_id: 'U1',
      reference_id: 'R1',
      input_data: { bureau_type: 'bureau_a_json', bank_type: 'bank_aa' },
    });
  });

  it('client workflow options: column_types and exclude_columns', async () => {
    const body = await ok(
      'my_flow',
      { ...TOP, age: '34', vip: 'yes', extra: '{"a":[1]}', defaulted: '1' },
      { ...opts, columnTypes: { age: 'number', vip: 'boolean', extra: 'json' }, excludeColumns: ['defaulted'] },
    );
    expect(body).toEqual({ user_id: 'U1', reference_id: 'R1', input_data: { age: 34, vip: true, extra: { a: [1] } } });
  });

  it('named workflow: pass_columns are added as given; documented fields win', async () => {
    const body = await ok(
      'location_bre',
      { ...TOP, lead_id: 'L1', latitude: 1, longitude: 2, 'device.os': 'android', channel: 'web' },
      { ...opts, passColumns: ['device.os', 'channel', 'latitude'] },
    );
    expect(body).toEqual({
      user_id: 'U1',
      reference_id: 'R1',
      input_data: { lead_id: 'L1', latitude: 1, longitude: 2, device: { os: 'android' }, channel: 'web' },
    });
  });

  it('the request never shares objects with the row', async () => {
    const row = { ...TOP, nested: { a: 1 } };
    const body = (await ok('my_flow', row)) as { input_data: { nested: { a: number } } };
    body.input_data.nested.a = 2;
    expect(row.nested.a).toBe(1);
  });

  it('a named format that disagrees with detection is sent as named, with a warning', async () => {
    const r = await buildWorkflowRequest(
      {
        ...TOP,
        lead_id: 'L',
        app_user_id: 'A',
        declared_income: 1,
        bureau_type: 'bureau_b_json',
        bureau_raw_json: BUREAU_A_B64,
      },
      'bureau_mobile_bre',
      opts,
    );
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect((r.value.body.input_data as { external: { bureau_type: string } }).external.bureau_type).toBe(
        'bureau_b_json',
      );
      expect(r.warnings).toEqual([
        'bureau_type: the row names bureau_b_json but the report looks like bureau_a_json; sent as bureau_b_json',
      ]);
    }
  });
});

describe("broken rows -> every problem, named by the user's column", () => {
  const cases: Array<[string, string, Record<string, unknown>, Array<[string, string, string | undefined]>]> = [
    [
      'location: all fields wrong at once',
      'location_bre',
      { user_id: 'U'.repeat(65), latitude: 'abc', longitude: '200' },
      [
        ['user_id', 'a user id of at most 64 characters', undefined],
        ['reference_id', 'a reference id (the loan application)', undefined],
        ['lead_id', 'a string', undefined],
        ['latitude', 'a number between -90 and 90', undefined],
        ['longitude', 'a number between -180 and 180', undefined],
      ],
    ],
    [
      'bureau_mobile: neither bureau mode',
      'bureau_mobile_bre',
      { ...TOP, lead_id: 'L', app_user_id: 'A', declared_income: '-5' },
      [
        [
          'external.bureau_raw_json',
          expect.stringMatching(
            /^either a supplied bureau report .* or the personal fields .*pan_number/,
          ) as unknown as string,
          undefined,
        ],
        ['declared_income', 'a number >= 0', undefined],
      ],
    ],
    [
      'bureau_mobile: fetched mode with personal fields missing',
      'bureau_mobile_bre',
      {
        ...TOP,
        lead_id: 'L',
        app_user_id: 'A'.repeat(65),
        declared_income: 1,
        pan_number: 'ABCDE1234F',
        phone: '9000000001',
      },
      [
        ['app_user_id', 'a string of at most 64 characters', undefined],
        ...[
          'name_aadhar',
          'address_aadhar',
          'state_aadhar',
          'city_aadhar',
          'pincode_aadhar',
          'pan_name',
          'dob',
          'profession',
          'salary_source',
          'loan_purpose',
          'income_type',
          'gender',
        ].map((f): [string, string, undefined] => [f, 'a string', undefined]),
      ],
    ],
    [
      'bureau_mobile: bureau_type not a format name',
      'bureau_mobile_bre',
      {
        ...TOP,
        lead_id: 'L',
        app_user_id: 'A',
        declared_income: 1,
        bureau_type: 'cibil',
        bureau_raw_json: BUREAU_A_B64,
      },
      [
        [
          'bureau_type',
          expect.stringMatching(/^one of bureau_a_json, .*bureau_c_softpull_json_v2$/) as unknown as string,
          undefined,
        ],
      ],
    ],
    [
      'bureau_mobile: report path missing',
      'bureau_mobile_bre',
      { ...TOP, lead_id: 'L', app_user_id: 'A', declared_income: 1, bureau_report_path: 'reports/nope.json' },
      [['bureau_report_path', 'the path of a readable bureau report file', 'REPORT_UNREADABLE']],
    ],
    [
      'bureau_mobile: invalid base64',
      'bureau_mobile_bre',
      { ...TOP, lead_id: 'L', app_user_id: 'A', declared_income: 1, bureau_raw_json: 'abc$%^==' },
      [['bureau_raw_json', 'base64 of the bureau report', 'REPORT_UNREADABLE']],
    ],
    [
      'bureau_mobile: base64 of text that is not JSON',
      'bureau_mobile_bre',
      {
        ...TOP,
        lead_id: 'L',
        app_user_id: 'A',
        declared_income: 1,
        bureau_type: 'bureau_a_json',
        bureau_raw_json: b64('hello there'),
      },
      [['bureau_raw_json', 'a JSON bureau report (XML for bureau_b_xml)', 'REPORT_UNREADABLE']],
    ],
    [
      'bureau_mobile: the report itself instead of base64',
      'bureau_mobile_bre',
      { ...TOP, lead_id: 'L', app_user_id: 'A', declared_income: 1, bureau_raw_json: '{"cir_report_file":{}}' },
      [['bureau_raw_json', 'base64 of the bureau report', 'REPORT_UNREADABLE']],
    ],
    [
      'bureau_mobile: undetectable report, no type',
      'bureau_mobile_bre',
      { ...TOP, lead_id: 'L', app_user_id: 'A', declared_income: 1, bureau_raw_json: b64('{"foo":1}') },
      [
        [
          'bureau_raw_json',
          'a report whose format can be detected, or the format named in external.bureau_type',
          'REPORT_FORMAT_UNKNOWN',
        ],
      ],
    ],
    [
      'bureau_mobile: the SOAP form of bureau_c',
      'bureau_mobile_bre',
      { ...TOP, lead_id: 'L', app_user_id: 'A', declared_income: 1, bureau_report_path: 'reports/bureau_c_soap.xml' },
      [
        [
          'bureau_report_path',
          expect.stringMatching(/^a report in one of/) as unknown as string,
          'REPORT_FORMAT_UNSUPPORTED',
        ],
      ],
    ],
    [
      'bureau_mobile: SOAP refused even when named',
      'bureau_mobile_bre',
      {
        ...TOP,
        lead_id: 'L',
        app_user_id: 'A',
        declared_income: 1,
        bureau_type: 'bureau_b_xml',
        bureau_report_path: 'reports/bureau_c_soap.xml',
      },
      [
        [
          'bureau_report_path',
          expect.stringMatching(/^a report in one of/) as unknown as string,
          'REPORT_FORMAT_UNSUPPORTED',
        ],
      ],
    ],
    [
      'bureau_mobile: XML format named for a JSON report',
      'bureau_mobile_bre',
      {
        ...TOP,
        lead_id: 'L',
        app_user_id: 'A',
        declared_income: 1,
        bureau_type: 'bureau_b_xml',
        bureau_raw_json: BUREAU_A_B64,
      },
      [['bureau_type', 'a format matching the report (JSON)', undefined]],
    ],
    [
      'bureau_mobile: report given twice',
      'bureau_mobile_bre',
      {
        ...TOP,
        lead_id: 'L',
        app_user_id: 'A',
        declared_income: 1,
        bureau_raw_json: BUREAU_A_B64,
        bureau_report_path: 'reports/bureau_a.json',
      },
      [['bureau_report_path', 'either bureau_raw_json or bureau_report_path, not both', undefined]],
    ],
    [
      'bank: no mode',
      'bank_bre',
      { ...TOP, lead_id: 'L' },
      [
        [
          'bank_type',
          expect.stringMatching(
            /^one of: request_id .*report_id and auth_token .*external.bank_data or bank_data_path/,
          ) as unknown as string,
          undefined,
        ],
      ],
    ],
    [
      'bank BSA: token missing, contradictory bank_type',
      'bank_bre',
      { ...TOP, report_id: 'r1', bank_type: 'bank_aa' },
      [
        ['auth_token', 'a string', undefined],
        ['bank_type', "'bank_bsa'", undefined],
      ],
    ],
    [
      'bank supplied: bank_type missing, bad data shape',
      'bank_bre',
      {
        ...TOP,
        lead_id: 'L',
        declared_income: 'lots',
        bank_data: {
          metadata: { bank_name: 5 },
          transaction_data: [
            { amount: '12.5', currentBalance: 900, transactionTimestamp: '2026-06-01T11:01:00Z', type: 1 },
            'x',
          ],
        },
      },
      [
        ['declared_income', 'a number >= 0', undefined],
        ['external.bank_type', 'one of bank_aa, bank_bsa', undefined],
        ['bank_data', 'a string', undefined],
        ['bank_data', 'a string', undefined],
        ['bank_data', 'a number', undefined],
        ['bank_data', 'numeric text, e.g. "1520.75"', undefined],
        ['bank_data', 'a timestamp YYYY-MM-DD HH:MM:SS', undefined],
        ['bank_data', 'a transaction object', undefined],
      ],
    ],
    [
      'bank supplied: not JSON in a CSV cell',
      'bank_bre',
      { ...TOP, lead_id: 'L', declared_income: 1, bank_type: 'bank_aa', bank_data: '{metadata:' },
      [['bank_data', 'bank data as a JSON object (or array of them)', undefined]],
    ],
    [
      'bank supplied: missing metadata and transactions',
      'bank_bre',
      { ...TOP, lead_id: 'L', declared_income: 1, bank_type: 'bank_aa', bank_data: { foo: 1 } },
      [
        ['bank_data', 'an object (account metadata)', undefined],
        ['bank_data', 'an array of transactions', undefined],
      ],
    ],
    [
      'bank supplied: file missing',
      'bank_bre',
      { ...TOP, lead_id: 'L', declared_income: 1, bank_type: 'bank_aa', bank_data_path: 'bank/none.json' },
      [['bank_data_path', 'the path of a JSON bank data file', 'REPORT_UNREADABLE']],
    ],
    [
      'bank supplied: file is not JSON',
      'bank_bre',
      { ...TOP, lead_id: 'L', declared_income: 1, bank_type: 'bank_aa', bank_data_path: 'reports/bureau_b.xml' },
      [['bank_data_path', 'the path of a JSON bank data file', 'REPORT_UNREADABLE']],
    ],
    [
      'bureau_mobile_bank: everything missing',
      'bureau_mobile_bank_bre',
      { ...TOP },
      [
        ['lead_id', 'a string', undefined],
        ['app_user_id', 'a string of at most 64 characters', undefined],
        ['declared_income', 'a number >= 0', undefined],
        ['external.bank_type', 'one of bank_aa, bank_bsa', undefined],
        ['external.bureau_raw_json', 'base64 of the bureau report, or its file in bureau_report_path', undefined],
        [
          'external.bank_data',
          'bank data (spec 2.6) in external.bank_data, or its JSON file in bank_data_path',
          undefined,
        ],
      ],
    ],
    [
      'bureau_mobile_bank: several accounts refused',
      'bureau_mobile_bank_bre',
      {
        ...TOP,
        lead_id: 'L',
        app_user_id: 'A',
        declared_income: 1,
        bank_type: 'bank_aa',
        bureau_report_path: 'reports/bureau_a.json',
        bank_data_path: 'bank/two_accounts.json',
      },
      [['bank_data_path', 'one account (an object with metadata and transaction_data)', undefined]],
    ],
    [
      'repeat: wrong types',
      'repeat_bre',
      {
        ...TOP,
        pan_number: 'P',
        name_aadhar: 'N',
        address_aadhar: 'A',
        state_aadhar: 'S',
        city_aadhar: 'C',
        pincode_aadhar: '1',
        phone: '9',
        dob: 'd',
        max_dpd_last_loan: 'none',
        max_dpd_ever_internal: 0,
        previous_loan_amount: 0,
        decided_tenure_last_loan: 0,
        actual_tenure_last_loan: 0,
        days_since_last_loan_closed: 0,
        number_of_loans_closed: 0,
        days_since_last_loan_taken: 0,
        days_since_first_loan_taken: 0,
        flag_current_default: 'maybe',
      },
      [
        ['max_dpd_last_loan', 'a number', undefined],
        ['flag_current_default', 'a boolean (true/false, yes/no or 1/0)', undefined],
        ['number_of_loans_closed_with_dpd_0_full_cycle', 'a number', undefined],
      ],
    ],
    [
      'client workflow: ids and column types still checked',
      'my_flow',
      { user_id: '', age: 'x' },
      [
        ['user_id', 'a user id of at most 64 characters', undefined],
        ['reference_id', 'a reference id (the loan application)', undefined],
        ['age', 'a number', undefined],
      ],
    ],
  ];
  it.each(cases)('%s', async (_name, endpoint, data, expected) => {
    const o = endpoint === 'my_flow' ? { ...opts, columnTypes: { age: 'number' as const } } : opts;
    expect(brief(await errs(endpoint, data, o))).toEqual(expected);
  });

  it("messages do not quote personal data or the row's auth_token", async () => {
    const es = await errs('bank_bre', {
      ...TOP,
      report_id: 'r1',
      auth_token: { token: 'FAKE-ROW-TOKEN' },
      bank_type: 'bank_bsa',
    });
    expect(es.map((e) => e.message)).toEqual(['auth_token: Expected a string, got an object']);
    const es2 = await errs('bank_bre', {
      ...TOP,
      lead_id: 'L',
      declared_income: 1,
      bank_type: 'bank_aa',
      bank_data: { metadata: { account_holder_name: 7 }, transaction_data: [{ narration: 12345 }] },
    });
    expect(es2.map((e) => e.message)).toEqual([
      'bank_data: metadata.account_holder_name: Expected a string, got a number',
      'bank_data: transaction_data[0].narration: Expected a string, got a number',
    ]);
  });

  it('lists at most 10 bank data problems, then a count', async () => {
    const txns = Array.from({ length: 25 }, () => ({ amount: 'x' }));
    const es = await errs('bank_bre', {
      ...TOP,
      lead_id: 'L',
      declared_income: 1,
      bank_type: 'bank_aa',
      bank_data: { metadata: {}, transaction_data: txns },
    });
    expect(es).toHaveLength(11);
    expect(es[10].message).toBe('bank_data: ... and 15 more problems');
  });
});

describe('file reads are cached', () => {
  it('one read per file however many rows name it, failures included', async () => {
    const reads: string[] = [];
    // gig.json is there but cannot be read (as if its mode were 000): the failure is cached like a success.
    const cache = new FileCache({
      read: async (p) => {
        reads.push(p);
        if (p.endsWith('gig.json')) throw Object.assign(new Error('x'), { code: 'EACCES' });
        return readFileSync(p);
      },
    });
    const o = { filesRoot: folderRoot(SAMPLES, false), cache };
    const row = {
      ...TOP,
      lead_id: 'L',
      app_user_id: 'A',
      declared_income: 1,
      bank_type: 'bank_aa',
      bureau_report_path: 'reports/bureau_a.json',
      bank_data_path: 'bank/salaried.json',
    };
    await Promise.all(Array.from({ length: 20 }, () => ok('bureau_mobile_bank_bre', row, o)));
    for (let i = 0; i < 3; i++) {
      expect(brief(await errs('bureau_mobile_bank_bre', { ...row, bank_data_path: 'bank/gig.json' }, o))).toEqual([
        ['bank_data_path', 'the path of a JSON bank data file', 'REPORT_UNREADABLE'],
      ]);
    }
    // A file that is not there is found missing by the files-root check, before any read.
    for (let i = 0; i < 3; i++)
      await errs('bureau_mobile_bank_bre', { ...row, bank_data_path: 'bank/missing.json' }, o);
    const real = realpathSync(SAMPLES);
    expect(reads.map((p) => p.slice(real.length))).toEqual([
      '/reports/bureau_a.json',
      '/bank/salaried.json',
      '/bank/gig.json',
    ]);
  });

  it('evicts the least recently used entry', async () => {
    let n = 0;
    const cache = new FileCache({
      maxEntries: 2,
      read: async () => {
        n++;
        return Buffer.from('x');
      },
    });
    await cache.get('/a', 'k', (b) => b.length);
    await cache.get('/b', 'k', (b) => b.length);
    await cache.get('/a', 'k', (b) => b.length); // a is now the most recent
    await cache.get('/c', 'k', (b) => b.length); // evicts b
    await cache.get('/a', 'k', (b) => b.length);
    expect(n).toBe(3);
    await cache.get('/b', 'k', (b) => b.length);
    expect(n).toBe(4);
    expect(cache.size).toBe(2);
  });

  it('keeps look-ups too: one per path a row gives, the least recently used going first', async () => {
    const found: string[] = [];
    const cache = new FileCache({ maxLocations: 2 });
    const locate = (key: string) =>
      cache.locate(key, async () => {
        found.push(key);
        return key.toUpperCase();
      });
    expect(await Promise.all(['a', 'a', 'b', 'a', 'c', 'a', 'b'].map(locate))).toEqual([
      'A',
      'A',
      'B',
      'A',
      'C',
      'A',
      'B',
    ]);
    // a, b; a again (kept); c evicts b; a kept; b looked up again.
    expect(found).toEqual(['a', 'b', 'c', 'b']);
  });
});

describe('file paths stay inside the files root', () => {
  // package.json beside samples/ is JSON: read, it would be sent as bank data or a report.
  const outside = join(SAMPLES, '..', 'package.json');
  const row = {
    ...TOP,
    lead_id: 'L',
    app_user_id: 'A',
    declared_income: 1,
    bank_type: 'bank_aa',
    bureau_report_path: 'reports/bureau_a.json',
    bank_data_path: 'bank/salaried.json',
  };

  it.each<[string, Record<string, unknown>, FilesRoot, [string, string][]]>([
    [
      'bank data by an absolute path elsewhere',
      { bank_data_path: outside },
      folderRoot(SAMPLES, false),
      [['bank_data_path', 'FILE_OUTSIDE_ROOT']],
    ],
    [
      'bank data through ..',
      { bank_data_path: '../package.json' },
      folderRoot(SAMPLES, false),
      [['bank_data_path', 'FILE_OUTSIDE_ROOT']],
    ],
    [
      'a report through ..',
      { bureau_report_path: 'reports/../../package.json' },
      folderRoot(SAMPLES, false),
      [['bureau_report_path', 'FILE_OUTSIDE_ROOT']],
    ],
    [
      'both, each its own error',
      { bureau_report_path: outside, bank_data_path: '../package.json' },
      folderRoot(SAMPLES, false),
      [
        ['bureau_report_path', 'FILE_OUTSIDE_ROOT'],
        ['bank_data_path', 'FILE_OUTSIDE_ROOT'],
      ],
    ],
    [
      'no root (stdin)',
      {},
      { kind: 'none', why: 'the input is stdin' },
      [
        ['bureau_report_path', 'FILES_ROOT_NEEDED'],
        ['bank_data_path', 'FILES_ROOT_NEEDED'],
      ],
    ],
  ])("%s: the row's error, nothing read", async (_name, over, filesRoot, expected) => {
    const reads: string[] = [];
    const cache = new FileCache({
      read: async (p) => {
        reads.push(p);
        return readFileSync(p);
      },
    });
    const es = await errs('bureau_mobile_bank_bre', { ...row, ...over }, { filesRoot, cache });
    expect(es.map((e) => [e.field, e.code])).toEqual(expected);
    // Only the row's other file (inside the root) may have been read.
    expect(reads.filter((p) => !p.startsWith(realpathSync(SAMPLES)))).toEqual([]);
  });

  it('the message names the field, the path as given and the root', async () => {
    const [e] = await errs('bank_bre', {
      ...TOP,
      lead_id: 'L',
      declared_income: 1,
      bank_type: 'bank_aa',
      bank_data_path: '../package.json',
    });
    expect(e.message).toBe(
      `bank_data_path: '../package.json' leads outside the files root ${resolve(SAMPLES)} (the input file's folder); the file was not read. Put the file inside the root, or name the folder that holds the files with --files-root`,
    );
    const [n] = await errs(
      'bank_bre',
      { ...TOP, lead_id: 'L', declared_income: 1, bank_type: 'bank_aa', bank_data_path: 'bank/salaried.json' },
      { filesRoot: { kind: 'none', why: 'the input is stdin' } },
    );
    expect(n.message).toBe(
      "bank_data_path: 'bank/salaried.json' was not read: a file column needs a files root and the input is stdin; pass --files-root DIR, the folder the files are in",
    );
  });

  it('an absolute path inside the root is read', async () => {
    const body = (await ok('bank_bre', {
      ...TOP,
      lead_id: 'L',
      declared_income: 1,
      bank_type: 'bank_aa',
      bank_data_path: join(SAMPLES, 'bank', 'salaried.json'),
    })) as { input_data: { external: { bank_data: unknown } } };
    expect(body.input_data.external.bank_data).toEqual(SALARIED);
  });
});
