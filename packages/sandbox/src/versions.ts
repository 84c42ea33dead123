/**
 * A vendor deploying a new rule version in the middle of a night: from a given call of a workflow endpoint, or
 * from a given time on the sandbox clock, the endpoint answers with another version (the v1 or v2 cut-offs,
 * `workflow_version_path` `workflow_<name>_<version>`, `final_decision.version`). A fault like the others:
 * `--switch-version location_bre=v2@call:100`, `--switch-version location_bre=v2@after:30s`, the
 * programmatic `versionSwitches`, and `POST /__sandbox/versions`.
 */
import { BreError } from '@bre-batch/core/errors';
import { parseDuration } from '@bre-batch/core/units';
import type { Variant } from './logic/workflows/common.js';

const VARIANTS: readonly Variant[] = ['v1', 'v2'];

export interface VersionSwitch {
  /** The endpoint as called (`location_bre`, `location_bre_challenger`). */
  readonly endpoint: string;
  readonly to: Variant;
  /** From this call of the endpoint on (1 = the first), counting the calls its handler answers. */
  readonly atCall?: number;
  /** From this many ms after the sandbox started, on its clock (`clock.advance` moves it). */
  readonly afterMs?: number;
}

const EXPECTED_FLAG =
  '--switch-version ENDPOINT=VERSION@call:N or ENDPOINT=VERSION@after:DURATION (e.g. location_bre=v2@call:100, location_bre=v2@after:30s; VERSION v1 or v2)';
const EXPECTED_OBJECT =
  'versionSwitches as [{"endpoint": "location_bre", "to": "v1" or "v2", "atCall": N >= 1} or {..., "afterMs": MS >= 0}]';

function usage(expected: string, got: unknown): never {
  throw new BreError(
    'USAGE',
    `Expected ${expected}, got ${typeof got === 'string' ? `'${got}'` : JSON.stringify(got)}`,
    { field: 'switch-version', expected },
  );
}

/** `--switch-version` values (repeatable). */
export function parseVersionSwitches(specs: readonly string[]): VersionSwitch[] {
  return specs.map((spec) => {
    const m = /^\s*([A-Za-z0-9_-]+)=(v1|v2)@(call|after):(\S+)\s*$/.exec(spec);
    if (!m) usage(EXPECTED_FLAG, spec);
    const [, endpoint, to, how, when] = m;
    if (how === 'after')
      return { endpoint, to: to as Variant, afterMs: parseDuration(when, { flag: 'switch-version', unit: 'ms' }) };
    if (!/^\d+$/.test(when) || Number(when) < 1) usage(EXPECTED_FLAG, spec);
    return { endpoint, to: to as Variant, atCall: Number(when) };
  });
}

/** Switches given as objects (programmatic API, control path). */
export function validateVersionSwitches(value: unknown): VersionSwitch[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) usage(EXPECTED_OBJECT, value);
  return value.map((v: unknown) => {
    const o = v as Partial<Record<keyof VersionSwitch, unknown>> | null;
    const whole = (n: unknown, min: number) => typeof n === 'number' && Number.isInteger(n) && n >= min;
    const ok =
      typeof o === 'object' &&
      o !== null &&
      typeof o.endpoint === 'string' &&
      /^[A-Za-z0-9_-]+$/.test(o.endpoint) &&
      VARIANTS.includes(o.to as Variant) &&
      (o.atCall === undefined) !== (o.afterMs === undefined) &&
      (o.atCall === undefined || whole(o.atCall, 1)) &&
      (o.afterMs === undefined || (typeof o.afterMs === 'number' && o.afterMs >= 0));
    if (!ok) usage(EXPECTED_OBJECT, v);
    const { endpoint, to, atCall, afterMs } = o as VersionSwitch;
    return atCall !== undefined ? { endpoint, to, atCall } : { endpoint, to, afterMs: afterMs! };
  });
}

/** The switches in force, and the calls of each endpoint they count. */
export class VersionSwitches {
  #switches: readonly VersionSwitch[] = [];
  readonly #calls = new Map<string, number>();
  readonly #startedAt: number;

  constructor(switches: readonly VersionSwitch[], startedAt: number) {
    this.#startedAt = startedAt;
    this.set(switches);
  }

  /** Replaces the switches; the calls are counted again from 0. */
  set(switches: readonly VersionSwitch[]): void {
    this.#switches = validateVersionSwitches(switches);
    this.#calls.clear();
  }

  get switches(): readonly VersionSwitch[] {
    return this.#switches;
  }

  /** The version this call of `endpoint` answers with (`base` when no switch applies); counts the call. */
  variantOf(endpoint: string, base: Variant, now: number): Variant {
    if (this.#switches.length === 0) return base;
    const call = (this.#calls.get(endpoint) ?? 0) + 1;
    this.#calls.set(endpoint, call);
    let variant = base;
    for (const s of this.#switches) {
      if (s.endpoint !== endpoint) continue;
      if (s.atCall !== undefined ? call >= s.atCall : now - this.#startedAt >= s.afterMs!) variant = s.to;
    }
    return variant;
  }
}
