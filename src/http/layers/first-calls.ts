/**
 * First calls: a service whose first calls all answer the same status the spec does not document (HTTP_ERROR:
 * a gateway's 400 "No required SSL certificate was sent", a 404 for a wrong path prefix) is misconfigured, not
 * sent bad rows. Until a service has answered one call with success, such an answer is held, not yet the row's:
 * once `sameNeeded` answers agree (or every call of the service in flight has answered so, none succeeding),
 * each held attempt fails with SERVICE_MISCONFIGURED, which stops the run (exit 3) with no row written to
 * errors; a success first lets the held answers go on as the rows' own HTTP_ERROR. After a success the layer
 * lets everything through. It sits above the limiter, so a held attempt holds no slot.
 */
import { BreError, toBreError } from '@bre-batch/core/errors';
import type { ServiceName } from '@bre-batch/core/types';
import type { Dispatch, Layer } from './types.js';

interface Held {
  readonly error: BreError;
  readonly reject: (err: unknown) => void;
}

interface ServiceState {
  /** `learning` until a success (`ok`) or the same undocumented status answered enough (`misconfigured`). */
  phase: 'learning' | 'ok' | 'misconfigured';
  inFlight: number;
  held: Held[];
  misconfigured?: BreError;
}

export function firstCalls(sameNeeded = 3): Layer<unknown> {
  const states = new Map<ServiceName, ServiceState>();
  const stateOf = (s: ServiceName): ServiceState => {
    let st = states.get(s);
    if (!st) states.set(s, (st = { phase: 'learning', inFlight: 0, held: [] }));
    return st;
  };

  const misconfigured = (service: ServiceName, e: BreError, count: number) =>
    new BreError(
      'SERVICE_MISCONFIGURED',
      `the ${service} service answered its first ${count === 1 ? 'call' : `${count} calls`} with HTTP ${e.status}, which the API does not document, and none succeeded: a configuration problem, not the rows (a gateway wanting a client certificate: --client-cert; a wrong base URL or path prefix); its answer: ${e.message}`,
      { service, status: e.status },
    );

  function decide(service: ServiceName, st: ServiceState): void {
    if (st.phase !== 'learning' || st.held.length === 0) return;
    const status = st.held[0].error.status;
    const same = st.held.every((h) => h.error.status === status);
    if (same && (st.held.length >= sameNeeded || st.inFlight === 0)) {
      st.phase = 'misconfigured';
      st.misconfigured = misconfigured(service, st.held[0].error, st.held.length);
      for (const h of st.held) h.reject(st.misconfigured);
      st.held = [];
    } else if (!same || st.inFlight === 0) {
      // Different statuses: the rows' own faults after all.
      st.phase = 'ok';
      for (const h of st.held) h.reject(h.error);
      st.held = [];
    }
  }

  return (next: Dispatch<unknown>) => async (a) => {
    const st = stateOf(a.service);
    if (st.phase === 'ok') return next(a);
    st.inFlight += 1;
    let value: unknown;
    try {
      value = await next(a);
    } catch (err) {
      st.inFlight -= 1;
      const e = toBreError(err, 'NETWORK');
      if (e.code !== 'HTTP_ERROR') {
        decide(a.service, st);
        throw e;
      }
      // The phase may have moved while this attempt was out.
      const phase = st.phase as ServiceState['phase'];
      if (phase === 'misconfigured') throw e.status === st.misconfigured!.status ? st.misconfigured! : e;
      if (phase === 'ok') throw e;
      return new Promise<unknown>((_resolve, reject) => {
        st.held.push({ error: e, reject });
        decide(a.service, st);
      });
    }
    st.inFlight -= 1;
    if (st.phase === 'learning') {
      st.phase = 'ok';
      for (const h of st.held) h.reject(h.error);
      st.held = [];
    }
    return value;
  };
}
