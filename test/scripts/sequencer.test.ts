import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { longestFirst, weight } from '../sequencer.js';

describe('the order of test files without earlier durations', () => {
  it('a file that runs cases kept beside it weighs them too, so it does not start last', () => {
    const wrapper = join(ROOT, 'test/e2e/db-source-mysql.test.ts');
    const cases = join(ROOT, 'test/e2e/db-source/cases.ts');
    expect(statSync(wrapper).size).toBeLessThan(500);
    expect(weight(wrapper)).toBeGreaterThan(statSync(cases).size);
    // Shared helpers (../helpers) are not counted: every file imports them.
    const unit = join(ROOT, 'test/errors.test.ts');
    expect(weight(unit)).toBe(statSync(unit).size);
  });
});

describe('the order of test files: the longest first', () => {
  const f = (file: string, weight: number, duration?: number, failed = false) => ({
    file,
    weight,
    ...(duration === undefined ? {} : { earlier: { duration, failed } }),
  });
  it.each([
    [
      'every duration known: by duration, whatever the weight',
      [f('a', 10, 1_000), f('b', 900, 20), f('c', 5, 60_000)],
      ['c', 'a', 'b'],
    ],
    ['none known (a fresh clone): by weight', [f('a', 10), f('b', 900), f('c', 50)], ['b', 'c', 'a']],
    [
      // 35.5 s for 200 bytes among the known: the new file of 100 bytes is taken for 17.75 s, between 30 s and 5 s
      // (by weight alone, the 30 s file would start last).
      "one new file among known ones: placed by its weight at the known files' rate, not all by weight",
      [f('short', 60, 500), f('long', 40, 30_000), f('mid', 100, 5_000), f('new', 100)],
      ['long', 'new', 'mid', 'short'],
    ],
    [
      'the failed before the rest, each group longest first',
      [f('a', 1, 9_000), f('b', 1, 100, true), f('c', 1, 500, true)],
      ['c', 'b', 'a'],
    ],
  ])('%s', (_name, files, order) => {
    expect(longestFirst(files)).toEqual(order);
  });
});
