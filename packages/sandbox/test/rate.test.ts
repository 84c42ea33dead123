/** 429 above the limit: a strict sliding window per caller IP per service, the referee of rate benchmarks. */
import { describe, expect, it } from 'vitest';
import { startSandbox, SANDBOX_LIMITS } from '../src/index.js';
import { post, withSandbox } from './helpers.js';

const location = {
  user_id: 'u1',
  reference_id: 'r1',
  input_data: { lead_id: 'l1', latitude: 12.9716, longitude: 77.5946 },
};

describe('rate limit', () => {
  it('documents the defaults: workflow 500/min, bureau 1000/min, account 300/min', () => {
    expect(SANDBOX_LIMITS).toEqual({
      workflow: { limit: 500, windowMs: 60_000 },
      bureau: { limit: 1000, windowMs: 60_000 },
      account: { limit: 300, windowMs: 60_000 },
    });
  });

  it('limit 5 per 1000 ms: 5 pass, the 6th gets 429 with Retry-After, passes again after the window', async () => {
    let t = 1_000_000;
    await withSandbox({ rate: { workflow: { limit: 5, windowMs: 1000 } }, now: () => t }, async (sb) => {
      const path = `/execute/${sb.clientId}/location_bre`;
      for (let i = 0; i < 5; i++) {
        expect((await post(sb, path, location)).status).toBe(200);
        t += 100;
      }
      // t = +500: the first arrival (at +0) leaves the window at +1000.
      const refused = await post(sb, path, location);
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.json).toEqual({ detail: 'Too Many Requests' });
      t += 499; // +999: still inside
      expect((await post(sb, path, location)).status).toBe(429);
      t += 1; // +1000: the first arrival is out, one slot frees
      expect((await post(sb, path, location)).status).toBe(200);
      expect((await post(sb, path, location)).status).toBe(429);
      sb.clock.advance(1000); // the sandbox clock moves the window too
      for (let i = 0; i < 5; i++) expect((await post(sb, path, location)).status).toBe(200);
      const st = sb.stats().services.workflow;
      expect(st).toMatchObject({
        requests: 14,
        sent429: 3,
        throttled: 3,
        maxInWindow: 5,
        rate: { limit: 5, windowMs: 1000 },
      });
      expect(st.byStatus).toEqual({ 200: 11, 429: 3 });
      // admitted at +0, +100, +200, +300, +400, +1000, then five at +2000: the tightest 6 in a row span
      // exactly the window (+0 to +1000, +1000 to +2000), the referee's "margin left" of 0 ms
      expect(st).toMatchObject({
        admitted: 11,
        firstAdmittedAt: 1_000_000,
        lastAdmittedAt: 1_002_000,
        tightestSpanMs: 1000,
      });
    });
  });

  it('keeps a window per service: the bureau limit does not consume workflow slots', async () => {
    const t = 0;
    await withSandbox(
      { rate: { workflow: { limit: 1, windowMs: 60_000 }, bureau: { limit: 1, windowMs: 60_000 } }, now: () => t },
      async (sb) => {
        expect((await post(sb, `/execute/${sb.clientId}/location_bre`, location)).status).toBe(200);
        expect((await post(sb, '/api/bureau', {})).status).toBe(422);
        expect((await post(sb, '/api/bureau', {})).status).toBe(429);
        expect((await post(sb, `/execute/${sb.clientId}/location_bre`, location)).status).toBe(429);
        expect((await post(sb, '/aa/fetch_data', {})).status).toBe(422); // account has its default limit
      },
    );
  });

  it('Retry-After says how many seconds until a slot frees', async () => {
    let t = 0;
    await withSandbox({ rate: { account: { limit: 2, windowMs: 60_000 } }, now: () => t }, async (sb) => {
      await post(sb, '/bsa/status_check', { user_id: 'u', aa_session_id: 's' });
      t = 10_000;
      await post(sb, '/bsa/status_check', { user_id: 'u', aa_session_id: 's' });
      t = 12_500;
      const r = await post(sb, '/bsa/status_check', { user_id: 'u', aa_session_id: 's' });
      expect(r.status).toBe(429);
      expect(r.headers['retry-after']).toBe('48'); // 60 000 - 12 500 = 47.5 s, rounded up
    });
  });

  it('counts 401s toward the window (the limit is per caller, before credentials) and setRate changes it live', async () => {
    const sb = await startSandbox({ rate: { workflow: { limit: 2, windowMs: 60_000 } } });
    try {
      const bad = { 'content-type': 'application/json' };
      expect((await post(sb, `/execute/${sb.clientId}/location_bre`, location, bad)).status).toBe(401);
      expect((await post(sb, `/execute/${sb.clientId}/location_bre`, location, bad)).status).toBe(401);
      expect((await post(sb, `/execute/${sb.clientId}/location_bre`, location)).status).toBe(429);
      sb.setRate('workflow', null);
      for (let i = 0; i < 10; i++)
        expect((await post(sb, `/execute/${sb.clientId}/location_bre`, location)).status).toBe(200);
      expect(sb.stats().services.workflow.rate).toBeNull();
      expect(() => sb.setRate('workflow', { limit: 0, windowMs: 10 })).toThrow(/Expected rate of workflow/);
      sb.setRate('workflow', { limit: 1.5, windowMs: 1000 }); // as `run --rate workflow=1.5/s` may pass it
      expect(sb.stats().services.workflow.rate).toEqual({ limit: 3, windowMs: 2000 });
    } finally {
      await sb.close();
    }
  });

  it('holds exactly under concurrent bursts (no more than the limit admitted)', async () => {
    await withSandbox({ rate: { workflow: { limit: 50, windowMs: 60_000 } } }, async (sb) => {
      const results = await Promise.all(
        Array.from({ length: 120 }, () => post(sb, `/execute/${sb.clientId}/location_bre`, location)),
      );
      expect(results.filter((r) => r.status === 200)).toHaveLength(50);
      expect(results.filter((r) => r.status === 429)).toHaveLength(70);
      expect(sb.stats().services.workflow.maxInWindow).toBe(50);
    });
  });
});
