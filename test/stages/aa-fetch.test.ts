import { describe, expect, it } from 'vitest';
import { BreError } from '@bre-batch/core/errors';
import { aaFetchKind, type AaFetchPrepared } from '../../src/stages/aa-fetch.js';
import { getStageKind } from '../../src/stages/index.js';
import { aaFiObject, aaResponse, aaTransaction } from '../normalise/account-fixtures.js';
import { context, fakeCall, row, stage } from './helpers.js';

const H1 = '3fa85f64-5717-4562-b3fc-2c963f66afa6';
const H2 = '9b2d3c1e-0f4a-4b7c-8d6e-1a2b3c4d5e6f';
const base = {
  reference_id: 'R1',
  user_id: 'USER1',
  aa_session_id: 'SESS1',
  date_from: '2024-01-01',
  date_to: '2024-03-31',
};

async function prepare(data: Record<string, unknown>, options: Record<string, unknown> = {}) {
  const ctx = context();
  const result = await aaFetchKind.prepare(row(data), stage(aaFetchKind, options), ctx);
  return { result, ctx };
}

async function prepared(
  data: Record<string, unknown>,
  options: Record<string, unknown> = {},
): Promise<AaFetchPrepared> {
  const { result } = await prepare(data, options);
  if (!result.ok) throw new Error(`prepare failed: ${JSON.stringify(result.errors)}`);
  return result.value;
}

describe('aa_fetch registration and options', () => {
  it('is registered through the stage index, on the account service', () => {
    expect(getStageKind('aa_fetch')).toBe(aaFetchKind);
    expect(aaFetchKind.service).toBe('account');
  });

  it('has documented defaults and refuses unknown options', () => {
    expect(aaFetchKind.optionsSchema.parse({})).toEqual({ generate_insights: true, max_range_months: 6 });
    expect(() => aaFetchKind.optionsSchema.parse({ generate_insight: false })).toThrow();
    expect(() => aaFetchKind.optionsSchema.parse({ max_range_months: 0 })).toThrow();
  });
});

describe('aa_fetch prepare', () => {
  it('builds the spec body with API-form dates (single consent: no consent_handle)', async () => {
    const value = await prepared(base);
    expect(value.bodies).toEqual([
      {
        user_id: 'USER1',
        aa_session_id: 'SESS1',
        datetimerangefrom: '01/01/2024 12:00:00 AM',
        datetimerangeto: '03/31/2024 11:59:59 PM',
        generate_insights: true,
      },
    ]);
  });

  it('accepts the API columns as they are, and generate_insights=false', async () => {
    const value = await prepared(
      {
        user_id: 'U',
        aa_session_id: 'S',
        datetimerangefrom: '01/01/2024 12:00:00 AM',
        datetimerangeto: '01/31/2024 12:30:00 PM',
      },
      { generate_insights: false },
    );
    expect(value.bodies[0]).toMatchObject({
      datetimerangefrom: '01/01/2024 12:00:00 AM',
      datetimerangeto: '01/31/2024 12:30:00 PM',
      generate_insights: false,
    });
  });

  it('one body per distinct consent handle (multi-consent), from either column', async () => {
    const value = await prepared({ ...base, consent_handle: H1, consent_handles: `${H2}; ${H1}` });
    expect(value.bodies.map((b) => b.consent_handle)).toEqual([H1, H2]);
    const json = await prepared({ ...base, consent_handles: [H1, H2] });
    expect(json.bodies).toHaveLength(2);
  });

  it.each([
    ['missing aa_session_id', { aa_session_id: '' }, 'aa_session_id'],
    ['missing user_id', { user_id: undefined }, 'user_id'],
    ['user_id with spaces', { user_id: 'A B' }, 'user_id'],
    ['user_id an object', { user_id: { a: 1 } }, 'user_id'],
    ['missing date_from', { date_from: '' }, 'date_from'],
    ['bad date_to', { date_to: '31/03/2024' }, 'date_to'],
    ['impossible date', { date_from: '2024-02-30' }, 'date_from'],
    ['from after to', { date_from: '2024-04-01' }, 'date_to'],
    ['from equal to', { date_from: '2024-03-31T10:00:00', date_to: '2024-03-31T10:00:00' }, 'date_to'],
    ['consent handle not a UUID', { consent_handle: 'abc' }, 'consent_handle'],
    ['one of the handles not a UUID', { consent_handles: `${H1};nope` }, 'consent_handles'],
    ['handles cell a number', { consent_handles: 5 }, 'consent_handles'],
  ])('%s -> field error on %s, no call', async (_name, over, field) => {
    const { result } = await prepare({ ...base, ...over });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((e) => e.field)).toContain(field);
    for (const e of result.errors) expect(e.message).toMatch(/^Expected /);
  });

  it('reports every broken field of a row at once', async () => {
    const { result } = await prepare({ reference_id: 'R', date_from: 'x', consent_handle: 'y' });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.errors.map((e) => e.field).sort()).toEqual([
        'aa_session_id',
        'consent_handle',
        'date_from',
        'date_to',
        'user_id',
      ]);
    }
  });

  it('says which values were wrong, in "Expected X, got Y" form', async () => {
    const { result } = await prepare({ ...base, date_from: '2024-05-01' });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.errors[0].message).toBe(
        'Expected a date_to later than date_from, got date_from 05/01/2024 12:00:00 AM and date_to 03/31/2024 11:59:59 PM',
      );
    }
  });

  it.each([
    ['6 months exactly: no warning', '2024-01-01', '2024-06-30', {}, 0],
    ['over 6 months: a warning, not an error', '2024-01-01', '2024-07-15', {}, 1],
    ['a year with max_range_months 12: no warning', '2024-01-01', '2024-12-31', { max_range_months: 12 }, 0],
  ])('%s', async (_name, from, to, options, warnings) => {
    const { result, ctx } = await prepare({ ...base, date_from: from, date_to: to }, options);
    expect(result.ok).toBe(true);
    expect(ctx.warnings).toHaveLength(warnings);
    if (warnings) expect(ctx.warnings[0]).toContain('6 months');
  });
});

