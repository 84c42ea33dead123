/**
 * Defensive readers for account responses. service_response "depends on the upstream provider or analyzer
 * and may change or gain keys; callers parse it defensively" (spec 9, 2.7): every reader here returns a
 * safe default for an unexpected shape instead of throwing.
 */
import type { Json, JsonObject } from '@bre-batch/core/types';

export function asObject(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/**
 * A list, where a single object also counts as a list of one: XML-to-JSON conversions of AA data
 * (`Transactions.Transaction`) give an object when there is one element.
 */
export function asList(v: unknown): unknown[] | undefined {
  if (Array.isArray(v)) return v;
  if (asObject(v)) return [v];
  return undefined;
}

/** A finite number from a number or a numeric string (`transactionalBalance` is a numeric string, 2.2). */
export function toNumber(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string') {
    const text = v.trim().replace(/,/g, '');
    if (text === '' || !/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(text)) return null;
    const n = Number(text);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

/** A trimmed non-empty string (numbers as text), else null. */
export function toText(v: unknown): string | null {
  if (typeof v === 'string') {
    const t = v.trim();
    return t === '' ? null : t;
  }
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return null;
}

/** true/false from a boolean or the strings 'true'/'false' (fCUAnalysis status, 2.7), else null. */
export function toBool(v: unknown): boolean | null {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    const t = v.trim().toLowerCase();
    if (t === 'true') return true;
    if (t === 'false') return false;
  }
  return null;
}

/** A value as JSON, or undefined when it is not plain JSON (functions, NaN...). */
export function toJson(v: unknown): Json | undefined {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (Array.isArray(v)) {
    const out: Json[] = [];
    for (const item of v) {
      const j = toJson(item);
      if (j !== undefined) out.push(j);
    }
    return out;
  }
  const obj = asObject(v);
  if (obj) {
    const out: JsonObject = {};
    for (const [k, item] of Object.entries(obj)) {
      const j = toJson(item);
      if (j !== undefined) out[k] = j;
    }
    return out;
  }
  return undefined;
}

/**
 * Flattens an object into `prefix.key` entries (nested objects dotted, arrays kept whole), skipping keys
 * for which `skip(key)` holds at any depth.
 */
export function flattenInto(
  target: Record<string, Json>,
  prefix: string,
  value: unknown,
  skip: (key: string) => boolean = () => false,
): void {
  const obj = asObject(value);
  if (!obj) return;
  for (const [key, item] of Object.entries(obj)) {
    if (skip(key)) continue;
    const name = `${prefix}.${key}`;
    if (asObject(item)) {
      flattenInto(target, name, item, skip);
      continue;
    }
    const j = toJson(item);
    if (j !== undefined) target[name] = j;
  }
}
