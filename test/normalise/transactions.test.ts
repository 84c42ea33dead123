import { describe, expect, it } from 'vitest';
import {
  normaliseAaTransactions,
  normaliseBsaDate,
  normaliseBsaTransactions,
  normaliseDate,
  normaliseTimestamp,
} from '../../src/normalise/transactions.js';
import { aaFiObject, aaResponse, aaTransaction, bsaResponse, bsaXn } from './account-fixtures.js';

describe('normaliseTimestamp', () => {
  it.each([
    ['2024-01-05T10:15:00+05:30', '2024-01-05T10:15:00+05:30'],
    ['2024-01-05T10:15+05:30', '2024-01-05T10:15:00+05:30'],
    ['2024-01-05T10:15:00.123+0530', '2024-01-05T10:15:00.123+05:30'],
    ['2024-01-05T23:59:59Z', '2024-01-05T23:59:59Z'],
    ['2024-01-05t23:59:59z', '2024-01-05T23:59:59Z'],
    ['2024-01-05 08:00:00', '2024-01-05T08:00:00'],
    ['2024-01-05', '2024-01-05T00:00:00'],
    ['2024-02-30T10:00:00+05:30', null],
    ['2024-01-05T24:00:00+05:30', null],
    ['05/01/2024 10:15', null],
    ['', null],
    [null, null],
    [12345, null],
  ])('%j -> %j', (input, expected) => {
    expect(normaliseTimestamp(input)).toBe(expected);
  });
});

describe('normaliseDate / normaliseBsaDate', () => {
  it.each([
    ['2024-01-05', '2024-01-05', '2024-01-05'],
    ['2024-01-05T00:00:00+05:30', '2024-01-05', '2024-01-05'],
    ['05/01/2024', null, '2024-01-05'],
    ['05-01-2024', null, '2024-01-05'],
    ['31/02/2024', null, null],
    ['2023-02-29', null, null],
    ['junk', null, null],
    [undefined, null, null],
  ])('%j -> AA %j, BSA %j', (input, aa, bsa) => {
    expect(normaliseDate(input)).toBe(aa);
    expect(normaliseBsaDate(input)).toBe(bsa);
  });
});

