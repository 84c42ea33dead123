import { describe, expect, it } from 'vitest';
import { BreError } from '@bre-batch/core/errors';
import { measure, Meter } from '../../../src/http/layers/measure.js';
import type { HttpResponse } from '../../../src/http/transport.js';
import { CallStats } from '../../../src/metrics/service-stats.js';
import { perService } from '@bre-batch/core/types';
import { emptyCounts, SpendMeter, type Prices } from '../../../src/limits/spend.js';
import { attempt, scripted } from './attempt.js';

describe('measure layer', () => {
  it("counts each attempt with its status in the service's, the run's and the stage's stats", async () => {
    const also = perService(() => new CallStats());
    const meter = new Meter(also);
    const stage = new CallStats();
    const next = scripted<HttpResponse>([
      () => ({ status: 429, headers: {}, text: '' }),
      () => ({ status: 200, headers: {}, text: '{}' }),
    ]);
    const layer = measure(meter)(next);
    await layer(attempt({ service: 'bureau', stageStats: stage }));
    await layer(attempt({ service: 'bureau', stageStats: stage }));
    for (const s of [meter.stats.bureau, also.bureau, stage]) {
      expect(s.attempts).toBe(2);
      expect(s.statuses).toEqual({ 429: 1, 200: 1 });
      expect(s.throttled).toBe(1);
    }
    expect(meter.stats.workflow.attempts).toBe(0);
  });

  it('a failure is counted by its code in lower case and thrown as a BreError (a bare error is NETWORK)', async () => {
    const meter = new Meter();
    const layer = measure(meter)(
      scripted<HttpResponse>([
        () => {
          throw new BreError('TIMEOUT', 'cut', { service: 'workflow' });
        },
        () => {
          throw new Error('ECONNRESET');
        },
      ]),
    );
    expect(((await layer(attempt()).catch((e) => e)) as BreError).code).toBe('TIMEOUT');
    expect(((await layer(attempt()).catch((e) => e)) as BreError).code).toBe('NETWORK');
    expect(meter.stats.workflow.statuses).toEqual({ timeout: 1, network: 1 });
  });

  it('an attempt abandoned by the stopping run is not counted', async () => {
    const meter = new Meter();
    const layer = measure(meter)(
      scripted<HttpResponse>([
        () => {
          throw new BreError('INTERRUPTED', 'stopping', { service: 'workflow' });
        },
      ]),
    );
    expect(((await layer(attempt()).catch((e) => e)) as BreError).code).toBe('INTERRUPTED');
    expect(meter.stats.workflow.attempts).toBe(0);
  });

  it("retries and the time slept before them are the meter's too", () => {
    const also = perService(() => new CallStats());
    const meter = new Meter(also);
    const stage = new CallStats();
    meter.retry(attempt({ service: 'account', stageStats: stage }));
    meter.waited('account', 250);
    expect([meter.stats.account.retries, also.account.retries, stage.retries]).toEqual([1, 1, 1]);
    expect(meter.retryWaitMs.account).toBe(250);
  });
});

describe('measure layer with a price: the spend counted in the same frame', () => {
  const prices: Prices = {
    currency: 'EUR',
    service: { workflow: 50_000 },
    workflow: {},
    billed: new Set(['2xx', '5xx', 'timeout']),
  };

  it('a priced attempt is pending while it is out, then billed by the rule from what measure saw', async () => {
    const spend = new SpendMeter(prices, emptyCounts(), undefined, 50_000);
    const meter = new Meter();
    let answer!: (r: HttpResponse) => void;
    const layer = measure(meter, spend)(() => new Promise<HttpResponse>((r) => (answer = r)));
    const out = layer(attempt({ price: 50_000 }));
    expect([spend.pending.workflow, spend.pendingMicros.workflow, spend.session.attempts.workflow]).toEqual([
      1, 50_000, 1,
    ]);
    expect(spend.session.billed.workflow).toBe(0);
    answer({ status: 200, headers: {}, text: '{}' });
    await out;
    expect([spend.pending.workflow, spend.pendingMicros.workflow]).toEqual([0, 0]);
    expect([spend.session.billed.workflow, spend.session.micros.workflow]).toEqual([1, 50_000]);
    expect(meter.stats.workflow.attempts).toBe(1);
  });

  // what the attempt met, billed (the default rule: 2xx, 5xx and a time-out; an abandoned attempt is a time-out)
  it.each([
    ['a 2xx answer', () => ({ status: 200, headers: {}, text: '{}' }), true],
    ['a 5xx answer', () => ({ status: 503, headers: {}, text: '' }), true],
    ['a 429', () => ({ status: 429, headers: {}, text: '' }), false],
    ['a 422', () => ({ status: 422, headers: {}, text: '' }), false],
    [
      'its deadline',
      () => {
        throw new BreError('TIMEOUT', 'cut', { service: 'workflow' });
      },
      true,
    ],
    [
      'the stopping run (it left: may have run)',
      () => {
        throw new BreError('INTERRUPTED', 'stopping', { service: 'workflow' });
      },
      true,
    ],
    [
      'a connection that failed',
      () => {
        throw new Error('ECONNREFUSED');
      },
      false,
    ],
  ] as const)('%s: billed %s', async (_n, answer, billed) => {
    const spend = new SpendMeter(prices, emptyCounts(), undefined, 50_000);
    const layer = measure(new Meter(), spend)(scripted<HttpResponse>([answer]));
    await layer(attempt({ price: 50_000 })).catch(() => undefined);
    expect(spend.pending.workflow).toBe(0);
    expect(spend.session.attempts.workflow).toBe(1);
    expect(spend.session.billed.workflow).toBe(billed ? 1 : 0);
    expect(spend.session.micros.workflow).toBe(billed ? 50_000 : 0);
  });

  it('an attempt without a price passes uncounted by the spend, measured as ever; the error thrown is the same', async () => {
    const spend = new SpendMeter(prices, emptyCounts(), undefined, 50_000);
    const meter = new Meter();
    const layer = measure(
      meter,
      spend,
    )(
      scripted<HttpResponse>([
        () => ({ status: 200, headers: {}, text: '{}' }),
        () => {
          throw new Error('ECONNRESET');
        },
      ]),
    );
    await layer(attempt({ service: 'bureau' }));
    const e = (await layer(attempt({ service: 'bureau', price: 0 })).catch((x) => x)) as BreError;
    expect(e.code).toBe('NETWORK');
    expect(spend.session.attempts.bureau).toBe(0);
    expect(spend.pending.bureau).toBe(0);
    expect(meter.stats.bureau.statuses).toEqual({ 200: 1, network: 1 });
  });

  it('the spend is told of each change (the spend file writes from it)', async () => {
    const spend = new SpendMeter(prices, emptyCounts(), undefined, 50_000);
    let changes = 0;
    spend.onChange = () => (changes += 1);
    await measure(new Meter(), spend)(scripted<HttpResponse>([() => ({ status: 200, headers: {}, text: '{}' })]))(
      attempt({ price: 50_000 }),
    );
    expect(changes).toBe(2);
  });
});
