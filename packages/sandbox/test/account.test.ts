/** The account transaction service (account spec 2.2-2.7, 4.1-4.5) and its sandbox session semantics. */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../src/index.js';
import { istInstant } from '../src/logic/time.js';
import { post } from './helpers.js';

let sb: Sandbox;
const T0 = istInstant(2026, 0, 15, 12, 0, 0);
beforeAll(async () => {
  sb = await startSandbox({ rate: { account: null }, now: () => T0, bsaReadyAfterMs: 2000 });
});
afterAll(async () => {
  await sb.close();
});

const range = { datetimerangefrom: '07/01/2025 12:00:00 AM', datetimerangeto: '12/31/2025 11:59:59 PM' };
const fetchAa = (session: string, extra: Record<string, unknown> = {}) =>
  post(sb, '/aa/fetch_data', { user_id: 'user-1', aa_session_id: session, ...range, ...extra });
const HANDLE_A = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
const HANDLE_B = '9b2c6f8e-1d2a-4c3b-8e7f-6a5b4c3d2e1f';

describe('AA fetch_data', () => {
  it('single consent: the documented shape, transactions only within the range', async () => {
    const r = await fetchAa('sess-single', { generate_insights: false });
    expect(r.status).toBe(200);
    expect(Object.keys(r.json)).toEqual([
      'user_id',
      'request_id',
      'aa_session_id',
      'success',
      'service',
      'service_response',
    ]);
    expect(r.json).toMatchObject({ user_id: 'user-1', aa_session_id: 'sess-single', success: true });
    expect(typeof r.json.service).toBe('string');
    const sr = r.json.service_response;
    expect(sr).toMatchObject({ consent_status: 'ACCEPTED', fi_request_status: 'ready' });
    expect(sr.consent_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Object.keys(sr.fetched_data.header)).toEqual(['channelId', 'rid', 'ts']);
    expect(sr.fetched_data.header.ts).toMatch(/\+05:30$/);
    const el = sr.fetched_data.body[0];
    expect(Object.keys(el)).toEqual([
      'fipId',
      'fipName',
      'custId',
      'consentId',
      'sessionId',
      'fiAccountInfo',
      'fiObjects',
    ]);
    expect(Object.keys(el.fiAccountInfo[0])).toEqual(['accountRefNo', 'linkRefNo']);
    const fi = el.fiObjects[0];
    expect(Object.keys(fi)).toEqual([
      'Profile',
      'Summary',
      'Transactions',
      'type',
      'maskedAccNumber',
      'version',
      'linkedAccRef',
      'schemaLocation',
    ]);
    expect(Object.keys(fi.Profile.Holders.Holder)).toEqual([
      'name',
      'dob',
      'mobile',
      'nominee',
      'landline',
      'address',
      'email',
      'pan',
      'ckycRegistered',
    ]);
    expect(fi.Profile.Holders.Holder.name).toMatch(/\*/);
    expect(Object.keys(fi.Summary)).toEqual([
      'currentBalance',
      'currency',
      'balanceDateTime',
      'accountType',
      'accountSubType',
      'branch',
      'facility',
      'ifsc',
      'micrCode',
      'openingDate',
      'currentODLimit',
      'drawingLimit',
      'status',
      'pendingTxns',
    ]);
    expect(fi.Transactions.startDate).toBe('2025-07-01');
    expect(fi.Transactions.endDate).toBe('2025-12-31');
    const txns = fi.Transactions.Transaction;
    expect(txns.length).toBeGreaterThan(30);
    const from = istInstant(2025, 6, 1);
    const to = istInstant(2025, 11, 31, 23, 59, 59);
    for (const t of txns) {
      expect(Object.keys(t)).toEqual([
        'type',
        'mode',
        'amount',
        'transactionalBalance',
        'transactionTimestamp',
        'valueDate',
        'txnId',
        'narration',
        'reference',
      ]);
      expect(['DEBIT', 'CREDIT']).toContain(t.type);
      expect(typeof t.amount).toBe('number');
      expect(t.transactionalBalance).toMatch(/^\d+\.\d{2}$/);
      expect(t.transactionTimestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+05:30$/);
      const ms = Date.parse(t.transactionTimestamp);
      expect(ms).toBeGreaterThanOrEqual(from);
      expect(ms).toBeLessThanOrEqual(to);
    }
    // Consistent running balances.
    for (let i = 1; i < txns.length; i++) {
      const delta = txns[i].type === 'CREDIT' ? txns[i].amount : -txns[i].amount;
      expect(Number(txns[i].transactionalBalance)).toBeCloseTo(Number(txns[i - 1].transactionalBalance) + delta, 2);
    }
  });

  it('is deterministic per (user_id, aa_session_id); a given consent_handle is accepted in single consent', async () => {
    const a = await fetchAa('sess-det');
    const b = await fetchAa('sess-det', { consent_handle: HANDLE_A });
    expect(b.status).toBe(200);
    expect(b.json.service_response.fetched_data.body[0].fiObjects[0].Transactions).toEqual(
      a.json.service_response.fetched_data.body[0].fiObjects[0].Transactions,
    );
    const other = await post(sb, '/aa/fetch_data', { user_id: 'user-2', aa_session_id: 'sess-det', ...range });
    expect(other.json.service_response.fetched_data.body[0].fiObjects[0].Transactions).not.toEqual(
      a.json.service_response.fetched_data.body[0].fiObjects[0].Transactions,
    );
  });

  it('insights when generate_insights is true (spec 2.3 fields)', async () => {
    const r = await fetchAa('sess-ins', { generate_insights: true });
    expect(Object.keys(r.json.insights)).toEqual([
      'user_id',
      'request_id',
      'data_requested_time',
      'cutoff_date',
      'format_type',
      'fetch_extraction_report',
      'fetch_txn_data',
      'bank_name',
      'account_number',
      'account_type',
      'ifsc_code',
      'account_branch',
      'account_open_date',
      'account_od_limit',
      'account_drawing_limit',
      'account_status',
      'account_currency',
      'account_current_balance',
      'account_current_balance_datetime',
      'account_holder_name',
      'account_holder_dob',
      'account_holder_mobile',
      'account_holder_nominee',
      'account_holder_landline',
    ]);
    expect(r.json.insights).toMatchObject({
      user_id: 'user-1',
      request_id: r.json.request_id,
      data_requested_time: '2026-01-15 12:00:00',
      cutoff_date: '2025-12-31 23:59:59',
    });
    expect(r.json.insights.account_number).toMatch(/^X+\d{4}$/);
    expect(typeof r.json.insights.account_current_balance).toBe('number');
  });

  it('multi consent: consent_handle required; each handle yields its own account', async () => {
    const none = await fetchAa('sess-multi-1');
    expect(none.status).toBe(400);
    expect(none.json).toEqual({
      detail: {
        error: 'consent_handle is required for a multi-consent session',
        request_id: none.json.detail.request_id,
        user_id: 'user-1',
        aa_session_id: 'sess-multi-1',
      },
    });
    const a = await fetchAa('sess-multi-1', { consent_handle: HANDLE_A });
    const b = await fetchAa('sess-multi-1', { consent_handle: HANDLE_B });
    const a2 = await fetchAa('sess-multi-1', { consent_handle: HANDLE_A.toUpperCase() });
    expect([a.status, b.status]).toEqual([200, 200]);
    const acc = (r: typeof a) =>
      r.json.service_response.fetched_data.body[0].fiObjects[0].maskedAccNumber + r.json.service_response.consent_id;
    expect(acc(a)).not.toBe(acc(b));
    expect(acc(a2)).toBe(acc(a));
    const bad = await fetchAa('sess-multi-1', { consent_handle: 'not-a-uuid' });
    expect(bad.status).toBe(400);
    expect(bad.json.detail.error).toBe("consent_handle must be a UUID, got 'not-a-uuid'");
  });

  it('date format and order errors, unknown sessions, missing fields', async () => {
    const fmt = await fetchAa('s', { datetimerangefrom: '2025-07-01 00:00:00' });
    expect(fmt.status).toBe(400);
    expect(fmt.json.detail.error).toBe(
      "datetimerangefrom must be in the format MM/DD/YYYY HH:MM:SS AM/PM, got '2025-07-01 00:00:00'",
    );
    const order = await fetchAa('s', {
      datetimerangefrom: '12/31/2025 11:59:59 PM',
      datetimerangeto: '07/01/2025 12:00:00 AM',
    });
    expect(order.status).toBe(400);
    expect(order.json.detail.error).toBe('datetimerangeto must be later than datetimerangefrom');
    for (const id of ['unknown-123', 'UNKNOWNsession']) {
      const u = await fetchAa(id);
      expect(u.status).toBe(404);
      expect(u.json).toEqual({
        detail: {
          error: 'no aa session found for this user and aa_session_id',
          request_id: u.json.detail.request_id,
          user_id: 'user-1',
          aa_session_id: id,
        },
      });
    }
    const miss = await post(sb, '/aa/fetch_data', { user_id: 'u' });
    expect(miss.status).toBe(422);
    expect(miss.json.error.type).toBe('validation_error');
    expect(miss.json.error.detail.map((d: { loc: string[] }) => d.loc[1])).toEqual([
      'aa_session_id',
      'datetimerangefrom',
      'datetimerangeto',
    ]);
    expect(miss.json.error.detail[0]).toEqual({
      type: 'missing',
      loc: ['body', 'aa_session_id'],
      msg: 'Field required',
      input: { user_id: 'u' },
    });
  });
});

