import { describe, expect, it } from 'vitest';
import { accountFeatures, classify } from '../src/logic/bank.js';
import { haversineKm, nearestPincode, pincodeCount } from '../src/logic/geo.js';
import { ROWS } from '../src/geo/pincode-table.js';
import { formatAaDateTime, istDate, istInstant, parseAaDateTime } from '../src/logic/time.js';
import { accountFor, balanceAt, monthTransactions, transactionsBetween } from '../src/logic/transactions.js';
import { parseXml, XmlError } from '../src/logic/xml.js';

describe('nearest pincode', () => {
  it('decodes a table of real pincodes', () => {
    expect(pincodeCount()).toBeGreaterThan(18_000);
  });
  it.each([
    // Well-known places: the nearest pincode lies in the right city and state.
    [28.6328, 77.2197, 'Delhi', /Delhi/],
    [19.076, 72.8777, 'Maharashtra', /Mumbai/],
    [12.9716, 77.5946, 'Karnataka', /Bangalore/],
    [13.0827, 80.2707, 'Tamil Nadu', /Chennai/],
    [17.385, 78.4867, 'Telangana', /Hyderabad/],
    [22.5726, 88.3639, 'West Bengal', /Kolkata/],
    [26.9124, 75.7873, 'Rajasthan', /Jaipur/],
  ])('(%f, %f) is in %s', (lat, lng, state, city) => {
    const p = nearestPincode(lat, lng)!;
    expect(p.state).toBe(state);
    expect(p.city).toMatch(city);
    expect(p.pincode).toMatch(/^\d{6}$/);
    expect(p.distanceKm).toBeLessThan(5);
  });
  it('finds nothing outside India', () => {
    expect(nearestPincode(51.5074, -0.1278)).toBeNull(); // London
    expect(nearestPincode(0, 0)).toBeNull();
    expect(nearestPincode(15, 65)).toBeNull(); // Arabian sea
  });
  it('agrees with a brute-force scan on random points', () => {
    let pin = 0;
    const all = ROWS.split(';').map((r) => {
      const [d, la, ln] = r.split(',').map(Number);
      pin += d;
      return { pin: String(pin), lat: la / 1e4, lng: ln / 1e4 };
    });
    let checked = 0;
    for (let i = 0; i < 60; i++) {
      const lat = 9 + ((i * 7919) % 2000) / 100;
      const lng = 73 + ((i * 104729) % 1500) / 100;
      let best = all[0];
      let bestKm = Infinity;
      for (const p of all) {
        const d = haversineKm(lat, lng, p.lat, p.lng);
        if (d < bestKm) {
          bestKm = d;
          best = p;
        }
      }
      const found = nearestPincode(lat, lng, 200);
      if (bestKm > 200) {
        expect(found).toBeNull();
        continue;
      }
      expect(found!.distanceKm).toBeCloseTo(bestKm, 9);
      if (found!.pincode !== best.pin) expect(found!.distanceKm).toBe(bestKm); // a tie
      checked++;
    }
    expect(checked).toBeGreaterThan(30);
  });
});

describe('xml reader', () => {
  it('reads elements, repeats, entities, CDATA and namespaces', () => {
    const doc = parseXml(
      '<?xml version="1.0"?><!-- c --><s:Env xmlns:s="x"><A>1 &amp; 2</A><B><C>x</C><C>y</C></B><D/><E attr="a>b"><![CDATA[<raw>]]></E></s:Env>',
    );
    expect(doc).toEqual({ Env: { A: '1 & 2', B: { C: ['x', 'y'] }, D: '', E: '<raw>' } });
  });
  it.each(['<a><b></a>', '<a>', 'text', '<a></a><b></b>', ''])('rejects %j', (text) => {
    expect(() => parseXml(text)).toThrow(XmlError);
  });
});

describe('AA date-times', () => {
  it('parses MM/DD/YYYY HH:MM:SS AM/PM as IST', () => {
    expect(parseAaDateTime('01/15/2025 12:00:00 AM')).toBe(istInstant(2025, 0, 15, 0, 0, 0));
    expect(parseAaDateTime('01/15/2025 12:30:00 PM')).toBe(istInstant(2025, 0, 15, 12, 30, 0));
    expect(parseAaDateTime('12/31/2025 11:59:59 PM')).toBe(istInstant(2025, 11, 31, 23, 59, 59));
    expect(formatAaDateTime(istInstant(2025, 6, 4, 13, 5, 6))).toBe('07/04/2025 01:05:06 PM');
  });
  it.each([
    '2025-01-15 10:00:00',
    '13/01/2025 10:00:00 AM',
    '02/30/2025 10:00:00 AM',
    '01/15/2025 13:00:00 PM',
    '01/15/2025 10:00:00',
  ])('rejects %s', (t) => {
    expect(parseAaDateTime(t)).toBeNull();
  });
});

