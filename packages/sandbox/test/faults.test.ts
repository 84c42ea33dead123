/** Fault injection (CONTRACT sandbox row: --faults, --latency-ms, --seed) and a prompt close(). */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { startSandbox } from '../src/index.js';
import { waitFor } from '../../../test/helpers/wait.js';
import { authHeaders, call, post, withSandbox } from './helpers.js';

const location = {
  user_id: 'u1',
  reference_id: 'r1',
  input_data: { lead_id: 'l1', latitude: 12.9716, longitude: 77.5946 },
};
const aaBody = {
  user_id: 'u1',
  aa_session_id: 's1',
  datetimerangefrom: '01/01/2025 12:00:00 AM',
  datetimerangeto: '03/31/2025 11:59:59 PM',
};

describe('fault injection', () => {
  it('429: Too Many Requests with Retry-After: 1', async () => {
    await withSandbox({ faults: { 429: 1 } }, async (sb) => {
      const r = await post(sb, `/execute/${sb.clientId}/location_bre`, location);
      expect(r.status).toBe(429);
      expect(r.headers['retry-after']).toBe('1');
      expect(sb.stats().services.workflow).toMatchObject({ sent429: 1, throttled: 0, faults: { 429: 1 } });
    });
  });

  it('503 in each service error shape', async () => {
    await withSandbox({ faults: { 503: 1 } }, async (sb) => {
      expect((await post(sb, `/execute/${sb.clientId}/location_bre`, location)).json).toEqual({
        detail: 'Service Unavailable',
      });
      expect((await post(sb, '/api/bureau', {})).json).toEqual({ detail: 'Service Unavailable' });
      const a = await post(sb, '/aa/fetch_data', aaBody);
      expect(a.status).toBe(503);
      expect(a.json).toEqual({ error: { type: 'service_unavailable', detail: 'Service Unavailable' } });
      // Faults never touch control paths.
      expect((await call(sb, 'GET', '/__sandbox/stats')).status).toBe(200);
    });
  });

  it('reset: the socket is destroyed without an answer; the server keeps serving', async () => {
    await withSandbox({ faults: { reset: 1 } }, async (sb) => {
      await expect(post(sb, `/execute/${sb.clientId}/location_bre`, location)).rejects.toThrow();
      expect(sb.stats().services.workflow.faults.reset).toBe(1);
      sb.setFaults({});
      expect((await post(sb, `/execute/${sb.clientId}/location_bre`, location)).status).toBe(200);
    });
  });

  it('slow: hangs slowMs, then answers normally', async () => {
    await withSandbox({ faults: { slow: 1 }, slowMs: 300 }, async (sb) => {
      const start = Date.now();
      const r = await post(sb, `/execute/${sb.clientId}/location_bre`, location);
      expect(Date.now() - start).toBeGreaterThanOrEqual(290);
      expect(r.status).toBe(200);
      expect(r.json.output_data.rules_output.final_decision.Decision).toBeDefined();
    });
  });

  it('malformed: 200 with a truncated body that is not JSON', async () => {
    await withSandbox({ faults: { malformed: 1 } }, async (sb) => {
      for (const [path, body] of [
        [`/execute/${sb.clientId}/location_bre`, location],
        ['/aa/fetch_data', aaBody],
      ] as const) {
        const r = await post(sb, path, body);
        expect(r.status).toBe(200);
        expect(r.text.length).toBeGreaterThan(0);
        expect(() => JSON.parse(r.text)).toThrow();
        expect(r.text.startsWith('{')).toBe(true);
      }
    });
  });

  it('empty and html: what a proxy answers, a 200 with no body or with its maintenance page; the service is not called', async () => {
    await withSandbox({ faults: { empty: 1 } }, async (sb) => {
      const r = await post(sb, `/execute/${sb.clientId}/location_bre`, location);
      expect([r.status, r.text]).toEqual([200, '']);
      expect(sb.stats().services.workflow.faults.empty).toBe(1);
    });
    await withSandbox({ faults: { html: 1 } }, async (sb) => {
      const r = await post(sb, '/aa/fetch_data', aaBody);
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toMatch(/^text\/html/);
      expect(r.text).toMatch(/^<!DOCTYPE html>.*maintenance/i);
      expect(sb.stats().services.account.faults.html).toBe(1);
    });
  });

  it('trickle: the headers at once, then the body a byte every trickleMs; a client that hangs up is counted as cut', async () => {
    await withSandbox({ faults: { trickle: 1 }, trickleMs: 50 }, async (sb) => {
      const ac = new AbortController();
      const res = await request(`${sb.url}/execute/${sb.clientId}/location_bre`, {
        method: 'POST',
        headers: authHeaders(sb),
        body: JSON.stringify(location),
        signal: ac.signal,
      });
      expect(res.statusCode).toBe(200);
      const length = Number(res.headers['content-length']);
      expect(length).toBeGreaterThan(100);
      // the first bytes of the body come one at a time
      const chunks: Buffer[] = [];
      for await (const chunk of res.body) {
        chunks.push(chunk as Buffer);
        if (chunks.length === 3) break;
      }
      expect(chunks.map((c) => c.length)).toEqual([1, 1, 1]);
      expect(Buffer.concat(chunks).toString()).toMatch(/^\{"\w$/);
      ac.abort();
      await waitFor(() => sb.stats().services.workflow.trickles.cut === 1, 10_000, 'the trickle to be counted as cut');
      expect(sb.stats().services.workflow).toMatchObject({
        faults: { trickle: 1 },
        trickles: { cut: 1, completed: 0 },
      });
    });
  });

  it('trickle: a client that waits gets the whole answer', async () => {
    await withSandbox({ faults: { trickle: 1 }, trickleMs: 0 }, async (sb) => {
      // bad credentials: a short answer (401), trickled like any other
      const r = await post(sb, `/execute/${sb.clientId}/location_bre`, location, {
        ...authHeaders(sb),
        'x-auth-token': 'wrong',
      });
      expect(r.status).toBe(401);
      expect(r.json).toMatchObject({ detail: 'Invalid client credentials' });
      expect(sb.stats().services.workflow.trickles).toEqual({ cut: 0, completed: 1 });
    });
  });

  it('is reproducible with a seed, and draws faults at about the configured rates', async () => {
    const faults = { 429: 0.2, 503: 0.2, malformed: 0.2 };
    const sequence = async (seed: number | string) =>
      withSandbox({ faults, seed }, async (sb) => {
        const out: string[] = [];
        for (let i = 0; i < 60; i++) {
          const r = await post(sb, `/execute/${sb.clientId}/location_bre`, location);
          out.push(r.status === 200 && r.json === undefined ? 'malformed' : String(r.status));
        }
        return out;
      });
    const a = await sequence(42);
    expect(await sequence(42)).toEqual(a);
    expect(await sequence('another')).not.toEqual(a);
    const count = (k: string) => a.filter((x) => x === k).length;
    for (const k of ['429', '503', 'malformed', '200']) expect(count(k)).toBeGreaterThan(3);
  });

  it('latencyMs delays every answer', async () => {
    await withSandbox({ latencyMs: 150 }, async (sb) => {
      const start = Date.now();
      expect((await post(sb, '/api/bureau', {})).status).toBe(422);
      expect(Date.now() - start).toBeGreaterThanOrEqual(140);
    });
  });

  it('setFaults validates its input', async () => {
    await withSandbox({}, async (sb) => {
      expect(() => sb.setFaults({ 429: 0.7, 503: 0.7 })).toThrow(
        'Expected fault probabilities summing to at most 1, got 1.4',
      );
    });
  });
});

describe('close()', () => {
  it('closes without waiting for hung slow requests or idle keep-alive sockets', async () => {
    // The requests would hang for longer than the test may run: a close() that waited for them never returns.
    const sb = await startSandbox({ faults: { slow: 1 }, slowMs: 600_000 });
    const hung = Promise.allSettled(
      [1, 2, 3].map(() =>
        request(`${sb.url}/execute/${sb.clientId}/location_bre`, {
          method: 'POST',
          headers: authHeaders(sb),
          body: JSON.stringify(location),
        }),
      ),
    );
    await waitFor(() => sb.stats().services.workflow.faults.slow === 3, 10_000, 'the three requests to hang');
    await sb.close();
    const results = await hung;
    // Cut off, not answered.
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
    await expect(request(`${sb.url}/api/bureau`, { method: 'POST' })).rejects.toThrow();
  });
});
