/**
 * Spend: each attempt of a priced call is counted pending from its dispatch to its outcome, then billed or not
 * by the billing rule (../../limits/spend.ts). It sits just above measure, so it sees what measure sees: the
 * answer's status, or `timeout` for an attempt its deadline cut; an attempt abandoned by the stopping run
 * (INTERRUPTED) left and may have been run, so it counts as a time-out. An unpriced call passes straight through.
 */
import { toBreError } from '@bre-batch/core/errors';
import type { SpendMeter } from '../../limits/spend.js';
import type { HttpResponse } from '../transport.js';
import type { Layer } from './types.js';

export function spend(meter: SpendMeter): Layer<HttpResponse> {
  return (next) => async (a) => {
    const price = a.price;
    if (price === undefined || price === 0) return next(a);
    meter.start(a.service, price);
    let res: HttpResponse;
    try {
      res = await next(a);
    } catch (err) {
      const e = toBreError(err, 'NETWORK');
      meter.end(a.service, price, e.status ?? e.code.toLowerCase());
      throw e;
    }
    meter.end(a.service, price, res.status);
    return res;
  };
}
