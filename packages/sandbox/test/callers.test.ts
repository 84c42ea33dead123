/**
 * The sandbox's window is per caller address: two loopback source addresses each get the full
 * limit, the stats count each caller on its own (its busiest window included), and a caller can be blocked
 * (its connections destroyed) through the control path, as a test of an egress address going away does.
 */
import { Client } from 'undici';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../src/index.js';
import { authHeaders, call, withSandbox } from './helpers.js';

const location = {
  user_id: 'u1',
  reference_id: 'r1',
  input_data: { lead_id: 'l1', latitude: 12.9716, longitude: 77.5946 },
};

/** One workflow call leaving from `localAddress`: its status, or the error's code when the socket was destroyed. */
async function from(sb: Sandbox, localAddress: string): Promise<number | string> {
  const client = new Client(sb.url, { localAddress });
  try {
    const res = await client.request({
      method: 'POST',
      path: `/execute/${sb.clientId}/location_bre`,
      headers: authHeaders(sb),
      body: JSON.stringify(location),
    });
    await res.body.text();
    return res.statusCode;
  } catch (err) {
    return (err as { code?: string }).code ?? 'error';
  } finally {
    await client.destroy();
  }
}

describe('per caller address', () => {
  it('each caller has its own window and its own counts', async () => {
    const t = 5_000_000;
    await withSandbox({ rate: { workflow: { limit: 2, windowMs: 1000 } }, now: () => t }, async (sb) => {
      const a = [await from(sb, '127.0.0.2'), await from(sb, '127.0.0.2'), await from(sb, '127.0.0.2')];
      const b = [await from(sb, '127.0.0.3'), await from(sb, '127.0.0.3')];
      expect(a).toEqual([200, 200, 429]);
      expect(b).toEqual([200, 200]);
      const st = sb.stats().services.workflow;
      expect(st.callers).toEqual({
        '127.0.0.2': { requests: 3, admitted: 2, throttled: 1, maxInWindow: 2, blocked: 0 },
        '127.0.0.3': { requests: 2, admitted: 2, throttled: 0, maxInWindow: 2, blocked: 0 },
      });
      expect(st.maxInWindow).toBe(2);
    });
  });

  it('a caller address with its own limit (callerRates) is throttled at it, the others at the service limit', async () => {
    const t = 5_000_000;
    await withSandbox(
      {
        rate: { workflow: { limit: 2, windowMs: 1000 } },
        callerRates: { '127.0.0.3': { workflow: { limit: 1, windowMs: 1000 } }, '127.0.0.4': { workflow: null } },
        now: () => t,
      },
      async (sb) => {
        const a = [await from(sb, '127.0.0.2'), await from(sb, '127.0.0.2'), await from(sb, '127.0.0.2')];
        const b = [await from(sb, '127.0.0.3'), await from(sb, '127.0.0.3')];
        const c = [await from(sb, '127.0.0.4'), await from(sb, '127.0.0.4'), await from(sb, '127.0.0.4')];
        expect(a).toEqual([200, 200, 429]);
        expect(b).toEqual([200, 429]);
        expect(c).toEqual([200, 200, 200]);
        // A change of the service's limit leaves the caller's own in place.
        sb.setRate('workflow', { limit: 5, windowMs: 1000 });
        expect([await from(sb, '127.0.0.3'), await from(sb, '127.0.0.3')]).toEqual([200, 429]);
        expect([await from(sb, '127.0.0.2'), await from(sb, '127.0.0.2'), await from(sb, '127.0.0.2')]).toEqual([
          200, 200, 200,
        ]);
      },
    );
  });

  it("POST /__sandbox/blocked destroys a caller's connections until an empty list unblocks it", async () => {
    await withSandbox({}, async (sb) => {
      const blocked = await call(sb, 'POST', '/__sandbox/blocked', { addresses: ['127.0.0.3'] }, {});
      expect(blocked.json).toEqual({ addresses: ['127.0.0.3'] });
      expect(await from(sb, '127.0.0.3')).toBe('UND_ERR_SOCKET');
      expect(await from(sb, '127.0.0.2')).toBe(200);
      expect(sb.stats().services.workflow.callers['127.0.0.3']).toMatchObject({ requests: 1, admitted: 0, blocked: 1 });
      expect((await call(sb, 'GET', '/__sandbox/blocked', undefined, {})).json).toEqual({ addresses: ['127.0.0.3'] });
      await call(sb, 'POST', '/__sandbox/blocked', { addresses: [] }, {});
      expect(await from(sb, '127.0.0.3')).toBe(200);
      const bad = await call(sb, 'POST', '/__sandbox/blocked', { address: 7 }, {});
      expect(bad.status).toBe(400);
      expect(bad.json.detail).toMatch(/^Expected \{"addresses": \["127.0.0.3", \.\.\.\]\}/);
    });
  });
});
