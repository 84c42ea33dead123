import { describe, expect, it } from 'vitest';
import {
  AA_FETCH_COLUMNS,
  BSA_FETCH_COLUMNS,
  normaliseAaFetch,
  normaliseBsaFetch,
} from '../../src/normalise/account-summary.js';
import { isPersonalKey, maskAccountNumber } from '../../src/normalise/account-personal.js';
import { expectDeclared } from '../helpers/declared.js';
import { aaFiObject, aaResponse, aaTransaction, bsaResponse, bsaXn } from './account-fixtures.js';

const PERSONAL_VALUES = ['Ramesh', '9876543210', 'ABCDE1234F', 'MG Road', '@example.com', '1985-02-03', '080-1234567'];

function expectNoPersonalData(result: Record<string, unknown>): void {
  const text = JSON.stringify(result);
  for (const v of PERSONAL_VALUES) expect(text).not.toContain(v);
  for (const key of Object.keys(result)) expect(key).not.toMatch(/holder|customerInfo|pan$|email|mobile/i);
}

describe('normaliseAaFetch', () => {
  it('summarises one spec-shaped response', () => {
    const { result, transactions } = normaliseAaFetch([
      aaResponse([aaFiObject('XXXXXXXX1234', [aaTransaction(), aaTransaction({ txnId: 'T2', type: 'CREDIT' })])]),
    ]);
    expect(transactions).toHaveLength(2);
    expect(result).toMatchObject({
      request_id: 'REQ-AA-1',
      service: 'finvu',
      success: true,
      consent_status: 'ACCEPTED',
      fi_request_status: 'ready',
      consents_count: 1,
      accounts_count: 1,
      transactions_count: 2,
      transactions_status: 'ok',
      transactions_skipped: 0,
      current_balance_total: 50000,
      'account.maskedAccNumber': 'XXXXXXXX1234',
      'account.fipId': 'HDFC-FIP',
      'account.fipName': 'HDFC Bank',
      'account.type': 'deposit',
      'account.currentBalance': 50000,
      'account.currency': 'INR',
      'account.balanceDateTime': '2024-03-01T09:00:00+05:30',
      'account.accountType': 'SAVINGS',
      'account.ifsc': 'HDFC0000001',
      'account.status': 'ACTIVE',
      'account.currentODLimit': 0,
      'account.pendingTxnsCount': 1,
      'account.transactionsCount': 2,
      'account.transactionsStartDate': '2024-01-01',
      'account.transactionsEndDate': '2024-03-01',
      'insights.bank_name': 'HDFC Bank',
      'insights.account_number': 'XXXXXXXX1234',
      'insights.account_current_balance': 50000,
      'insights.fetch_txn_data': true,
    });
    expectDeclared(result, AA_FETCH_COLUMNS);
  });

  it('never copies holder data (Profile.Holders, insights.account_holder_*)', () => {
    const { result } = normaliseAaFetch([aaResponse([aaFiObject('XXXX1', [aaTransaction()])])]);
    expectNoPersonalData(result);
    expect(Object.keys(result).filter((k) => k.includes('account_holder'))).toEqual([]);
  });

  it('merges several consents (multi-consent) keeping accounts and insights apart', () => {
    const first = aaResponse([aaFiObject('XXXX1111', [aaTransaction()])]);
    const second = aaResponse(
      [
        aaFiObject('XXXX2222', [aaTransaction(), aaTransaction({ txnId: 'T9' })], {
          Summary: { currentBalance: '1000.5', currency: 'INR' },
        }),
      ],
      {
        request_id: 'REQ-AA-2',
        insights: { bank_name: 'ICICI Bank', account_number: '000111222333', account_holder_name: 'Ramesh Kumar' },
      },
    );
    const { result, transactions } = normaliseAaFetch([first, second]);
    expect(transactions.map((t) => t.account)).toEqual(['XXXX1111', 'XXXX2222', 'XXXX2222']);
    expect(result).toMatchObject({
      request_id: 'REQ-AA-1;REQ-AA-2',
      consents_count: 2,
      accounts_count: 2,
      transactions_count: 3,
      consent_status: 'ACCEPTED',
      current_balance_total: 51000.5,
      'account.maskedAccNumber': 'XXXX1111',
      'account.transactionsCount': 1,
      'account.2.maskedAccNumber': 'XXXX2222',
      'account.2.transactionsCount': 2,
      'account.2.currentBalance': 1000.5,
      'insights.bank_name': 'HDFC Bank',
      'insights.2.bank_name': 'ICICI Bank',
      'insights.2.account_number': 'XXXXXXXX2333',
    });
    expectNoPersonalData(result);
  });

  it('success is false when any consent failed, null when none says', () => {
    expect(normaliseAaFetch([aaResponse([]), aaResponse([], { success: false })]).result.success).toBe(false);
    expect(normaliseAaFetch([aaResponse([], { success: 'yes' })]).result.success).toBeNull();
  });

  it('an unknown service_response shape gives a result saying so, not a crash', () => {
    const { result, transactions } = normaliseAaFetch([
      aaResponse([], { service_response: { other: 1 }, insights: undefined }),
    ]);
    expect(transactions).toEqual([]);
    expect(result).toMatchObject({
      transactions_status: 'unrecognised_shape',
      accounts_count: 0,
      transactions_count: 0,
      current_balance_total: null,
      consent_status: null,
    });
  });

  it('a missing balance makes the total null (not a partial sum)', () => {
    const r = aaResponse([aaFiObject('XXXX1', []), aaFiObject('XXXX2', [], { Summary: { currentBalance: 'n/a' } })]);
    const { result } = normaliseAaFetch([r]);
    expect(result.current_balance_total).toBeNull();
    expect(result['account.2.currentBalance']).toBeNull();
  });
});

