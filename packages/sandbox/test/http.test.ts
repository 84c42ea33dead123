/** The HTTP surface: auth, allow-list, unknown paths and methods, bodies, keep-alive, control paths. */
import { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_AUTH_TOKEN, DEFAULT_CLIENT_ID, startSandbox, type Sandbox } from '../src/index.js';
import { waitFor } from '../../../test/helpers/wait.js';
import { authHeaders, call, post, withSandbox } from './helpers.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox({ rate: { workflow: null, bureau: null, account: null }, bodyLimitBytes: 4096 });
});
afterAll(async () => {
  await sb.close();
});

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

describe('defaults', () => {
  it('uses alphanumeric built-in credentials and one origin for all services', () => {
    expect(DEFAULT_CLIENT_ID).toMatch(/^[A-Za-z0-9]+$/);
    expect(DEFAULT_AUTH_TOKEN).toMatch(/^[A-Za-z0-9]+$/);
    expect(sb.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(sb.urls).toEqual({ workflow: sb.url, bureau: sb.url, account: sb.url });
  });
});

describe('authentication (401)', () => {
  const bad = (over: Record<string, string | undefined>) => {
    const h: Record<string, string> = { ...authHeaders(sb) };
    for (const [k, v] of Object.entries(over)) {
      if (v === undefined) delete h[k];
      else h[k] = v;
    }
    return h;
  };

  it.each([
    ['wrong token', { 'x-auth-token': 'nope' }],
    ['missing token', { 'x-auth-token': undefined }],
    ['wrong client id', { 'x-client-id': 'someoneelse' }],
    ['missing client id', { 'x-client-id': undefined }],
  ])('workflow and bureau: %s -> {"detail", "request_id"}', async (_n, over) => {
    for (const [path, body] of [
      [`/execute/${sb.clientId}/location_bre`, location],
      ['/api/bureau', {}],
    ] as const) {
      const r = await post(sb, path, body, bad(over));
      expect(r.status).toBe(401);
      expect(Object.keys(r.json)).toEqual(['detail', 'request_id']);
      expect(r.json.detail).toBe('Invalid client credentials');
      expect(r.json.request_id).toMatch(/^[a-z0-9]{32}$/);
    }
  });

  it('account: exactly {"error": {"type": "unauthorized", "detail": "Invalid client credentials"}}', async () => {
    for (const path of [
      '/aa/fetch_data',
      '/aa/retrieve_report',
      '/bsa/status_check',
      '/bsa/fetch_uploaded',
      '/bsa/fetch_data',
    ]) {
      const r = await post(sb, path, aaBody, bad({ 'x-auth-token': 'nope' }));
      expect(r.status).toBe(401);
      expect(r.text).toBe('{"error":{"type":"unauthorized","detail":"Invalid client credentials"}}');
    }
  });

  it('refuses a path client_id that differs from x-client-id (401, workflow shape)', async () => {
    const r = await post(sb, '/execute/otherclient/location_bre', location);
    expect(r.status).toBe(401);
    expect(r.json.detail).toBe('Invalid client credentials');
  });

  it('checks credentials before the body (a bad body with bad credentials is 401)', async () => {
    const r = await post(sb, '/api/bureau', '{not json', bad({ 'x-auth-token': 'nope' }));
    expect(r.status).toBe(401);
  });
});

describe('allow-list (403)', () => {
  it('answers callers outside the list with an HTML page titled 403 Forbidden, on every service', async () => {
    await withSandbox({ allow: ['10.0.0.0/8'] }, async (s) => {
      for (const path of [
        `/execute/${s.clientId}/location_bre`,
        '/api/bureau',
        '/aa/fetch_data',
        '/bsa/status_check',
        '/nowhere',
      ]) {
        const r = await post(s, path, location);
        expect(r.status).toBe(403);
        expect(r.headers['content-type']).toMatch(/^text\/html/);
        expect(r.text).toContain('<title>403 Forbidden</title>');
        expect(r.text).toContain('<h1>403 Forbidden</h1>');
      }
      // Control paths stay reachable from loopback so a test can still read the stats.
      const st = await call(s, 'GET', '/__sandbox/stats');
      expect(st.status).toBe(200);
      expect(st.json.services.workflow.byStatus['403']).toBe(1);
    });
  });
  it('serves callers inside the list', async () => {
    await withSandbox({ allow: ['127.0.0.1/32', '::1'] }, async (s) => {
      expect((await post(s, `/execute/${s.clientId}/location_bre`, location)).status).toBe(200);
    });
  });
});

describe('paths and methods', () => {
  it('404 JSON for unknown paths, in the service shape of the path', async () => {
    const a = await post(sb, '/nope', {});
    expect(a.status).toBe(404);
    expect(a.json).toEqual({ detail: 'Not Found' });
    const b = await post(sb, '/aa/nope', {});
    expect(b.status).toBe(404);
    expect(b.json).toEqual({ error: { type: 'not_found', detail: 'Not Found' } });
    const c = await post(sb, `/execute/${sb.clientId}/location_bre/extra`, location);
    expect(c.status).toBe(404);
  });
  it('404 for an unknown workflow endpoint', async () => {
    const r = await post(sb, `/execute/${sb.clientId}/payday_bre`, location);
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ detail: "workflow endpoint 'payday_bre' not found" });
  });
  it('405 with Allow: POST for other methods', async () => {
    for (const [method, path] of [
      ['GET', `/execute/${sb.clientId}/location_bre`],
      ['PUT', '/api/bureau'],
      ['GET', '/aa/fetch_data'],
      ['DELETE', '/bsa/status_check'],
    ]) {
      const r = await call(sb, method, path);
      expect(r.status).toBe(405);
      expect(r.headers.allow).toBe('POST');
    }
    expect((await call(sb, 'GET', '/aa/fetch_data')).json).toEqual({
      error: { type: 'method_not_allowed', detail: 'Method Not Allowed' },
    });
  });
});