describe('normaliseAaTransactions', () => {
  it('maps a spec-shaped transaction field by field', () => {
    const parsed = normaliseAaTransactions(aaResponse([aaFiObject('XXXXXXXX1234', [aaTransaction()])]));
    expect(parsed.status).toBe('ok');
    expect(parsed.skipped).toBe(0);
    expect(parsed.transactions).toEqual([
      {
        source: 'aa',
        account: 'XXXXXXXX1234',
        txn_id: 'TXN001',
        timestamp: '2024-01-05T10:15:00+05:30',
        value_date: '2024-01-05',
        type: 'DEBIT',
        amount: 1500.5,
        balance: 48499.5,
        mode: 'OTHERS',
        narration: 'UPI/PAYMENT/GROCERY',
      },
    ]);
  });

  it('keeps several accounts apart, in order', () => {
    const r = aaResponse([
      aaFiObject('XXXX1111', [aaTransaction({ txnId: 'a1' }), aaTransaction({ txnId: 'a2', type: 'CREDIT' })]),
      aaFiObject('XXXX2222', [aaTransaction({ txnId: 'b1' })]),
    ]);
    const parsed = normaliseAaTransactions(r);
    expect(parsed.transactions.map((t) => [t.account, t.txn_id, t.type])).toEqual([
      ['XXXX1111', 'a1', 'DEBIT'],
      ['XXXX1111', 'a2', 'CREDIT'],
      ['XXXX2222', 'b1', 'DEBIT'],
    ]);
  });

  it.each([
    ['numeric string balance', { transactionalBalance: '1,234.50' }, { balance: 1234.5 }],
    ['bad balance -> null, kept', { transactionalBalance: 'n/a' }, { balance: null }],
    ['missing balance -> null', { transactionalBalance: undefined }, { balance: null }],
    ['amount as string', { amount: '250.75' }, { amount: 250.75 }],
    ['negative amount made positive', { amount: -20 }, { amount: 20, type: 'DEBIT' }],
    ['lower-case type', { type: 'credit' }, { type: 'CREDIT' }],
    [
      'missing txnId/mode/narration',
      { txnId: undefined, mode: '', narration: null },
      { txn_id: null, mode: null, narration: null },
    ],
    ['datetime value date', { valueDate: '2024-01-06T00:00:00+05:30' }, { value_date: '2024-01-06' }],
    ['bad timestamp -> null, kept', { transactionTimestamp: 'yesterday' }, { timestamp: null }],
    ['numeric txnId', { txnId: 98765 }, { txn_id: '98765' }],
  ])('%s', (_name, over, expected) => {
    const parsed = normaliseAaTransactions(aaResponse([aaFiObject('XXXX1', [aaTransaction(over)])]));
    expect(parsed.transactions).toHaveLength(1);
    expect(parsed.transactions[0]).toMatchObject(expected);
  });

  it.each([
    ['unknown type', { type: 'OPENING' }],
    ['missing type', { type: undefined }],
    ['non-numeric amount', { amount: 'abc' }],
    ['missing amount', { amount: undefined }],
  ])('skips and counts a transaction with %s', (_name, over) => {
    const parsed = normaliseAaTransactions(aaResponse([aaFiObject('XXXX1', [aaTransaction(over), aaTransaction()])]));
    expect(parsed.transactions).toHaveLength(1);
    expect(parsed.skipped).toBe(1);
    expect(parsed.status).toBe('ok');
  });

  it('reads a single Transaction object (XML-to-JSON) and an Account wrapper', () => {
    const fi = aaFiObject('XXXX9', []);
    (fi.Transactions as Record<string, unknown>).Transaction = aaTransaction({ txnId: 'solo' });
    const parsed = normaliseAaTransactions(aaResponse([{ Account: fi }]));
    expect(parsed.transactions.map((t) => [t.account, t.txn_id])).toEqual([['XXXX9', 'solo']]);
  });

  it.each([
    ['account from linkedAccRef when no masked number', { maskedAccNumber: undefined }, 'ref-link'],
    ['numbered account when neither', { maskedAccNumber: undefined, linkedAccRef: undefined }, 'account-3'],
    ['unmasked number masked', { maskedAccNumber: '123456789012' }, 'XXXXXXXX9012'],
  ])('%s', (_name, over, account) => {
    const fi = aaFiObject('link', [aaTransaction()], over);
    const parsed = normaliseAaTransactions(aaResponse([fi]), 3);
    expect(parsed.transactions[0].account).toBe(account);
  });

  it.each([
    ['no service_response', { service_response: undefined }],
    ['service_response a string', { service_response: 'oops' }],
    ['other provider shape', { service_response: { accounts: [{ txns: [] }] } }],
    ['fetched_data without body', { service_response: { fetched_data: { header: {} } } }],
  ])('unknown shape (%s) -> no transactions, status says so', (_name, over) => {
    const parsed = normaliseAaTransactions(aaResponse([], over));
    expect(parsed).toEqual({ transactions: [], status: 'unrecognised_shape', skipped: 0 });
  });

  it.each([null, undefined, 42, 'text', [], {}])('never throws on %j', (input) => {
    expect(normaliseAaTransactions(input).transactions).toEqual([]);
  });

  it('an account without Transactions gives none, status ok', () => {
    const parsed = normaliseAaTransactions(aaResponse([aaFiObject('XXXX1', [], { Transactions: undefined })]));
    expect(parsed).toEqual({ transactions: [], status: 'ok', skipped: 0 });
  });
});