describe('normaliseBsaFetch', () => {
  const acc = (accountNo: string, xns: unknown[]) => ({ accountNo, accountType: 'SAVINGS', xns });

  it('summarises a spec-shaped response', () => {
    const { result, transactions } = normaliseBsaFetch(
      bsaResponse([acc('XXXXXX5678', [bsaXn(), bsaXn({ amount: -10 })])]),
    );
    expect(transactions).toHaveLength(2);
    expect(result).toMatchObject({
      request_id: 'REQ-BSA-1',
      status: 'completed',
      statement_count: 1,
      statement_status: 'VERIFIED',
      accounts_count: 1,
      transactions_count: 2,
      transactions_status: 'ok',
      suspicious_bank_estatements: false,
      'account.accountNo': 'XXXXXX5678',
      'account.accountType': 'SAVINGS',
      'account.xnsStartDate': '2024-01-01',
      'account.xnsEndDate': '2024-03-31',
      'account.transactionsCount': 2,
      'summary.instName': 'HDFC Bank',
      'summary.accNo': 'XXXXXX5678',
      'summary.accType': 'SAVINGS',
      'summary.fullMonthCount': 3,
      'summary.total.totalCredit': 150000,
      'summary.total.balAvg': 25000.5,
      'summary.average.totalCredit': 50000,
      'summary.average.salaries': 3,
    });
    expectDeclared(result, BSA_FETCH_COLUMNS);
    expectNoPersonalData(result);
  });

  it.each([
    ['true', true],
    ['false', false],
    ['TRUE', true],
    [true, true],
    ['maybe', null],
    [undefined, null],
  ])('suspiciousBankEStatements.status %j -> %j', (status, expected) => {
    const r = bsaResponse([]);
    const sr = r.service_response as Record<string, any>;
    sr.fCUAnalysis.possibleFraudIndicators.suspiciousBankEStatements.status = status;
    expect(normaliseBsaFetch(r).result.suspicious_bank_estatements).toBe(expected);
  });

  it('two accounts (twoacc) stay apart', () => {
    const { result } = normaliseBsaFetch(
      bsaResponse([acc('XXXX1111', [bsaXn()]), acc('XXXX2222', [bsaXn(), bsaXn()])]),
    );
    expect(result).toMatchObject({
      accounts_count: 2,
      transactions_count: 3,
      'account.accountNo': 'XXXX1111',
      'account.transactionsCount': 1,
      'account.2.accountNo': 'XXXX2222',
      'account.2.transactionsCount': 2,
    });
  });

  it('masks an unmasked summary account number and drops personal keys the analyser adds', () => {
    const r = bsaResponse([]);
    const sr = r.service_response as Record<string, any>;
    sr.summaryInfo.accNo = '50100012345678';
    sr.summaryInfo.name = 'Ramesh Kumar';
    sr.summaryInfo.newMetric = '12.5';
    const { result } = normaliseBsaFetch(r);
    expect(result['summary.accNo']).toBe('XXXXXXXXXX5678');
    expect(result['summary.newMetric']).toBe('12.5');
    expectNoPersonalData(result);
  });

  it.each([null, 'x', 42, {}, { service_response: [] }])('never throws on %j', (input) => {
    const { result, transactions } = normaliseBsaFetch(input);
    expect(transactions).toEqual([]);
    expect(result.transactions_status).toBe('unrecognised_shape');
  });
});

describe('personal data helpers', () => {
  it.each([
    ['account_holder_name', true],
    ['account_holder_dob', true],
    ['pan', true],
    ['email', true],
    ['name', true],
    ['bank_name', false],
    ['account_number', false],
    ['ifsc_code', false],
    ['customerInfo', true],
  ])('isPersonalKey(%s) = %s', (key, expected) => {
    expect(isPersonalKey(key)).toBe(expected);
  });

  it.each([
    ['XXXXXXXX1234', 'XXXXXXXX1234'],
    ['123456789012', 'XXXXXXXX9012'],
    ['1234', '1234'],
    ['**** 5678', '**** 5678'],
  ])('maskAccountNumber(%s) = %s', (input, expected) => {
    expect(maskAccountNumber(input)).toBe(expected);
  });
});
