import { describe, expect, it } from 'vitest';
import { BreError } from '@bre-batch/core/errors';
import { bsaFetchKind, type BsaFetchPrepared } from '../../src/stages/bsa-fetch.js';
import { getStageKind } from '../../src/stages/index.js';
import { bsaResponse, bsaXn } from '../normalise/account-fixtures.js';
import { context, fakeCall, row, stage } from './helpers.js';

/** Small intervals so the real-timer polling stays fast. */
const FAST = { poll_interval_ms: 5, poll_max_interval_ms: 20, ready_timeout_ms: 2000 };

const status = (ready: boolean, over: Record<string, unknown> = {}) => ({
  request_id: 'REQ-S',
  user_id: 'U',
  aa_session_id: 'S',
  ready_for_fetch_data: ready,
  status: ready ? 'completed' : 'processing',
  error: null,
  ...over,
});
const data = () =>
  bsaResponse([{ accountNo: 'XXXX5678', accountType: 'SAVINGS', xns: [bsaXn(), bsaXn({ amount: -10 })] }]);

const FILE_URL = 'https://files.example.test/statement.pdf?X-Amz-Signature=0123456789abcdef';
const uploaded = () => ({
  request_id: 'REQ-U',
  user_id: 'U',
  aa_session_id: 'S',
  files: [
    {
      name: 'jan.pdf',
      generated_name: 'gen-3f9a8b7c6d5e',
      uploaded_at: '2024-03-01T10:00:00',
      file_password: 'Secr3tPass',
      url: FILE_URL,
    },
    {
      name: 'feb.pdf',
      generated_name: 'gen-0a1b2c3d4e5f',
      uploaded_at: '2024-03-01T10:01:00',
      file_password: '',
      url: `${FILE_URL}2`,
    },
  ],
});

async function prepared(options: Record<string, unknown> = {}): Promise<BsaFetchPrepared> {
  const r = await bsaFetchKind.prepare(
    row({ user_id: 'U', aa_session_id: 'S' }),
    stage(bsaFetchKind, options),
    context(),
  );
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.value;
}

async function run(answer: Parameters<typeof fakeCall>[0], options: Record<string, unknown> = FAST, ctx = context()) {
  const call = fakeCall(answer);
  const st = stage(bsaFetchKind, options);
  const out = await bsaFetchKind.execute(await prepared(options), call, st, ctx).catch((e: unknown) => e);
  return { out, call };
}

describe('bsa_fetch config', () => {
  it('is registered, with documented defaults', () => {
    expect(getStageKind('bsa_fetch')).toBe(bsaFetchKind);
    expect(bsaFetchKind.optionsSchema.parse({})).toEqual({
      poll_interval_ms: 1000,
      poll_max_interval_ms: 10_000,
      ready_timeout_ms: 120_000,
      fetch_uploaded: false,
      generate_insights: true,
    });
  });

  it('checkConfig refuses a max interval below the first', () => {
    expect(
      bsaFetchKind.checkConfig?.(stage(bsaFetchKind, { poll_interval_ms: 500, poll_max_interval_ms: 100 })),
    ).toHaveLength(1);
    expect(bsaFetchKind.checkConfig?.(stage(bsaFetchKind, {}))).toEqual([]);
  });

  it.each([
    [{ user_id: 'U' }, 'aa_session_id'],
    [{ aa_session_id: 'S' }, 'user_id'],
  ])('row %j -> error on %s', async (d, field) => {
    const r = await bsaFetchKind.prepare(row(d), stage(bsaFetchKind), context());
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.map((e) => e.field)).toEqual([field]);
  });
});

