/** Shared helpers of the sandbox tests: a started sandbox and a tiny JSON client over undici. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { startSandbox, type Sandbox, type SandboxOptions } from '../src/index.js';

export interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  readonly json: any;
}

export function authHeaders(sb: Sandbox): Record<string, string> {
  return { 'x-client-id': sb.clientId, 'x-auth-token': sb.authToken, 'content-type': 'application/json' };
}

export async function call(
  sb: Sandbox,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = authHeaders(sb),
): Promise<Reply> {
  const res = await request(sb.url + path, {
    method: method as 'POST',
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, text, json };
}

export const post = (sb: Sandbox, path: string, body?: unknown, headers?: Record<string, string>) =>
  call(sb, 'POST', path, body, headers);

export async function withSandbox<T>(opts: SandboxOptions, fn: (sb: Sandbox) => Promise<T>): Promise<T> {
  const sb = await startSandbox({ rate: { workflow: null, bureau: null, account: null }, ...opts });
  try {
    return await fn(sb);
  } finally {
    await sb.close();
  }
}

const FIXTURES = fileURLToPath(new URL('./fixtures/reports/', import.meta.url));

/** A report fixture as base64 (the wire form of raw_data / bureau_raw_json). */
export function reportB64(file: string): string {
  return Buffer.from(readFileSync(FIXTURES + file, 'utf8'), 'utf8').toString('base64');
}

export const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

/** The personal fields of bureau_mobile_bre's "bureau fetched by the workflow" shape (fake values). */
export const PERSONAL = {
  pan_number: 'ABCDE1234F',
  name_aadhar: 'TEST PERSON',
  address_aadhar: '1 TEST ROAD',
  state_aadhar: 'Karnataka',
  city_aadhar: 'Bengaluru',
  pincode_aadhar: '560001',
  phone: '9000000000',
  pan_name: 'TEST PERSON',
  dob: '1990-01-01',
  profession: 'salaried',
  salary_source: 'bank',
  loan_purpose: 'personal',
  income_type: 'salary',
  gender: 'F',
};

/** A caller-supplied bank_data object (decision spec 2.6) with salary credits and an EMI each month. */
export function bankData(months = 3, salary = 40_000, emi = 5_000): Record<string, unknown> {
  const tx: Record<string, unknown>[] = [];
  let bal = 10_000;
  for (let m = 1; m <= months; m++) {
    const mm = String(m).padStart(2, '0');
    bal += salary;
    tx.push({
      txnId: `T${m}A`,
      type: 'CREDIT',
      amount: salary,
      currentBalance: String(bal),
      transactionTimestamp: `2025-${mm}-01 10:00:00`,
      narration: `NEFT-ACME TECHNOLOGIES-SALARY ${mm}`,
    });
    bal -= emi;
    tx.push({
      txnId: `T${m}B`,
      type: 'DEBIT',
      amount: emi,
      currentBalance: String(bal),
      transactionTimestamp: `2025-${mm}-05 06:00:00`,
      narration: 'ACH D- TEST FINANCE-EMI',
    });
    bal -= 12_000;
    tx.push({
      txnId: `T${m}C`,
      type: 'DEBIT',
      amount: 12_000,
      currentBalance: String(bal),
      transactionTimestamp: `2025-${mm}-15 18:00:00`,
      narration: 'UPI/DR/123/GROCER',
    });
  }
  return {
    metadata: {
      currency: 'INR',
      bank_name: 'Test Bank',
      ifsc_code: 'TEST0000001',
      account_type: 'SAVINGS',
      employer_name: 'ACME',
      account_number: 'XXXXXXXX0001',
      account_holder_name: 'TEST PERSON',
      statement_fetch_date: '2025-04-01',
      statement_start_date: '2025-01-01',
      statement_end_date: '2025-03-31',
    },
    transaction_data: tx,
  };
}
