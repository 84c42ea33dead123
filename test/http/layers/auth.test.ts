import { describe, expect, it } from 'vitest';
import { auth } from '../../../src/http/layers/auth.js';
import type { HttpResponse } from '../../../src/http/transport.js';
import { attempt, scripted } from './attempt.js';

const ok = (): HttpResponse => ({ status: 200, headers: {}, text: '{}' });

describe('auth layer', () => {
  it('adds the client id, the token and the content type to an attempt without headers', async () => {
    const next = scripted([ok]);
    await auth('cid', 'tok-secret')(next)(attempt());
    expect(next.seen[0].request.headers).toEqual({
      'x-client-id': 'cid',
      'x-auth-token': 'tok-secret',
      'content-type': 'application/json',
    });
    expect(next.seen[0].request.path).toBe('/x');
    expect(next.seen[0].request.body).toBe('{}');
  });

  it("keeps a request's own headers, and its credentials win over any of the same name", async () => {
    const next = scripted([ok]);
    await auth('cid', 'tok-secret')(next)(
      attempt({ request: { path: '/y', body: '1', headers: { 'x-trace': 't1', 'x-auth-token': 'forged' } } }),
    );
    expect(next.seen[0].request.headers).toEqual({
      'x-trace': 't1',
      'x-client-id': 'cid',
      'x-auth-token': 'tok-secret',
      'content-type': 'application/json',
    });
  });

  it("the attempt above it never holds the token: a new request goes down, the caller's is left as it was", async () => {
    const next = scripted([ok]);
    const a = attempt();
    await auth('cid', 'tok-secret')(next)(a);
    expect(JSON.stringify(a)).not.toContain('tok-secret');
    expect(next.seen[0]).not.toBe(a);
  });

  it('passes the answer and the failure of the layer below through unchanged', async () => {
    const res = ok();
    const next = scripted<HttpResponse>([
      () => res,
      () => {
        throw new Error('reset');
      },
    ]);
    const layer = auth('cid', 'tok')(next);
    expect(await layer(attempt())).toBe(res);
    await expect(layer(attempt())).rejects.toThrow('reset');
  });
});
