/**
 * The design-based estimators against R's survey package (../scripts/survey-fixtures.R writes the fixture:
 * svydesign(ids = ~1, strata = ~h, fpc = ~N_h) over 3,897 sampled units in 52 strata, one of them empty, three
 * with a single sampled unit, two sampled whole; svymean, svytotal and svyratio on the whole sample and on the
 * domain subset(design, compared == 1); under survey.lonely.psu "average", "adjust" and "remove").
 * Estimates and standard errors must agree to 1e-9 (relative to the value's size when it is above 1).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkDesign, type Design, type LonelyPsu, type Stratum } from '../src/design/design.js';
import { mean, ratio, total, type Estimate } from '../src/design/estimators.js';

interface Fixture {
  readonly r_version: string;
  readonly survey_version: string;
  readonly strata: readonly { name: string; N: number; n: number }[];
  readonly units: Readonly<Record<string, readonly (number | string)[]>>;
  readonly cases: readonly {
    lonely: LonelyPsu;
    kind: 'mean' | 'total' | 'ratio';
    y: string;
    x: string | null;
    domain: boolean;
    estimate: number;
    se: number;
  }[];
}

const fx = JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'survey.json'), 'utf8')) as Fixture;
const strata: Stratum[] = fx.strata.map((s) => ({ name: s.name, population: s.N, sampled: s.n }));
const index = new Map(strata.map((s, h) => [s.name, h]));

/** The design over the units `keep` accepts (all of them, or a domain's), and their values of a column. */
function designOf(keep: (i: number) => boolean): { design: Design; column: (name: string) => Float64Array } {
  const rows: number[] = [];
  (fx.units.h as string[]).forEach((_, i) => {
    if (keep(i)) rows.push(i);
  });
  const design = checkDesign({
    strata,
    unitStratum: Int32Array.from(rows, (i) => index.get(fx.units.h[i] as string) as number),
  });
  return { design, column: (name) => Float64Array.from(rows, (i) => fx.units[name][i] as number) };
}

const whole = designOf(() => true);
const domain = designOf((i) => fx.units.compared[i] === 1);

function close(got: number | null | undefined, want: number): void {
  expect(got).not.toBeNull();
  expect(Math.abs((got as number) - want)).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(want)));
}

describe(`design-based estimates equal R's survey ${fx.survey_version} (${fx.r_version})`, () => {
  it('the fixture has what it claims: an empty stratum, lonely and whole-sampled strata, a stratum with no domain unit', () => {
    expect(fx.cases).toHaveLength(78);
    expect(strata.some((s) => s.sampled === 0)).toBe(true);
    expect(strata.filter((s) => s.sampled === 1 && s.population > 1)).toHaveLength(2);
    expect(strata.filter((s) => s.sampled === s.population).length).toBeGreaterThanOrEqual(3);
    expect(whole.design.unitStratum.length).toBeGreaterThan(3000);
    const h = index.get('all-failed-200') as number;
    expect([...domain.design.unitStratum].includes(h)).toBe(false);
  });

  for (const c of fx.cases) {
    const name = `${c.kind}(${c.y}${c.x ? `, ${c.x}` : ''})${c.domain ? ' over the domain' : ''}, lonely ${c.lonely}`;
    it(name, () => {
      const { design, column } = c.domain ? domain : whole;
      let got: Estimate | null;
      if (c.kind === 'total') got = total(design, column(c.y), c.lonely);
      else if (c.kind === 'mean') got = mean(design, column(c.y), c.lonely);
      else got = ratio(design, column(c.y), column(c.x as string), c.lonely);
      close(got?.estimate, c.estimate);
      close(got?.se, c.se);
    });
  }
});