describe('generated transactions', () => {
  const acc = accountFor('user1|session1');
  const from = istInstant(2025, 0, 1);
  const to = istInstant(2025, 5, 30, 23, 59, 59);

  it('are deterministic and the same whatever range asks for them', () => {
    const all = transactionsBetween(acc, from, to);
    expect(transactionsBetween(accountFor('user1|session1'), from, to)).toEqual(all);
    const march = transactionsBetween(acc, istInstant(2025, 2, 1), istInstant(2025, 2, 31, 23, 59, 59));
    expect(march.length).toBeGreaterThan(5);
    expect(all.filter((t) => istDate(t.ts).startsWith('2025-03'))).toEqual(march);
  });

  it('keep running balances consistent across months', () => {
    const all = transactionsBetween(acc, from, to);
    for (let i = 1; i < all.length; i++) {
      const t = all[i];
      const expected = all[i - 1].balance + (t.type === 'CREDIT' ? t.amount : -t.amount);
      expect(t.balance).toBeCloseTo(expected, 2);
      expect(t.ts).toBeGreaterThan(all[i - 1].ts);
      expect(t.amount).toBeGreaterThan(0);
      expect(t.balance).toBeGreaterThanOrEqual(0);
    }
    expect(balanceAt(acc, to)).toBe(all[all.length - 1].balance);
  });

  it('look like a salaried account: monthly salary credits, unique ids', () => {
    const salaried = [...Array(20).keys()].map((i) => accountFor(`u${i}|s`)).find((a) => a.employer !== null)!;
    const txns = transactionsBetween(salaried, from, to);
    const salaries = txns.filter((t) => t.kind === 'salary');
    expect(salaries.length).toBeGreaterThanOrEqual(5);
    expect(salaries.every((t) => t.type === 'CREDIT' && classify({ ...t }) === 'salary')).toBe(true);
    expect(new Set(txns.map((t) => t.txnId)).size).toBe(txns.length);
    expect(monthTransactions(salaried, 2025 * 12 + 2)).toBe(monthTransactions(salaried, 2025 * 12 + 2)); // cached
  });
});

describe('account features', () => {
  const t = (day: number, type: 'CREDIT' | 'DEBIT', amount: number, narration: string, balance: number) => ({
    ts: istInstant(2025, Math.floor(day / 31), (day % 31) + 1, 10),
    type,
    amount,
    narration,
    balance,
  });
  it('classifies salary, EMI, bounces and computes FOIR', () => {
    const txns = [
      t(0, 'CREDIT', 30_000, 'NEFT-ACME-SALARY JAN', 40_000),
      t(4, 'DEBIT', 6_000, 'ACH D- TEST FINANCE-EMI', 34_000),
      t(31, 'CREDIT', 30_000, 'NEFT-ACME-SALARY FEB', 64_000),
      t(35, 'DEBIT', 590, 'ACH DEBIT RETURN CHGS INSUFFICIENT FUNDS', 63_410),
      t(40, 'DEBIT', 1_000, 'UPI/DR/1/GROCER', 62_410),
    ];
    const f = accountFeatures(txns);
    expect(f).toMatchObject({
      months_of_data: 2,
      salary_months: 2,
      monthly_salary: 30_000,
      monthly_emi: 3_000,
      bounce_count: 1,
      income_estimate: 30_000,
      foir: 0.1,
      transaction_count: 5,
    });
    expect(f.average_balance).toBe(Math.round((40_000 + 34_000 + 64_000 + 63_410 + 62_410) / 5));
  });
  it('falls back to declared income (capped by credits) without salary', () => {
    const f = accountFeatures([t(0, 'CREDIT', 20_000, 'IMPS/CR/1/TRADERS', 20_000)], 50_000);
    expect(f.income_estimate).toBe(20_000);
    expect(accountFeatures([t(0, 'CREDIT', 20_000, 'IMPS/CR/1/TRADERS', 20_000)], 15_000).income_estimate).toBe(15_000);
  });
});
