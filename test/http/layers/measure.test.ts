import { describe, expect, it } from 'vitest';
import { BreError } from '@bre-batch/core/errors';
import { measure, Meter } from '../../../src/http/layers/measure.js';
import type { HttpResponse } from '../../../src/http/transport.js';
import { CallStats } from '../../../src/metrics/service-stats.js';
import { perService } from '@bre-batch/core/types';
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
