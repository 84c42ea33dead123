/**
 * A bureau feature answer (spec 2.8: a flat JSON object; reference_id echoed, every other key a feature)
 * as a normalised result: every key kept with its type, known features first in a stable order, then the
 * others in the answer's order. Object or array values stay JSON.
 */
import { BreError } from '@bre-batch/core/errors';
import { resultFields, type Json, type NormalisedResult, type ResultField } from '@bre-batch/core/types';
import { describeShape } from './shape.js';

/** The features the spec shows (2.8), after reference_id, typed as it shows them. The full list is not documented. */
const KNOWN_FIELDS: readonly ResultField[] = [
  ...resultFields('string', 'reference_id'),
  ...resultFields('double', 'cbs_stpl_v1', 'cbs_monthly_affordability_v1', 'cbs_risk_grade_v1'),
  ...resultFields('boolean', 'is_risky_customer'),
  ...resultFields('double', 'score', 'income_calculated'),
];
const KNOWN = KNOWN_FIELDS.map((f) => f.name);

export function bureauFeatureColumns(): ResultField[] {
  return [...KNOWN_FIELDS];
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