describe('normaliseBsaTransactions', () => {
  const acc = (accountNo: unknown, xns: unknown[]) => ({ accountNo, accountType: 'SAVINGS', xns });

  it('maps signed amounts to type and absolute amount, dates to midnight timestamps', () => {
    const parsed = normaliseBsaTransactions(
      bsaResponse([
        acc('XXXXXX5678', [
          bsaXn({ amount: 30000, balance: 45000 }),
          bsaXn({ date: '2024-01-06', amount: -1200.25, balance: 43799.75, narration: 'ATM WDL', chqNo: '000123' }),
          bsaXn({ date: '2024-01-07', amount: 0, balance: 43799.75, narration: 'ZERO' }),
        ]),
      ]),
    );
    expect(parsed.status).toBe('ok');
    expect(parsed.transactions.map(({ txn_id: _id, ...t }) => t)).toEqual([
      {
        source: 'bsa',
        account: 'XXXXXX5678',
        timestamp: '2024-01-05T00:00:00',
        value_date: null,
        type: 'CREDIT',
        amount: 30000,
        balance: 45000,
        mode: null,
        narration: 'SALARY JAN',
      },
      {
        source: 'bsa',
        account: 'XXXXXX5678',
        timestamp: '2024-01-06T00:00:00',
        value_date: null,
        type: 'DEBIT',
        amount: 1200.25,
        balance: 43799.75,
        mode: null,
        narration: 'ATM WDL',
      },
      {
        source: 'bsa',
        account: 'XXXXXX5678',
        timestamp: '2024-01-07T00:00:00',
        value_date: null,
        type: 'DEBIT',
        amount: 0,
        balance: 43799.75,
        mode: null,
        narration: 'ZERO',
      },
    ]);
  });

  it('gives deterministic, distinct txn ids (identical transactions told apart by occurrence)', () => {
    const xns = [bsaXn(), bsaXn(), bsaXn({ amount: -5 })];
    const a = normaliseBsaTransactions(bsaResponse([acc('XXXX1', xns)])).transactions.map((t) => t.txn_id);
    const b = normaliseBsaTransactions(
      bsaResponse([
        acc(
          'XXXX1',
          xns.map((x) => ({ ...x })),
        ),
      ]),
    ).transactions.map((t) => t.txn_id);
    expect(a).toEqual(b);
    expect(new Set(a).size).toBe(3);
    for (const id of a) expect(id).toMatch(/^bsa-[0-9a-f]{16}$/);
    const other = normaliseBsaTransactions(bsaResponse([acc('XXXX2', xns)])).transactions.map((t) => t.txn_id);
    expect(other[0]).not.toBe(a[0]);
  });

  it('keeps two accounts apart', () => {
    const parsed = normaliseBsaTransactions(
      bsaResponse([acc('XXXX1111', [bsaXn(), bsaXn({ amount: -10 })]), acc('XXXX2222', [bsaXn({ amount: 5 })])]),
    );
    expect(parsed.transactions.map((t) => t.account)).toEqual(['XXXX1111', 'XXXX1111', 'XXXX2222']);
  });

  it.each([
    ['bad balance -> null, kept', { balance: 'x' }, { balance: null }],
    ['numeric-string amount', { amount: '-99.5' }, { amount: 99.5, type: 'DEBIT' }],
    ['unparseable date -> null timestamp', { date: 'Jan 5' }, { timestamp: null }],
    ['DD/MM/YYYY date', { date: '05/01/2024' }, { timestamp: '2024-01-05T00:00:00' }],
    ['missing narration', { narration: undefined }, { narration: null }],
  ])('%s', (_name, over, expected) => {
    const parsed = normaliseBsaTransactions(bsaResponse([acc('XXXX1', [bsaXn(over)])]));
    expect(parsed.transactions[0]).toMatchObject(expected);
  });

  it('skips and counts transactions without a usable amount', () => {
    const parsed = normaliseBsaTransactions(bsaResponse([acc('XXXX1', [bsaXn({ amount: null }), 'junk', bsaXn()])]));
    expect(parsed.transactions).toHaveLength(1);
    expect(parsed.skipped).toBe(2);
  });

  it.each([
    ['account number missing', undefined, 'account-1'],
    ['unmasked account number', '50100012345678', 'XXXXXXXXXX5678'],
  ])('%s -> %s', (_name, accountNo, expected) => {
    const parsed = normaliseBsaTransactions(bsaResponse([acc(accountNo, [bsaXn()])]));
    expect(parsed.transactions[0].account).toBe(expected);
  });

  it.each([
    [
      'no accountXns',
      (r: Record<string, unknown>) => {
        delete (r.service_response as Record<string, unknown>).accountXns;
      },
    ],
    [
      'accountXns a string',
      (r: Record<string, unknown>) => {
        (r.service_response as Record<string, unknown>).accountXns = 'x';
      },
    ],
    [
      'no service_response',
      (r: Record<string, unknown>) => {
        delete r.service_response;
      },
    ],
  ])('unknown shape (%s) -> none, status says so', (_name, mutate) => {
    const r = bsaResponse([]);
    mutate(r);
    expect(normaliseBsaTransactions(r)).toEqual({ transactions: [], status: 'unrecognised_shape', skipped: 0 });
  });

  it('ignores extra keys the analyser may add', () => {
    const r = bsaResponse([{ ...acc('XXXX1', [bsaXn({ category: 'Salary', extra: { a: 1 } })]), newKey: [1, 2] }]);
    (r.service_response as Record<string, unknown>).futureSection = { a: 1 };
    expect(normaliseBsaTransactions(r).transactions).toHaveLength(1);
  });
});
