import { describe, expect, it } from 'vitest';
import { BreError } from '@bre-batch/core/errors';
import { bureauFeatureColumns, normaliseBureauFeatures } from '../../src/normalise/bureau-features.js';

describe('normaliseBureauFeatures', () => {
  it('keeps every key with its type; known features first in a stable order, then the rest as answered', () => {
    const answer = {
      extra_b: 'x',
      income_calculated: 41000.5,
      reference_id: 'ref1',
      is_risky_customer: false,
      nested: { a: [1] },
      score: 742,
      cbs_risk_grade_v1: 3,
      cbs_stpl_v1: 0.12,
      cbs_monthly_affordability_v1: 9000,
      extra_a: null,
    };
    const out = normaliseBureauFeatures(answer);
    expect(out).toEqual(answer);
    expect(Object.keys(out)).toEqual([
      'reference_id',
      'cbs_stpl_v1',
      'cbs_monthly_affordability_v1',
      'cbs_risk_grade_v1',
      'is_risky_customer',
      'score',
      'income_calculated',
      'extra_b',
      'nested',
      'extra_a',
    ]);
  });

  it('absent known features are absent, not null', () => {
    expect(normaliseBureauFeatures({ reference_id: 'r', score: 1 })).toEqual({ reference_id: 'r', score: 1 });
  });

  it('columns', () => {
    expect(bureauFeatureColumns().map((f) => f.name)).toEqual([
      'reference_id',
      'cbs_stpl_v1',
      'cbs_monthly_affordability_v1',
      'cbs_risk_grade_v1',
      'is_risky_customer',
      'score',
      'income_calculated',
    ]);
  });

  it.each([[null], ['text'], [[1, 2]], [7]])('BAD_RESPONSE for %j', (input) => {
    expect(() => normaliseBureauFeatures(input)).toThrowError(BreError);
    try {
      normaliseBureauFeatures(input);
    } catch (e) {
      expect((e as BreError).code).toBe('BAD_RESPONSE');
    }
  });
});
