import { describe, expect, it } from 'vitest';
import { BreError } from '@bre-batch/core/errors';
import { firstCalls } from '../../../src/http/layers/first-calls.js';
import type { Attempt } from '../../../src/http/layers/types.js';
import { attempt } from './attempt.js';

/** A dispatch whose answers the test gives one by one, in any order. */
function manual() {
  const pending: { a: Attempt; ok: (v: unknown) => void; fail: (e: unknown) => void }[] = [];
  const next = (a: Attempt) => new Promise<unknown>((ok, fail) => pending.push({ a, ok, fail }));
  return { next, pending };
}
/** For calls that must fail: a success is the test's failure. */
const succeeded = (v: unknown): never => {
  throw new Error(`expected a failure, got ${JSON.stringify(v)}`);
};
const undocumented = (status = 400) =>
  new BreError('HTTP_ERROR', `workflow service answered HTTP ${status}: No required SSL certificate was sent`, {
    service: 'workflow',
    status,
  });

describe('first-calls layer', () => {
  it("the same undocumented status on the first calls: each fails SERVICE_MISCONFIGURED (a stop), none as the row's own error", async () => {
    const { next, pending } = manual();
    const layer = firstCalls(3)(next);
    const calls = [1, 2, 3, 4].map(() => layer(attempt()).then(succeeded, (e: unknown) => e as BreError));
    for (const p of pending.slice(0, 3)) p.fail(undocumented());
    const first3 = await Promise.all(calls.slice(0, 3));
    expect(first3.map((e) => e.code)).toEqual([
      'SERVICE_MISCONFIGURED',
      'SERVICE_MISCONFIGURED',
      'SERVICE_MISCONFIGURED',
    ]);
    expect(first3[0].message).toContain('HTTP 400');
    expect(first3[0].message).toContain('No required SSL certificate was sent');
    // A later answer of the same status is the same stop.
    pending[3].fail(undocumented());
    expect((await calls[3]).code).toBe('SERVICE_MISCONFIGURED');
  });

  it("a success first: the held answers go on as the rows' own HTTP_ERROR, and later ones pass straight through", async () => {
    const { next, pending } = manual();
    const layer = firstCalls(3)(next);
    const a = layer(attempt()).then(succeeded, (e: unknown) => e as BreError);
    const b = layer(attempt());
    pending[0].fail(undocumented(404));
    pending[1].ok({ decision: 'approve' });
    expect(await b).toEqual({ decision: 'approve' });
    expect((await a).code).toBe('HTTP_ERROR');
    const c = layer(attempt()).then(succeeded, (e: unknown) => e as BreError);
    pending[2].fail(undocumented(404));
    expect((await c).code).toBe('HTTP_ERROR');
  });

  it('when every call in flight answered the same undocumented status (a small input), that is enough', async () => {
    const { next, pending } = manual();
    const only = firstCalls(3)(next)(attempt()).then(succeeded, (e: unknown) => e as BreError);
    pending[0].fail(undocumented(400));
    expect((await only).code).toBe('SERVICE_MISCONFIGURED');
  });

  it("different undocumented statuses are the rows' own; other failures pass through untouched", async () => {
    const { next, pending } = manual();
    const layer = firstCalls(3)(next);
    const x = layer(attempt()).then(succeeded, (e: unknown) => e as BreError);
    const y = layer(attempt()).then(succeeded, (e: unknown) => e as BreError);
    const z = layer(attempt()).then(succeeded, (e: unknown) => e as BreError);
    pending[0].fail(new BreError('SERVER_UNAVAILABLE', '503', { service: 'workflow', status: 503 }));
    expect((await x).code).toBe('SERVER_UNAVAILABLE');
    pending[1].fail(undocumented(400));
    pending[2].fail(undocumented(418));
    expect([(await y).code, (await z).code]).toEqual(['HTTP_ERROR', 'HTTP_ERROR']);
  });

  it('services are judged apart', async () => {
    const { next, pending } = manual();
    const layer = firstCalls(1)(next);
    const w = layer(attempt({ service: 'workflow' })).then(succeeded, (e: unknown) => e as BreError);
    const b = layer(attempt({ service: 'bureau' }));
    pending[1].ok({ ok: 1 });
    await b;
    pending[0].fail(undocumented());
    expect((await w).code).toBe('SERVICE_MISCONFIGURED');
  });
});