describe('AA retrieve_report', () => {
  it('returns a link to a CSV of the fetched transactions, valid 7 days on the sandbox clock', async () => {
    let t = T0;
    const s = await startSandbox({ rate: { account: null }, now: () => t });
    try {
      await post(s, '/aa/fetch_data', { user_id: 'u1', aa_session_id: 'sess-r', ...range });
      const r = await post(s, '/aa/retrieve_report', {
        user_id: 'u1',
        aa_session_id: 'sess-r',
        generate_insights: true,
      });
      expect(r.status).toBe(200);
      expect(Object.keys(r.json)).toEqual(['report_url', 'request_id', 'insights']);
      expect(Object.keys(r.json.insights)).toEqual(['user_id', 'request_id', 'bank_name', 'account_number']);
      expect(r.json.report_url.startsWith(`${s.url}/__reports/`)).toBe(true);
      const get = async () => {
        const res = await request(r.json.report_url);
        return { status: res.statusCode, type: res.headers['content-type'], text: await res.body.text() };
      };
      const csv = await get();
      expect(csv.status).toBe(200);
      expect(csv.type).toMatch(/^text\/csv/);
      const lines = csv.text.trim().split('\n');
      expect(lines[0]).toBe(
        'account_number,txn_id,transaction_timestamp,value_date,type,mode,amount,balance,narration,reference',
      );
      expect(lines.length).toBeGreaterThan(30);
      t += 7 * 86_400_000 - 1;
      expect((await get()).status).toBe(200);
      t += 1;
      const gone = await get();
      expect(gone.status).toBe(410);
      // A fresh call gives a fresh link.
      const again = await post(s, '/aa/retrieve_report', { user_id: 'u1', aa_session_id: 'sess-r' });
      expect(again.json.insights).toBeUndefined();
      expect(again.json.report_url).not.toBe(r.json.report_url);
      expect((await request(again.json.report_url)).statusCode).toBe(200);
      expect((await request(`${s.url}/__reports/nope.csv`)).statusCode).toBe(404);
    } finally {
      await s.close();
    }
  });
  it('unknown session -> 404 AA error shape', async () => {
    const r = await post(sb, '/aa/retrieve_report', { user_id: 'u1', aa_session_id: 'unknown-9' });
    expect(r.status).toBe(404);
    expect(Object.keys(r.json.detail)).toEqual(['error', 'request_id', 'user_id', 'aa_session_id']);
  });
});

