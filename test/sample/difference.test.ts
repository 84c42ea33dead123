/**
 * What a refused resume or merge says about two sample designs (src/sample/draw.ts designDifference): each
 * option that differs, by name, with both values; nothing when the designs are the same.
 */
import { describe, expect, it } from 'vitest';
import { resolveSampleOptions, type SampleOptions } from '../../src/sample/design.js';
import type { SampleDesign } from '@bre-batch/formats/manifest';
import { designDifference, StrataCount } from '../../src/sample/draw.js';

function designOf(
  o: SampleOptions,
  rows: readonly (string | null)[][] = [['2025-01'], ['2025-01'], ['2025-02'], [null]],
): SampleDesign {
  const spec = resolveSampleOptions(o)!;
  const count = new StrataCount();
  for (const r of rows) count.add(spec.stratifyBy.length === 0 ? [] : r);
  return count.design(spec);
}

const BASE: SampleOptions = { sampleShare: '0.2', stratifyBy: 'application_date:month' };

describe('designDifference', () => {
  it.each<[string, SampleOptions, string]>([
    ['the seed', { ...BASE, seed: 'other' }, '--seed "bre-batch" then, "other" now'],
    ['the share', { ...BASE, sampleShare: '0.3' }, 'the size --sample-share 0.2 then, --sample-share 0.3 now'],
    [
      'a size instead of a share',
      { sample: '3', stratifyBy: 'application_date:month' },
      'the size --sample-share 0.2 then, --sample 3 now',
    ],
    [
      'the strata',
      { ...BASE, stratifyBy: 'application_date:quarter' },
      '--stratify-by application_date:month then, application_date:quarter now',
    ],
    ['no strata', { sampleShare: '0.2' }, '--stratify-by application_date:month then, (none) now'],
  ])('names %s', (_what, now, says) => {
    const d = designDifference(designOf(BASE), designOf(now));
    expect(d).toContain(
      'its sample was drawn with --sample-share 0.2 --stratify-by application_date:month --seed bre-batch',
    );
    expect(d).toContain(says);
  });

  it('names the allocation', () => {
    expect(designDifference(designOf({ sample: '3' }), designOf({ sample: '3', allocation: 'equal' }))).toContain(
      '--sample-allocation proportional then, equal now',
    );
  });

  it('a sample and the whole input, either way round; nothing for the same design or no sample', () => {
    expect(designDifference(undefined, designOf(BASE))).toBe(
      'it is not a sample then, a sample now (--sample-share 0.2 --stratify-by application_date:month --seed bre-batch)',
    );
    expect(designDifference(designOf(BASE), undefined)).toBe(
      'it is a sample then (--sample-share 0.2 --stratify-by application_date:month --seed bre-batch), the whole input now',
    );
    expect(designDifference(designOf(BASE), designOf(BASE))).toBeUndefined();
    expect(designDifference(undefined, undefined)).toBeUndefined();
  });

  it('the same options over other rows drew other strata', () => {
    expect(designDifference(designOf(BASE), designOf(BASE, [['2025-01']]), ['in a', 'in b'])).toContain(
      'the same options drew other strata in a and in b (the input differs)',
    );
  });
});
