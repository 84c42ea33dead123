/**
 * A bureau feature answer (spec 2.8: a flat JSON object; reference_id echoed, every other key a feature)
 * as a normalised result: every key kept with its type, known features first in a stable order, then the
 * others in the answer's order. Object or array values stay JSON.
 */
import { BreError } from '../errors.js';
import type { Json, NormalisedResult } from '../types.js';
import { describeShape } from './shape.js';

/** The features the spec shows (2.8), after reference_id. The full list is not documented. */
const KNOWN = [
  'reference_id',
  'cbs_stpl_v1',
  'cbs_monthly_affordability_v1',
  'cbs_risk_grade_v1',
  'is_risky_customer',
  'score',
  'income_calculated',
] as const;

export function bureauFeatureColumns(): string[] {
  return [...KNOWN];
}

export function normaliseBureauFeatures(response: unknown): NormalisedResult {
  if (typeof response !== 'object' || response === null || Array.isArray(response)) {
    throw new BreError(
      'BAD_RESPONSE',
      `Unexpected bureau feature answer: expected a flat object, got ${describeShape(response)}`,
      {
        service: 'bureau',
        expected: 'a flat object of features (spec 2.8)',
      },
    );
  }
  const answer = response as Record<string, Json>;
  const out: NormalisedResult = {};
  const put = (k: string): void => {
    if (answer[k] !== undefined)
      Object.defineProperty(out, k, { value: answer[k], enumerable: true, writable: true, configurable: true });
  };
  for (const k of KNOWN) if (Object.hasOwn(answer, k)) put(k);
  for (const k of Object.keys(answer)) if (!Object.hasOwn(out, k)) put(k);
  return out;
}
