/** Counters the sandbox keeps per service: the referee for rate-limit benchmarks and fault tests. */
import type { ServiceName } from '@bre-batch/core/types';
import type { Rate } from './rate.js';

/**
 * New kinds go at the end: the draw walks this order, so a seed gives the same faults as before for the
 * kinds it already had.
 */
export const FAULT_KINDS = ['429', '503', 'reset', 'slow', 'malformed', 'empty', 'html', 'trickle', 'endless'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

const noFaults = (): Record<FaultKind, number> =>
  Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;

/** One caller address's share of a service (the limit is per caller IP, so its window is its own). */
export interface CallerStats {
  readonly requests: number;
  readonly admitted: number;
  /** 429s its window answered. */
  readonly throttled: number;
  /** Most admitted requests of this caller inside one sliding window; with a limit, never above it. */
  readonly maxInWindow: number;
  /** Connections destroyed because the caller was blocked (POST /__sandbox/blocked). */
  readonly blocked: number;
}

export interface ServiceStats {
  /** Requests to this service's paths (every answer, 403/404/429 included, and resets). */
  readonly requests: number;
  /** HTTP status -> count of answers sent. */
  readonly byStatus: Readonly<Record<string, number>>;
  /** Every 429 sent: by the limiter and injected by the `429` fault. */
  readonly sent429: number;
  /**
   * Calls the vendor bills, by the rule bre-batch assumes by default (src/limits/spend.ts): every answer it
   * decided on with a 2xx or a 5xx, whether or not its client was still there to read it (a caller's time-out).
   * 4xx, 429 and resets are not billed. The referee of the spend tests.
   */
  readonly billed: number;
  /** 429s sent by the rate limiter only. */
  readonly throttled: number;
  /** 429s sent while the gateway throttled everything (--throttle-for), apart from the rate limiter's. */
  readonly gatewayThrottled: number;
  /** `endless` answers: bytes of body sent in all before their clients hung up. */
  readonly endlessBytes: number;
  /** Injected faults by kind. */
  readonly faults: Readonly<Record<FaultKind, number>>;
  /**
   * `trickle` answers whose client hung up before the last byte (`cut`: its time-out, counted as the socket
   * closes) and those sent in full (`completed`).
   */
  readonly trickles: { readonly cut: number; readonly completed: number };
  /**
   * Most admitted requests seen inside one sliding window (the service's window, 60 s when its limit is
   * off), for any single caller IP. With a limit set it never exceeds the limit.
   */
  readonly maxInWindow: number;
  /**
   * With a limit: the fewest ms any limit+1 consecutive admitted requests of one caller spanned, i.e. the
   * window plus the margin the caller left at its tightest (null until a caller sent that many).
   */
  readonly tightestSpanMs: number | null;
  /** Admitted requests (not refused by the limiter), and the sandbox clock at the first and the last one. */
  readonly admitted: number;
  readonly firstAdmittedAt: number | null;
  readonly lastAdmittedAt: number | null;
  /** Requests answered 500 because of a sandbox bug (should stay 0). */
  readonly internalErrors: number;
  /** The limit in force (null = off). */
  readonly rate: Rate | null;
  /** Per caller IP (IPv4-mapped IPv6 written as IPv4): its requests, its 429s and its busiest window. */
  readonly callers: Readonly<Record<string, CallerStats>>;
}

export interface SandboxStats {
  readonly seed: number | string;
  /** Sandbox clock, ms since epoch. */
  readonly now: number;
  readonly services: Readonly<Record<ServiceName, ServiceStats>>;
  /** Requests to paths of no service (unknown paths). */
  readonly other: { readonly requests: number; readonly byStatus: Readonly<Record<string, number>> };
}

export class ServiceCounter {
  requests = 0;
  byStatus: Record<string, number> = {};
  sent429 = 0;
  billed = 0;
  throttled = 0;
  gatewayThrottled = 0;
  endlessBytes = 0;
  faults: Record<FaultKind, number> = noFaults();
  trickles = { cut: 0, completed: 0 };
  maxInWindow = 0;
  tightestSpanMs = Infinity;
  admitted = 0;
  firstAdmittedAt: number | null = null;
  lastAdmittedAt: number | null = null;
  internalErrors = 0;
  callers = new Map<
    string,
    { requests: number; admitted: number; throttled: number; maxInWindow: number; blocked: number }
  >();

  /** The counts of one caller address (made on its first request). */
  caller(ip: string): { requests: number; admitted: number; throttled: number; maxInWindow: number; blocked: number } {
    let c = this.callers.get(ip);
    if (!c) this.callers.set(ip, (c = { requests: 0, admitted: 0, throttled: 0, maxInWindow: 0, blocked: 0 }));
    return c;
  }

  /** A request the rate limiter let through, at `now`, with `win` its caller's window. */
  admit(
    now: number,
    win: { readonly count: number; readonly tightestSpanMs: number },
    caller?: { admitted: number; maxInWindow: number },
  ): void {
    if (caller) {
      caller.admitted++;
      if (win.count > caller.maxInWindow) caller.maxInWindow = win.count;
    }
    this.admitted++;
    this.firstAdmittedAt ??= now;
    this.lastAdmittedAt = now;
    if (win.count > this.maxInWindow) this.maxInWindow = win.count;
    if (win.tightestSpanMs < this.tightestSpanMs) this.tightestSpanMs = win.tightestSpanMs;
  }

  status(code: number): void {
    this.byStatus[code] = (this.byStatus[code] ?? 0) + 1;
    if (code === 429) this.sent429++;
    if ((code >= 200 && code < 300) || code >= 500) this.billed++;
  }

  reset(): void {
    this.requests = 0;
    this.byStatus = {};
    this.sent429 = 0;
    this.billed = 0;
    this.throttled = 0;
    this.gatewayThrottled = 0;
    this.endlessBytes = 0;
    this.faults = noFaults();
    this.trickles = { cut: 0, completed: 0 };
    this.maxInWindow = 0;
    this.tightestSpanMs = Infinity;
    this.admitted = 0;
    this.firstAdmittedAt = null;
    this.lastAdmittedAt = null;
    this.internalErrors = 0;
    this.callers = new Map();
  }

  snapshot(rate: Rate | null): ServiceStats {
    return {
      requests: this.requests,
      byStatus: { ...this.byStatus },
      sent429: this.sent429,
      billed: this.billed,
      throttled: this.throttled,
      gatewayThrottled: this.gatewayThrottled,
      endlessBytes: this.endlessBytes,
      faults: { ...this.faults },
      trickles: { ...this.trickles },
      maxInWindow: this.maxInWindow,
      tightestSpanMs: Number.isFinite(this.tightestSpanMs) ? this.tightestSpanMs : null,
      admitted: this.admitted,
      firstAdmittedAt: this.firstAdmittedAt,
      lastAdmittedAt: this.lastAdmittedAt,
      internalErrors: this.internalErrors,
      rate,
      callers: Object.fromEntries([...this.callers].map(([ip, c]) => [ip, { ...c }])),
    };
  }
}