describe('bodies', () => {
  const wf = () => `/execute/${sb.clientId}/location_bre`;
  it('malformed JSON -> 422 json_invalid (FastAPI shape; account shape on account paths)', async () => {
    const r = await post(sb, wf(), '{"user_id": "u1",');
    expect(r.status).toBe(422);
    expect(r.json.detail).toHaveLength(1);
    expect(r.json.detail[0]).toMatchObject({ type: 'json_invalid', msg: 'JSON decode error', input: {} });
    expect(r.json.detail[0].loc[0]).toBe('body');
    expect(typeof r.json.detail[0].loc[1]).toBe('number');
    expect(typeof r.json.detail[0].ctx.error).toBe('string');
    const a = await post(sb, '/aa/fetch_data', '{oops');
    expect(a.status).toBe(422);
    expect(a.json.error.type).toBe('validation_error');
    expect(a.json.error.detail[0].type).toBe('json_invalid');
  });
  it('empty body -> 422 missing body', async () => {
    const r = await post(sb, wf(), '');
    expect(r.status).toBe(422);
    expect(r.json.detail).toEqual([{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }]);
  });
  it('a JSON body that is not an object -> 422 model_attributes_type', async () => {
    const r = await post(sb, wf(), '[1,2]');
    expect(r.status).toBe(422);
    expect(r.json.detail).toEqual([
      {
        type: 'model_attributes_type',
        loc: ['body'],
        msg: 'Input should be a valid dictionary or object to extract fields from',
        input: [1, 2],
      },
    ]);
  });
  it('wrong content type -> 422 (the body is not read as JSON); no content type is read as JSON', async () => {
    const h = { ...authHeaders(sb), 'content-type': 'text/plain' };
    const r = await post(sb, wf(), JSON.stringify(location), h);
    expect(r.status).toBe(422);
    expect(r.json.detail[0]).toMatchObject({
      type: 'model_attributes_type',
      loc: ['body'],
      input: JSON.stringify(location),
    });
    const { 'content-type': _drop, ...noType } = authHeaders(sb);
    expect((await post(sb, wf(), JSON.stringify(location), noType)).status).toBe(200);
    expect(
      (
        await post(sb, wf(), JSON.stringify(location), {
          ...authHeaders(sb),
          'content-type': 'application/json; charset=utf-8',
        })
      ).status,
    ).toBe(200);
  });
  it('oversized body -> 413 in the service shape, and the server keeps serving', async () => {
    const big = { ...location, padding: 'x'.repeat(5000) };
    const r = await post(sb, wf(), big);
    expect(r.status).toBe(413);
    expect(r.json).toEqual({ detail: 'Request body too large: the limit is 4096 bytes' });
    const a = await post(sb, '/aa/fetch_data', { ...aaBody, padding: 'x'.repeat(5000) });
    expect(a.status).toBe(413);
    expect(a.json).toEqual({
      error: { type: 'payload_too_large', detail: 'Request body too large: the limit is 4096 bytes' },
    });
    expect((await post(sb, wf(), location)).status).toBe(200);
  });
  it('413 also for a chunked body without content-length', async () => {
    async function* gen() {
      for (let i = 0; i < 10; i++) yield Buffer.from('x'.repeat(1000));
    }
    const res = await request(`${sb.url}${wf()}`, {
      method: 'POST',
      headers: authHeaders(sb),
      body: Readable.from(gen()),
    });
    expect(res.statusCode).toBe(413);
    await res.body.text();
    expect((await post(sb, wf(), location)).status).toBe(200);
  });
});

