/** `--timeout SERVICE=DURATION` (30s, 1500ms, 2m). */
import { BreError } from '../errors.js';
import { SERVICES, type ServiceName } from '../types.js';

/**
 * Per-attempt time-outs. Bureau: 30 s, the documented example client (decision spec section 8); workflows
 * may fetch a bureau report themselves, so they get 60 s; account fetches: 60 s.
 */
export const DEFAULT_TIMEOUTS_MS: Readonly<Record<ServiceName, number>> = { workflow: 60_000, bureau: 30_000, account: 60_000 };

export function parseDuration(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min)?\s*$/.exec(text);
  if (!m) return undefined;
  const n = Number(m[1]);
  const unit = m[2] ?? 's';
  return Math.round(unit === 'ms' ? n : unit === 's' ? n * 1000 : n * 60_000);
}

export function resolveTimeouts(args: readonly string[] | undefined): Record<ServiceName, number> {
  const out = { ...DEFAULT_TIMEOUTS_MS };
  for (const a of args ?? []) {
    const [svc, dur] = a.split('=');
    const ms = dur === undefined ? parseDuration(svc) : parseDuration(dur);
    if (ms === undefined || ms <= 0) throw new BreError('USAGE', `Expected --timeout SERVICE=DURATION (e.g. bureau=30s) or DURATION, got '${a}'`);
    if (dur === undefined) {
      for (const s of SERVICES) out[s] = ms;
      continue;
    }
    if (!SERVICES.includes(svc as ServiceName)) throw new BreError('USAGE', `Expected --timeout SERVICE to be one of ${SERVICES.join(', ')}, got '${svc}'`);
    out[svc as ServiceName] = ms;
  }
  return out;
}
