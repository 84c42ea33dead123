/**
 * Auth: adds the two credential headers to every attempt. It is the innermost layer (only the transport is
 * below it), so nothing above ever holds the token: not the limiter's queue, not a retry's sleep, not an error.
 */
import type { HttpResponse } from '../transport.js';
import type { Layer } from './types.js';

/** What a call's request carries when it has no headers of its own: auth then sends its one frozen object. */
export const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>;

export function auth(clientId: string, authToken: string): Layer<HttpResponse> {
  // One headers object for every request: the credentials do not change during a run, and undici only reads it.
  const authHeaders = Object.freeze({
    'x-client-id': clientId,
    'x-auth-token': authToken,
    'content-type': 'application/json',
  }) as Record<string, string>;
  return (next) => (a) =>
    next({
      ...a,
      request: {
        path: a.request.path,
        body: a.request.body,
        headers: a.request.headers === NO_HEADERS ? authHeaders : { ...a.request.headers, ...authHeaders },
      },
    });
}