describe('keep-alive', () => {
  it('serves many requests over one kept-alive connection', async () => {
    const agent = new Agent({ connections: 1, keepAliveTimeout: 10_000 });
    const sockets = new Set<unknown>();
    agent.on('connect', (_o, targets) => sockets.add(targets));
    try {
      for (let i = 0; i < 20; i++) {
        const res = await request(`${sb.url}/execute/${sb.clientId}/location_bre`, {
          method: 'POST',
          headers: authHeaders(sb),
          body: JSON.stringify(location),
          dispatcher: agent,
        });
        expect(res.statusCode).toBe(200);
        expect(res.headers.connection).not.toBe('close');
        await res.body.text();
      }
      expect(sockets.size).toBe(1);
    } finally {
      await agent.close();
    }
  });
});

describe('control paths', () => {
  it('stats, clock, faults and rate are readable and steerable without auth', async () => {
    await withSandbox({}, async (s) => {
      await post(s, `/execute/${s.clientId}/location_bre`, location);
      await post(s, '/api/bureau', {}, { 'content-type': 'application/json' });
      const st = await call(s, 'GET', '/__sandbox/stats', undefined, {});
      expect(st.json.services.workflow).toMatchObject({
        requests: 1,
        byStatus: { 200: 1 },
        sent429: 0,
        throttled: 0,
        maxInWindow: 1,
      });
      expect(st.json.services.bureau.byStatus).toEqual({ 401: 1 });
      const before = s.clock.now();
      const c = await call(
        s,
        'POST',
        '/__sandbox/clock',
        { advanceMs: 86_400_000 },
        { 'content-type': 'application/json' },
      );
      expect(c.status).toBe(200);
      expect(c.json.now).toBeGreaterThanOrEqual(before + 86_400_000);
      expect(s.clock.now()).toBeGreaterThanOrEqual(before + 86_400_000);
      const f = await call(s, 'POST', '/__sandbox/faults', { 503: 1 }, {});
      expect(f.json).toEqual({ 503: 1 });
      expect((await post(s, '/api/bureau', {})).status).toBe(503);
      const bad = await call(s, 'POST', '/__sandbox/faults', { 503: 3 }, {});
      expect(bad.status).toBe(400);
      expect(bad.json.detail).toBe('Expected a probability between 0 and 1 for fault 503, got 3');
      await call(s, 'POST', '/__sandbox/faults', {}, {});
      const rate = await call(s, 'POST', '/__sandbox/rate', { bureau: { limit: 1, windowMs: 60_000 } }, {});
      expect(rate.json.bureau).toEqual({ limit: 1, windowMs: 60_000 });
      expect((await post(s, '/api/bureau', {})).status).toBe(422);
      expect((await post(s, '/api/bureau', {})).status).toBe(429);
      expect((await call(s, 'POST', '/__sandbox/stats/reset', undefined, {})).json.services.bureau.requests).toBe(0);
      expect((await call(s, 'GET', '/__sandbox/nothing', undefined, {})).status).toBe(404);
      expect((await call(s, 'POST', '/__sandbox/clock', { advanceMs: -1 }, {})).status).toBe(400);
      expect((await call(s, 'DELETE', '/__sandbox/stats', undefined, {})).status).toBe(405);
    });
  });

  it('a throttling gateway (POST /__sandbox/throttle): every call 429 with its Retry-After, from the first call for forMs, then through', async () => {
    await withSandbox({}, async (s) => {
      const t = await call(s, 'POST', '/__sandbox/throttle', { forMs: 60_000, retryAfter: 0 }, {});
      expect(t.json).toEqual({ forMs: 60_000, retryAfter: 0, startedAt: null });
      for (let i = 0; i < 3; i += 1) {
        const r = await post(s, `/execute/${s.clientId}/location_bre`, location);
        expect(r.status).toBe(429);
        expect(r.headers['retry-after']).toBe('0');
      }
      expect(typeof (await call(s, 'GET', '/__sandbox/throttle', undefined, {})).json.startedAt).toBe('number');
      // the window is on the sandbox's clock: past it, calls go through
      s.clock.advance(60_000);
      expect((await post(s, `/execute/${s.clientId}/location_bre`, location)).status).toBe(200);
      const st = s.stats().services.workflow;
      expect(st).toMatchObject({ gatewayThrottled: 3, sent429: 3, throttled: 0 });
      expect((await call(s, 'POST', '/__sandbox/throttle', { forMs: 'long' }, {})).status).toBe(400);
    });
  });

  it('an endless answer: a 200 whose body never ends, until the client hangs up', async () => {
    await withSandbox({ faults: { endless: 1 } }, async (s) => {
      const res = await request(`${s.url}/execute/${s.clientId}/location_bre`, {
        method: 'POST',
        headers: authHeaders(s),
        body: JSON.stringify(location),
      });
      expect(res.statusCode).toBe(200);
      let read = 0;
      for await (const chunk of res.body) {
        read += (chunk as Buffer).length;
        if (read > 4 * 1024 * 1024) break;
      }
      expect(read).toBeGreaterThan(4 * 1024 * 1024);
      await waitFor(() => s.stats().services.workflow.endlessBytes >= read, 5000, 'the sandbox to count what it sent');
      expect(s.stats().services.workflow.faults.endless).toBe(1);
    });
  });
});
