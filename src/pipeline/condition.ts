/** `when:` conditions of a stage, evaluated on earlier stages' normalised results (pure). */
import type { StageCondition } from '../stages/types.js';

function same(a: unknown, b: unknown): boolean {
  if (typeof a === 'string' && typeof b === 'string') return a.toLowerCase() === b.toLowerCase();
  return a === b;
}

export function conditionHolds(c: StageCondition, results: Readonly<Record<string, Record<string, unknown>>>): boolean {
  // Own properties only: a field named like an Object.prototype member is just absent.
  const stage = Object.hasOwn(results, c.stage) ? results[c.stage] : undefined;
  if (!stage || stage.skipped === true) return c.exists === false;
  const value = Object.hasOwn(stage, c.field) ? stage[c.field] : undefined;
  const present = value !== undefined && value !== null;
  if (c.exists !== undefined && present !== c.exists) return false;
  if (c.equals !== undefined && !same(value, c.equals)) return false;
  if (c.not_equals !== undefined && same(value, c.not_equals)) return false;
  if (c.in !== undefined && !c.in.some((v) => same(value, v))) return false;
  if (c.not_in?.some((v) => same(value, v))) return false;
  if (c.gte !== undefined && !(typeof value === 'number' && value >= c.gte)) return false;
  if (c.lte !== undefined && !(typeof value === 'number' && value <= c.lte)) return false;
  return true;
}

export function allHold(
  conditions: readonly StageCondition[],
  results: Readonly<Record<string, Record<string, unknown>>>,
): boolean {
  return conditions.every((c) => conditionHolds(c, results));
}