describe('bsa_fetch execute', () => {
  it('polls status_check until ready (each poll a call), then fetch_data', async () => {
    const { out, call } = await run((path, _b, n) => (path === '/bsa/status_check' ? status(n >= 3) : data()));
    expect(call.calls.map((c) => c.path)).toEqual([
      '/bsa/status_check',
      '/bsa/status_check',
      '/bsa/status_check',
      '/bsa/fetch_data',
    ]);
    expect(call.calls[0].body).toEqual({ user_id: 'U', aa_session_id: 'S' });
    expect(call.calls[3].body).toEqual({ user_id: 'U', aa_session_id: 'S', generate_insights: true });
    const o = out as Awaited<ReturnType<typeof bsaFetchKind.execute>>;
    expect(o.calls).toBe(4);
    expect(o.result).toMatchObject({ status_checks: 3, status: 'completed', transactions_count: 2, accounts_count: 1 });
    expect(o.transactions?.map((t) => t.type)).toEqual(['CREDIT', 'DEBIT']);
    expect(o.secrets).toBeUndefined();
    expect(o.result).not.toHaveProperty('files_count');
  });

  it("times out with NOT_READY (for --retry-errors) on the run's clock, and never calls fetch_data", async () => {
    // The run's clock moves 40 ms with each status answer: polls at 0, 40 and 80 ms, then 120 ms is past
    // the 100 ms limit. Had the stage ignored ready_timeout_ms, it would poll for two minutes of this clock.
    let t = Date.parse('2026-01-01T00:00:00Z');
    const ctx = context(() => new Date(t));
    const { out, call } = await run(
      () => {
        t += 40;
        return status(false);
      },
      { ...FAST, ready_timeout_ms: 100 },
      ctx,
    );
    expect(out).toBeInstanceOf(BreError);
    expect(out).toMatchObject({ code: 'NOT_READY' });
    expect((out as BreError).message).toContain('--retry-errors');
    expect(call.calls.map((c) => c.path)).toEqual(['/bsa/status_check', '/bsa/status_check', '/bsa/status_check']);
    expect((out as BreError).details).toEqual({ calls: 3 });
  });

  it.each([
    [
      'status failed',
      status(false, { status: 'failed', error: { message: 'statement could not be parsed' } }),
      'statement could not be parsed',
    ],
    ['status failed, no error object', status(false, { status: 'failed' }), "status 'failed'"],
    ['error object while processing', status(false, { error: { code: 'E42' } }), 'E42'],
  ])('%s -> ACCOUNT_ERROR, stops polling', async (_name, body, text) => {
    const { out, call } = await run(() => body);
    expect(out).toMatchObject({ code: 'ACCOUNT_ERROR' });
    expect((out as Error).message).toContain(text);
    expect(call.calls).toHaveLength(1);
  });

  it('stops polling when the run aborts during a wait', async () => {
    const ctx = context();
    // Aborted while the stage waits its hour before the second status check: only an abort that cuts the
    // wait short lets this test end.
    const answer = () => {
      setImmediate(() => ctx.abort.abort());
      return status(false);
    };
    const { out, call } = await run(
      answer,
      { poll_interval_ms: 3_600_000, poll_max_interval_ms: 3_600_000, ready_timeout_ms: 7_200_000 },
      ctx,
    );
    expect(out).toMatchObject({ code: 'INTERRUPTED' });
    expect(call.calls).toHaveLength(1);
  });

  it('fetch_uploaded: secrets out of the result, counts and names in', async () => {
    const { out, call } = await run(
      (path) =>
        path === '/bsa/status_check'
          ? status(true)
          : path === '/bsa/fetch_uploaded'
            ? uploaded()
            : { ...data(), echo: FILE_URL },
      { ...FAST, fetch_uploaded: true },
    );
    const o = out as Awaited<ReturnType<typeof bsaFetchKind.execute>>;
    expect(call.calls.map((c) => c.path)).toEqual(['/bsa/status_check', '/bsa/fetch_uploaded', '/bsa/fetch_data']);
    expect(o.calls).toBe(3);
    expect(o.result).toMatchObject({ files_count: 2, file_names: ['jan.pdf', 'feb.pdf'], status_checks: 1 });
    expect(o.secrets).toEqual([
      { name: 'file.1.url', value: FILE_URL },
      { name: 'file.1.file_password', value: 'Secr3tPass' },
      { name: 'file.1.generated_name', value: 'gen-3f9a8b7c6d5e' },
      { name: 'file.2.url', value: `${FILE_URL}2` },
      { name: 'file.2.generated_name', value: 'gen-0a1b2c3d4e5f' },
    ]);
    const text = JSON.stringify(o.result);
    for (const s of ['X-Amz-Signature', 'Secr3tPass', 'gen-3f9a8b7c6d5e', 'gen-0a1b2c3d4e5f'])
      expect(text).not.toContain(s);
  });

  it('generate_insights=false reaches fetch_data', async () => {
    const { call } = await run((path) => (path === '/bsa/status_check' ? status(true) : data()), {
      ...FAST,
      generate_insights: false,
    });
    expect(call.calls[1].body).toEqual({ user_id: 'U', aa_session_id: 'S', generate_insights: false });
  });

  it('an error from fetch_uploaded (no files) fails the row with its code and the calls made', async () => {
    const { out, call } = await run(
      (path) => {
        if (path === '/bsa/status_check') return status(true);
        throw new BreError('ACCOUNT_ERROR', 'no valid uploaded files found for this user and aa_session_id', {
          status: 404,
        });
      },
      { ...FAST, fetch_uploaded: true },
    );
    expect(out).toMatchObject({ code: 'ACCOUNT_ERROR', status: 404, details: { calls: 2 } });
    expect(call.calls).toHaveLength(2);
  });

  it.each([
    ['status failed', { ...data(), status: 'failed', error: { message: 'analysis failed' } }, 'ACCOUNT_ERROR'],
    ['not an object', 'oops', 'BAD_RESPONSE'],
  ])('fetch_data answering %s -> %s', async (_name, body, code) => {
    const { out } = await run((path) => (path === '/bsa/status_check' ? status(true) : body));
    expect(out).toMatchObject({ code });
  });

  it('an unknown analyser shape succeeds with transactions_status saying so', async () => {
    const { out } = await run((path) =>
      path === '/bsa/status_check'
        ? status(true)
        : { request_id: 'R', status: 'completed', error: null, service_response: { v9: 1 } },
    );
    const o = out as Awaited<ReturnType<typeof bsaFetchKind.execute>>;
    expect(o.transactions).toEqual([]);
    expect(o.result.transactions_status).toBe('unrecognised_shape');
  });

  it('two accounts (twoacc) are kept apart in transactions', async () => {
    const two = bsaResponse([
      { accountNo: 'XXXX1111', xns: [bsaXn()] },
      { accountNo: 'XXXX2222', xns: [bsaXn(), bsaXn({ amount: -3 })] },
    ]);
    const { out } = await run((path) => (path === '/bsa/status_check' ? status(true) : two));
    const o = out as Awaited<ReturnType<typeof bsaFetchKind.execute>>;
    expect(o.transactions?.map((t) => t.account)).toEqual(['XXXX1111', 'XXXX2222', 'XXXX2222']);
    expect(o.result.accounts_count).toBe(2);
  });
});

describe('bsa_fetch with a frozen run clock', () => {
  it('still ends (NOT_READY) instead of polling forever', async () => {
    const { out, call } = await run(
      () => status(false),
      { ...FAST, ready_timeout_ms: 50 },
      context(new Date('2024-01-01T00:00:00Z')),
    );
    expect(out).toMatchObject({ code: 'NOT_READY' });
    expect(call.calls).toHaveLength(50 / 5 + 2);
  });
});