describe('BSA', () => {
  it('status_check: processing for bsaReadyAfterMs after the first check, then completed; fetch_data 409 before', async () => {
    let t = T0;
    const s = await startSandbox({ rate: { account: null }, now: () => t, bsaReadyAfterMs: 2000 });
    try {
      const body = { user_id: 'u1', aa_session_id: 'bsa-1' };
      const early = await post(s, '/bsa/fetch_data', body);
      expect(early.status).toBe(409);
      expect(early.json).toEqual({
        detail: {
          error: 'bsa session is not ready for fetch_data',
          request_id: early.json.detail.request_id,
          user_id: 'u1',
        },
      });
      const first = await post(s, '/bsa/status_check', body);
      expect(first.status).toBe(200);
      expect(first.json).toEqual({
        request_id: first.json.request_id,
        user_id: 'u1',
        aa_session_id: 'bsa-1',
        ready_for_fetch_data: false,
        status: 'processing',
        error: null,
      });
      t += 1999;
      expect((await post(s, '/bsa/status_check', body)).json.status).toBe('processing');
      expect((await post(s, '/bsa/fetch_data', body)).status).toBe(409);
      t += 1;
      const ready = await post(s, '/bsa/status_check', body);
      expect(ready.json).toMatchObject({ ready_for_fetch_data: true, status: 'completed', error: null });
      const data = await post(s, '/bsa/fetch_data', { ...body, generate_insights: true });
      expect(data.status).toBe(200);
      expect(Object.keys(data.json)).toEqual([
        'request_id',
        'user_id',
        'aa_session_id',
        'status',
        'error',
        'service_response',
      ]);
      expect(data.json).toMatchObject({ status: 'completed', error: null });
      const sr = data.json.service_response;
      expect(Object.keys(sr)).toEqual([
        'customerInfo',
        'statementdetails',
        'summaryInfo',
        'monthlyDetails',
        'fCUAnalysis',
        'accountXns',
      ]);
      expect(Object.keys(sr.customerInfo)).toEqual([
        'name',
        'address',
        'landline',
        'mobile',
        'email',
        'pan',
        'bank',
        'analyzerTransactionId',
        'customerTransactionId',
        'instId',
      ]);
      expect(typeof sr.customerInfo.instId).toBe('number');
      expect(sr.statementdetails[0]).toMatchObject({ statementStatus: 'VERIFIED' });
      expect(Object.keys(sr.statementdetails[0].statementAccounts[0])).toEqual([
        'accountNo',
        'accountType',
        'xnsStartDate',
        'xnsEndDate',
      ]);
      expect(sr.statementdetails[0].statementAccounts[0]).toMatchObject({
        xnsStartDate: '2025-07-01',
        xnsEndDate: '2025-12-31',
      });
      const fields = [
        'balAvg',
        'balMax',
        'balMin',
        'cashDeposits',
        'cashWithdrawals',
        'chqDeposits',
        'chqIssues',
        'credits',
        'debits',
        'emiOrLoans',
        'inwBounces',
        'loanDisbursals',
        'outwBounces',
        'salaries',
        'totalCashDeposit',
        'totalCashWithdrawal',
        'totalChqDeposit',
        'totalChqIssue',
        'totalCredit',
        'totalDebit',
        'totalEmiOrLoan',
        'totalLoanDisbursal',
        'totalSalary',
      ];
      expect(Object.keys(sr.summaryInfo)).toEqual([
        'instName',
        'accNo',
        'accType',
        'fullMonthCount',
        'total',
        'average',
      ]);
      expect(Object.keys(sr.summaryInfo.total)).toEqual(fields);
      expect(Object.keys(sr.summaryInfo.average)).toEqual(fields);
      for (const f of fields) expect(typeof sr.summaryInfo.total[f]).toBe('number');
      expect(sr.monthlyDetails).toEqual([]);
      expect(sr.fCUAnalysis).toEqual({
        possibleFraudIndicators: { suspiciousBankEStatements: { status: 'false' } },
        behaviouralTransactionalIndicators: {},
      });
      const xns = sr.accountXns[0].xns;
      expect(Object.keys(sr.accountXns[0])).toEqual(['accountNo', 'accountType', 'xns']);
      expect(Object.keys(xns[0])).toEqual(['date', 'chqNo', 'narration', 'amount', 'balance']);
      expect(xns.some((x: { amount: number }) => x.amount < 0)).toBe(true);
      expect(xns.some((x: { amount: number }) => x.amount > 0)).toBe(true);
      for (let i = 1; i < xns.length; i++) expect(xns[i].balance).toBeCloseTo(xns[i - 1].balance + xns[i].amount, 2);
      const totalCredit = xns
        .filter((x: { amount: number }) => x.amount > 0)
        .reduce((a: number, x: { amount: number }) => a + x.amount, 0);
      expect(sr.summaryInfo.total.totalCredit).toBeCloseTo(totalCredit, 2);
      expect(sr.summaryInfo.total.credits).toBe(xns.filter((x: { amount: number }) => x.amount > 0).length);
    } finally {
      await s.close();
    }
  });

  it('stuck sessions never become ready; failed sessions end failed with an error message', async () => {
    let t = T0;
    const s = await startSandbox({ rate: { account: null }, now: () => t, bsaReadyAfterMs: 100 });
    try {
      await post(s, '/bsa/status_check', { user_id: 'u1', aa_session_id: 'bsa-stuck' });
      await post(s, '/bsa/status_check', { user_id: 'u1', aa_session_id: 'bsa-failed' });
      t += 3_600_000;
      const stuck = await post(s, '/bsa/status_check', { user_id: 'u1', aa_session_id: 'bsa-stuck' });
      expect(stuck.json).toMatchObject({ ready_for_fetch_data: false, status: 'processing', error: null });
      expect((await post(s, '/bsa/fetch_data', { user_id: 'u1', aa_session_id: 'bsa-stuck' })).status).toBe(409);
      const failed = await post(s, '/bsa/status_check', { user_id: 'u1', aa_session_id: 'bsa-failed' });
      expect(failed.json).toMatchObject({ ready_for_fetch_data: false, status: 'failed' });
      expect(typeof failed.json.error.message).toBe('string');
      const fd = await post(s, '/bsa/fetch_data', { user_id: 'u1', aa_session_id: 'bsa-failed' });
      expect(fd.status).toBe(409);
      expect(fd.json.detail.error).toMatch(/^bsa session is not ready for fetch_data: /);
    } finally {
      await s.close();
    }
  });

  it('unknown sessions: the quoted errors, user_id "null"', async () => {
    for (const path of ['/bsa/status_check', '/bsa/fetch_data']) {
      const r = await post(sb, path, { user_id: 'u1', aa_session_id: 'unknownX' });
      expect(r.status).toBe(404);
      expect(r.json).toEqual({
        detail: {
          error: 'no bsa sessions found for this user and aa_session_id',
          request_id: r.json.detail.request_id,
          user_id: 'null',
        },
      });
    }
    const files = await post(sb, '/bsa/fetch_uploaded', { user_id: 'u1', aa_session_id: 'unknownX' });
    expect(files.status).toBe(404);
    expect(files.json.detail).toMatchObject({
      error: 'no valid uploaded files found for this user and aa_session_id',
      user_id: 'null',
    });
    const nofiles = await post(sb, '/bsa/fetch_uploaded', { user_id: 'u1', aa_session_id: 'bsa-nofiles' });
    expect(nofiles.status).toBe(404);
    expect(nofiles.json.detail).toMatchObject({
      error: 'no valid uploaded files found for this user and aa_session_id',
      user_id: 'u1',
    });
  });

  it('fetch_uploaded lists one file per statement; twoacc sessions have two accounts', async () => {
    const r = await post(sb, '/bsa/fetch_uploaded', { user_id: 'u1', aa_session_id: 'bsa-twoacc-1' });
    expect(r.status).toBe(200);
    expect(Object.keys(r.json)).toEqual(['request_id', 'user_id', 'aa_session_id', 'files']);
    expect(r.json.files).toHaveLength(2);
    for (const f of r.json.files) {
      expect(Object.keys(f)).toEqual(['name', 'generated_name', 'uploaded_at', 'file_password', 'url']);
      expect(f.uploaded_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
      expect(f.url.startsWith(`${sb.url}/__files/`)).toBe(true);
      expect((await request(f.url)).statusCode).toBe(200);
    }
    let t = T0;
    const s = await startSandbox({ rate: { account: null }, now: () => t, bsaReadyAfterMs: 0 });
    try {
      await post(s, '/bsa/status_check', { user_id: 'u1', aa_session_id: 'bsa-twoacc-1' });
      t += 1;
      const data = await post(s, '/bsa/fetch_data', { user_id: 'u1', aa_session_id: 'bsa-twoacc-1' });
      expect(data.json.service_response.accountXns).toHaveLength(2);
      expect(data.json.service_response.statementdetails).toHaveLength(2);
      expect(data.json.service_response.accountXns[0].accountNo).not.toBe(
        data.json.service_response.accountXns[1].accountNo,
      );
    } finally {
      await s.close();
    }
  });
});