describe('aa_fetch execute', () => {
  it('single consent: one call, summary result and transactions', async () => {
    const value = await prepared(base);
    const call = fakeCall(() =>
      aaResponse([aaFiObject('XXXX1234', [aaTransaction(), aaTransaction({ txnId: 'T2' })])]),
    );
    const out = await aaFetchKind.execute(value, call, stage(aaFetchKind), context());
    expect(call.calls).toEqual([{ path: '/aa/fetch_data', body: value.bodies[0] }]);
    expect(out.calls).toBe(1);
    expect(out.transactions).toHaveLength(2);
    expect(out.result).toMatchObject({
      request_id: 'REQ-AA-1',
      accounts_count: 1,
      transactions_count: 2,
      consents_count: 1,
    });
    expect(out.secrets).toBeUndefined();
  });

  it('multi-consent: N calls, one per handle, accounts kept apart', async () => {
    const value = await prepared({ ...base, consent_handles: `${H1}|${H2}` });
    const call = fakeCall((_p, body) =>
      aaResponse([aaFiObject(body.consent_handle === H1 ? 'XXXX1111' : 'XXXX2222', [aaTransaction()])], {
        request_id: `REQ-${String(body.consent_handle).slice(0, 4)}`,
      }),
    );
    const out = await aaFetchKind.execute(value, call, stage(aaFetchKind), context());
    expect(call.calls.map((c) => c.body.consent_handle)).toEqual([H1, H2]);
    expect(out.calls).toBe(2);
    expect(out.transactions?.map((t) => t.account)).toEqual(['XXXX1111', 'XXXX2222']);
    expect(out.result).toMatchObject({
      request_id: 'REQ-3fa8;REQ-9b2d',
      consents_count: 2,
      accounts_count: 2,
      'account.maskedAccNumber': 'XXXX1111',
      'account.2.maskedAccNumber': 'XXXX2222',
    });
  });

  it('an error from the service (e.g. unknown session) fails the row and stops further calls', async () => {
    const value = await prepared({ ...base, consent_handles: `${H1};${H2}` });
    const call = fakeCall(() => {
      throw new BreError('ACCOUNT_ERROR', 'no aa session found', { status: 404 });
    });
    await expect(aaFetchKind.execute(value, call, stage(aaFetchKind), context())).rejects.toMatchObject({
      code: 'ACCOUNT_ERROR',
    });
    expect(call.calls).toHaveLength(1);
  });

  it.each([
    ['success=false', aaResponse([], { success: false }), 'ACCOUNT_ERROR'],
    ['an array body', [1, 2], 'BAD_RESPONSE'],
    ['a text body', 'ok', 'BAD_RESPONSE'],
  ])('a 200 with %s is a row error %s', async (_name, body, code) => {
    const value = await prepared(base);
    await expect(
      aaFetchKind.execute(
        value,
        fakeCall(() => body),
        stage(aaFetchKind),
        context(),
      ),
    ).rejects.toMatchObject({ code });
  });

  it('an unknown provider shape is a success with transactions_status saying so', async () => {
    const value = await prepared(base);
    const out = await aaFetchKind.execute(
      value,
      fakeCall(() => aaResponse([], { service_response: { v2: {} } })),
      stage(aaFetchKind),
      context(),
    );
    expect(out.transactions).toEqual([]);
    expect(out.result.transactions_status).toBe('unrecognised_shape');
  });
});
