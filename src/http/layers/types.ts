/**
 * The shapes the client's layers share, in undici's interceptor style: a layer is a function over the next
 * dispatch, `(next) => dispatch`, and the client is their composition (../chain.ts, where their order is
 * written). What one layer adds for those below it (the limiter's `sent`, the deadline, the credentials)
 * travels in the attempt, so no layer reaches into another.
 */
import type { CallStats } from '../../metrics/service-stats.js';
import type { ServiceName } from '@bre-batch/core/types';
import type { AttemptDeadline } from '../deadlines.js';
import type { HttpRequest } from '../transport.js';

/** One attempt of a call, as it goes down the layers. */
export interface Attempt {
  readonly service: ServiceName;
  readonly request: HttpRequest;
  /** The whole attempt's time-out (the service's --timeout, or the call's own). */
  readonly timeoutMs: number;
  /** 1 for a call's first attempt; the limiter lets later ones (retries) ahead of first attempts. */
  readonly number: number;
  /** A stage's stats, counted with the service's. */
  readonly stageStats: CallStats | undefined;
  /** What the call costs, micro-units (../../limits/spend.ts); undefined: not priced. */
  readonly price?: number;
  /** Asked when the limiter lets the attempt go: false, the attempt is not sent (./sendable.ts). */
  readonly sendable?: (() => boolean | Promise<boolean>) | undefined;
  /** Set by the limit layer: called when the request is written to a connection (../../limits/pacer.ts). */
  readonly sent: (() => void) | undefined;
  /** Set by the deadline layer: the transport aborts the request through it when the deadline passes. */
  readonly deadline: AttemptDeadline | undefined;
}

export type Dispatch<R> = (attempt: Attempt) => Promise<R>;

/** A layer over the next dispatch; `In` is what the next one resolves to, `Out` what this one does. */
export type Layer<In, Out = In> = (next: Dispatch<In>) => Dispatch<Out>;
