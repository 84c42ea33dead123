/**
 * The account stage kinds through the real HTTP client (retry -> limit -> time-out -> auth) against the
 * built-in sandbox: request bodies the service accepts, error bodies mapped to row errors, polling a
 * session that never becomes ready, and secrets kept out of results.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type ServiceClient } from '../../src/http/chain.js';
import { PacedLimiter } from '../../src/limits/paced.js';
import { startSandbox, type Sandbox } from '@bre-batch/sandbox';
import { aaFetchKind } from '../../src/stages/aa-fetch.js';
import { aaReportKind } from '../../src/stages/aa-report.js';
import { bsaFetchKind } from '../../src/stages/bsa-fetch.js';
import type { ServiceCall, StageKind } from '../../src/stages/types.js';
import { context, row, stage } from './helpers.js';

let sandbox: Sandbox;
let client: ServiceClient;
let call: ServiceCall;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, bsaReadyAfterMs: 150, rate: { account: null } });
  const limiter = new PacedLimiter({ service: 'account', rate: null, concurrency: 4 });
  const target = { baseUrl: sandbox.urls.account, timeoutMs: 5000, limiter, connections: 4 };
  client = createClient({
    clientId: sandbox.clientId,
    authToken: sandbox.authToken,
    maxAttempts: 2,
    signal: new AbortController().signal,
    targets: { workflow: target, bureau: target, account: target },
    sleep: async () => {},
  });
  call = (path, body, o) => client.call('account', path, body, o);
});

afterAll(async () => {
  await client?.close();
  await sandbox?.close();
});

/** prepare + execute one row; returns the output or the thrown error. */
async function runKind<O>(
  kind: StageKind<O, any>,
  data: Record<string, unknown>,
  options: Record<string, unknown> = {},
) {
  const st = stage(kind, options);
  const ctx = context();
  const prep = await kind.prepare(row(data), st, ctx);
  if (!prep.ok) throw new Error(`prepare: ${JSON.stringify(prep.errors)}`);
  return kind.execute(prep.value, call, st, ctx).catch((e: unknown) => e as Error);
}

const H1 = '3fa85f64-5717-4562-b3fc-2c963f66afa6';
const H2 = '9b2d3c1e-0f4a-4b7c-8d6e-1a2b3c4d5e6f';
const AA = { user_id: 'USER9', aa_session_id: 'sess9', date_from: '2024-01-01', date_to: '2024-02-29' };
const FAST = { poll_interval_ms: 20, poll_max_interval_ms: 100, ready_timeout_ms: 3000 };

describe('account stage kinds against the sandbox', () => {
  it('aa_fetch single consent: accepted body, transactions in the one schema', async () => {
    const out = await runKind(aaFetchKind, AA);
    if (out instanceof Error) throw out;
    expect(out.calls).toBe(1);
    expect(out.result).toMatchObject({
      success: true,
      consents_count: 1,
      accounts_count: 1,
      transactions_status: 'ok',
    });
    expect(out.transactions!.length).toBeGreaterThan(10);
    expect(out.result.transactions_count).toBe(out.transactions!.length);
    for (const t of out.transactions!) {
      expect(t.source).toBe('aa');
      expect(t.timestamp! >= '2024-01-01' && t.timestamp! < '2024-03-01').toBe(true);
      expect(t.amount).toBeGreaterThanOrEqual(0);
      expect(typeof t.balance).toBe('number');
    }
  });

  it('aa_fetch multi-consent: one call per handle, two accounts kept apart', async () => {
    const out = await runKind(aaFetchKind, { ...AA, aa_session_id: 'multi-sess9', consent_handles: `${H1};${H2}` });
    if (out instanceof Error) throw out;
    expect(out.calls).toBe(2);
    expect(out.result.accounts_count).toBe(2);
    expect(new Set(out.transactions!.map((t) => t.account)).size).toBe(2);
  });

  it('aa_fetch errors from the service become row errors with the service message', async () => {
    expect(await runKind(aaFetchKind, { ...AA, aa_session_id: 'unknown-9' })).toMatchObject({
      code: 'ACCOUNT_ERROR',
      status: 404,
    });
    expect(await runKind(aaFetchKind, { ...AA, aa_session_id: 'multi-x' })).toMatchObject({ code: 'ACCOUNT_ERROR' });
  });

  it('aa_report: the link only in secrets', async () => {
    await runKind(aaFetchKind, AA);
    const out = await runKind(aaReportKind, AA);
    if (out instanceof Error) throw out;
    expect(out.secrets).toHaveLength(1);
    expect(out.secrets![0].name).toBe('report_url');
    expect(JSON.stringify(out.result)).not.toContain(out.secrets![0].value);
    expect(out.result.report_available).toBe(true);
  });

  it('bsa_fetch: polls until ready, fetch_uploaded secrets kept apart, two accounts', async () => {
    const out = await runKind(
      bsaFetchKind,
      { user_id: 'USER9', aa_session_id: 'twoacc-9' },
      { ...FAST, fetch_uploaded: true },
    );
    if (out instanceof Error) throw out;
    expect(out.result.status_checks).toBeGreaterThan(1);
    expect(out.calls).toBe((out.result.status_checks as number) + 2);
    expect(out.result.accounts_count).toBe(2);
    expect(new Set(out.transactions!.map((t) => t.account)).size).toBe(2);
    expect(out.secrets!.length).toBeGreaterThan(0);
    const text = JSON.stringify(out.result);
    for (const s of out.secrets!) expect(text).not.toContain(s.value);
  });

  it.each([
    ['stuck', 'NOT_READY'],
    ['failed', 'ACCOUNT_ERROR'],
    ['unknown', 'ACCOUNT_ERROR'],
  ])('bsa_fetch %s session -> %s', async (kind, code) => {
    const out = await runKind(
      bsaFetchKind,
      { user_id: 'USER9', aa_session_id: `${kind}-9` },
      { ...FAST, ready_timeout_ms: 400 },
    );
    expect(out).toMatchObject({ code });
  });
});
