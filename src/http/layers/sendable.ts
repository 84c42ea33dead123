/**
 * Sendable: an attempt whose call says it is no longer wanted is not sent. It sits right below the limiter, so
 * the question is asked when the limiter lets the attempt go (after any wait in its queue or a pause: the last
 * moment before the request), for every attempt, retries included. A job's worker asks there whether it still
 * holds the row's chunk (src/job/member.ts `sendable`): one stalled past its lease must not send what it had
 * queued of a chunk another worker took meanwhile (docs/decisions/job-lost-chunk-not-sent.md).
 *
 * An attempt not sent fails INTERRUPTED, as one the stopping run abandons: never retried, not measured, not
 * priced; `wasNotSent` tells it apart, and the row is counted, not written (src/pipeline/row.ts). A call
 * without the question passes straight through.
 */
import { BreError, isBreError } from '@bre-batch/core/errors';
import type { ServiceName } from '@bre-batch/core/types';
import type { Layer } from './types.js';

export function sendable(): Layer<unknown> {
  return (next) => (a) => {
    const ask = a.sendable;
    if (!ask) return next(a);
    const answer = ask();
    if (answer === true) return next(a);
    if (answer === false) return Promise.reject(notSent(a.service));
    return answer.then((yes) => (yes ? next(a) : Promise.reject(notSent(a.service))));
  };
}

const NOT_SENT = 'not sent: no longer wanted';

function notSent(service: ServiceName): BreError {
  return new BreError('INTERRUPTED', `${service} call not sent: the row is no longer this run's to send`, {
    service,
    details: NOT_SENT,
  });
}

/** An attempt this layer did not send (its call was no longer wanted). */
export function wasNotSent(err: unknown): boolean {
  return isBreError(err) && err.code === 'INTERRUPTED' && err.details === NOT_SENT;
}
