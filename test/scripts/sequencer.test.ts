import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { weight } from '../sequencer.js';

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
