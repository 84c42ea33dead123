/**
 * Deadline (--timeout): bounds the whole of one attempt, from its dispatch to the last byte of its answer
 * (waiting for a connection, connecting, the headers and the body). It sits below the limiter, so the wait for
 * a slot is not counted against it. One timer for every attempt of the client (../deadlines.ts); the attempt
 * fails with TIMEOUT the moment it passes, and the transport, which owns the request, aborts it.
 */
import { type Deadlines, timeoutError, withinDeadline } from '../deadlines.js';
import type { HttpResponse } from '../transport.js';
import type { Layer } from './types.js';

export function deadline(deadlines: Deadlines): Layer<HttpResponse> {
  return (next) => (a) =>
    withinDeadline(
      deadlines,
      a.timeoutMs,
      (d) => next({ ...a, deadline: d }),
      () => timeoutError(a.service, a.timeoutMs),
    );
}
