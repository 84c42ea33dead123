import { describe, expect, it } from 'vitest';
import { aaReportKind, type AaReportPrepared } from '../../src/stages/aa-report.js';
import { getStageKind } from '../../src/stages/index.js';
import { context, fakeCall, row, stage } from './helpers.js';

const URL = 'https://reports.example.test/aa/USER1/report.csv?X-Amz-Signature=abcdef0123456789';

async function prepared(
  data: Record<string, unknown>,
  options: Record<string, unknown> = {},
): Promise<AaReportPrepared> {
  const r = await aaReportKind.prepare(row(data), stage(aaReportKind, options), context());
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.value;
}

describe('aa_report', () => {
  it('is registered, with documented defaults', () => {
    expect(getStageKind('aa_report')).toBe(aaReportKind);
    expect(aaReportKind.optionsSchema.parse({})).toEqual({ generate_insights: true, fetch_current_report: false });
  });

  it.each([
    [{}, {}, { generate_insights: true, fetch_current_report: false }],
    [
      { fetch_current_report: true, generate_insights: false },
      {},
      { generate_insights: false, fetch_current_report: true },
    ],
    [{}, { fetch_current_report: 'yes' }, { generate_insights: true, fetch_current_report: true }],
    [
      { fetch_current_report: true },
      { fetch_current_report: 'false' },
      { generate_insights: true, fetch_current_report: false },
    ],
  ])('body from options %j and row %j', async (options, extra, expected) => {
    const value = await prepared({ user_id: 'USER1', aa_session_id: 'S1', ...extra }, options);
    expect(value.body).toEqual({ user_id: 'USER1', aa_session_id: 'S1', ...expected });
  });

  it.each([
    [{ user_id: 'U' }, 'aa_session_id'],
    [{ aa_session_id: 'S' }, 'user_id'],
    [{ user_id: 'U', aa_session_id: 'S', fetch_current_report: 'perhaps' }, 'fetch_current_report'],
  ])('broken row %j -> error on %s', async (data, field) => {
    const r = await aaReportKind.prepare(row(data), stage(aaReportKind), context());
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.map((e) => e.field)).toEqual([field]);
  });

  it('keeps report_url only in secrets (7-day expiry); the result never holds it', async () => {
    const value = await prepared({ user_id: 'USER1', aa_session_id: 'S1' });
    const call = fakeCall(() => ({
      report_url: URL,
      request_id: 'REQ-R1',
      insights: {
        user_id: 'USER1',
        request_id: 'REQ-R1',
        bank_name: 'HDFC Bank',
        account_number: 'XXXXXXXX1234',
        account_holder_name: 'Ramesh Kumar',
        echo: `download at ${URL}`,
      },
    }));
    const out = await aaReportKind.execute(value, call, stage(aaReportKind), context(new Date('2024-03-01T10:00:00Z')));
    expect(call.calls).toEqual([{ path: '/aa/retrieve_report', body: value.body }]);
    expect(out.calls).toBe(1);
    expect(out.secrets).toEqual([{ name: 'report_url', value: URL, expiresAt: '2024-03-08T10:00:00.000Z' }]);
    expect(out.result).toEqual({
      report_available: true,
      report_url_expires_at: '2024-03-08T10:00:00.000Z',
      request_id: 'REQ-R1',
      'insights.user_id': 'USER1',
      'insights.request_id': 'REQ-R1',
      'insights.bank_name': 'HDFC Bank',
      'insights.account_number': 'XXXXXXXX1234',
      'insights.echo': '[redacted]',
    });
    expect(JSON.stringify(out.result)).not.toContain('X-Amz-Signature');
    expect(out.transactions).toBeUndefined();
  });

  it.each([
    ['no report_url', { request_id: 'R' }],
    ['empty report_url', { report_url: '', request_id: 'R' }],
    ['report_url not a string', { report_url: { href: URL } }],
  ])('%s -> BAD_RESPONSE without the body in the message', async (_name, body) => {
    const value = await prepared({ user_id: 'U', aa_session_id: 'S' });
    const err = await aaReportKind
      .execute(
        value,
        fakeCall(() => body),
        stage(aaReportKind),
        context(),
      )
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'BAD_RESPONSE' });
    expect(String((err as Error).message)).not.toContain(URL);
  });
});
