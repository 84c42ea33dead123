/**
 * samples/champion_challenger.csv is what scripts/champion-challenger-sample.ts writes: the sample cannot drift
 * from the sandbox logic its outcomes were drawn from.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sampleCsv } from '../../../scripts/champion-challenger-sample.js';
import { ROOT } from '../../../test/helpers/cli.js';

describe('champion_challenger sample', () => {
  it("is the generator's output: 1,500 rows over at least 12 months, outcomes partly unknown", () => {
    const text = readFileSync(join(ROOT, 'samples', 'champion_challenger.csv'), 'utf8');
    expect(
      sampleCsv() === text,
      'champion_challenger.csv differs from what `npx tsx scripts/champion-challenger-sample.ts` writes',
    ).toBe(true);
    const [header, ...rows] = text
      .trimEnd()
      .split('\n')
      .map((l) => l.split(','));
    const date = header.indexOf('application_date');
    const outcome = header.indexOf('defaulted');
    expect(rows).toHaveLength(1500);
    expect(new Set(rows.map((r) => r[date].slice(0, 7)).filter(Boolean)).size).toBeGreaterThanOrEqual(12);
    const values = new Set(rows.map((r) => r[outcome]));
    expect([...values].sort()).toEqual(['', '0', '1']);
  });
});
