/**
 * The pieces of `compare` on sampled runs, table-driven: reading the design from manifest.json, telling why two
 * designs are not one sample, a run's rows against its design (SampledRun), the unit table's estimates on a hand
 * case, and --replicates.
 */
import { describe, expect, it } from 'vitest';
import { BreError } from '@bre-batch/core/errors';
import { resolveCompareOptions } from '../src/options.js';
import { designDifference, sampleBlockOf, type SampleBlock } from '../src/sampled/block.js';
import { sampleEstimates } from '../src/sampled/estimates.js';
import { SampledRun } from '../src/sampled/run-keys.js';
import { SampleUnits } from '../src/sampled/units.js';
import { sideView } from '../src/side.js';
import { wf } from './fixtures.js';

const BLOCK: SampleBlock = {
  seed: 'bre-batch',
  method: 'stratified simple random sample without replacement; bottom-k of sha256(seed, key) per stratum',
  stratify_by: [
    { column: 'application_date', group: 'month' },
    { column: 'hist_decision', group: null },
  ],
  allocation: 'proportional',
  size: null,
  share: 0.2,
  population: 64,
  sampled: 14,
  strata: [
    { name: '2024-07|Approve', values: ['2024-07', 'Approve'], population: 61, sample: 12 },
    { name: '(missing)|Reject', values: [null, 'Reject'], population: 3, sample: 2 },
  ],
};

function refusal(f: () => unknown): BreError {
  try {
    f();
  } catch (err) {
    if (err instanceof BreError) return err;
    throw err;
  }
  throw new Error('Expected a BreError');
}

describe('sampleBlockOf: the design in manifest.json', () => {
  it("reads the interface's example, and nothing for a run that is not a sample", () => {
    expect(sampleBlockOf({ sample: BLOCK }, '/out')).toEqual(BLOCK);
    expect(sampleBlockOf({}, '/out')).toBeUndefined();
    expect(sampleBlockOf(null, '/out')).toBeUndefined();
  });

  const cases: [string, unknown, RegExp][] = [
    ['a missing seed', { ...BLOCK, seed: undefined }, /problem at sample\.seed/],
    [
      'a fractional N_h',
      { ...BLOCK, strata: [{ ...BLOCK.strata[0], population: 60.5 }, BLOCK.strata[1]] },
      /problem at sample\.strata\.0\.population/,
    ],
    [
      'a stratum sampling more than its population',
      { ...BLOCK, population: 64, sampled: 64, strata: [{ ...BLOCK.strata[0], sample: 62 }, BLOCK.strata[1]] },
      /stratum '2024-07\|Approve' .* to sample at most its population \(61\), got 62/,
    ],
    [
      'a name twice',
      { ...BLOCK, strata: [BLOCK.strata[0], { ...BLOCK.strata[1], name: '2024-07|Approve' }] },
      /own name, got '2024-07\|Approve' twice/,
    ],
    ['strata not adding up', { ...BLOCK, sampled: 15 }, /add up to its population 64 and sample 15, got 64 and 14/],
  ];
  for (const [what, sample, message] of cases) {
    it(`refuses ${what} (SAMPLE_INVALID)`, () => {
      const e = refusal(() => sampleBlockOf({ sample }, '/out'));
      expect(e.code).toBe('SAMPLE_INVALID');
      expect(e.message).toMatch(message);
    });
  }
});

describe('designDifference: why two designs are not one sample', () => {
  const cases: [string, Partial<SampleBlock>, string | null][] = [
    ['the same', {}, null],
    ['another seed', { seed: 'x' }, "the seeds differ (A 'bre-batch', B 'x')"],
    [
      'other strata columns',
      { stratify_by: [{ column: 'application_date', group: 'week' }] },
      'the strata are formed differently (A by application_date (month), hist_decision, B by application_date (week))',
    ],
    [
      'another share',
      { share: 0.3 },
      'the sample sizes were asked differently (A proportional, share 0.2; B proportional, share 0.3)',
    ],
    [
      'another allocation',
      { allocation: 'equal' },
      'the sample sizes were asked differently (A proportional, share 0.2; B equal, share 0.2)',
    ],
    ['another population', { population: 65 }, 'the populations differ (A 64 rows, B 65): the inputs are not the same'],
    [
      'a stratum of another size',
      { strata: [{ ...BLOCK.strata[0], sample: 13 }, BLOCK.strata[1]] },
      "stratum '2024-07|Approve' differs (A: 12 of 61, B: 13 of 61)",
    ],
    ['a stratum missing', { strata: [BLOCK.strata[0]] }, "stratum '(missing)|Reject' of A is not in B"],
    [
      'a stratum more',
      { strata: [...BLOCK.strata, { name: 'x', values: ['x'], population: 1, sample: 1 }] },
      'B has 1 stratum that A has not',
    ],
  ];
  for (const [what, change, want] of cases) {
    it(what, () => {
      expect(designDifference(BLOCK, { ...BLOCK, ...change })).toBe(want);
    });
  }
});

describe("SampledRun: a run's rows against its design", () => {
  it('counts results and errors per stratum, reports the unfinished, and fingerprints (key, stratum) whatever the order', () => {
    const a = new SampledRun(BLOCK, 'A', '/a');
    const b = new SampledRun(BLOCK, 'B', '/b');
    const lines = [
      { row: 1, key: 'k1', stratum: '2024-07|Approve', weight: 61 / 12 },
      { row: 2, key: 'k2', stratum: '2024-07|Approve', weight: 5.0833333333 },
      { row: 3, key: 'k3', stratum: '(missing)|Reject', weight: 1.5 },
    ];
    for (const l of lines) a.resultLine(l);
    a.errorLine({ row: 4, key: 'k4', stratum: '(missing)|Reject', weight: 1.5 });
    a.errorLine({ row: 5, key: null });
    for (const l of [...lines].reverse()) b.resultLine(l);
    b.errorLine({ row: 4, key: 'k4', stratum: '(missing)|Reject', weight: 1.5 });
    a.finish();
    expect([...a.results]).toEqual([2, 1]);
    expect([...a.failed]).toEqual([0, 1]);
    expect([a.failedRows, a.outsideErrors, a.unprocessed]).toEqual([1, 1, 10]);
    expect(a.fingerprint).toBe(b.fingerprint);
    const c = new SampledRun(BLOCK, 'B', '/c');
    for (const l of lines) c.resultLine(l);
    c.errorLine({ row: 4, key: 'k5', stratum: '(missing)|Reject', weight: 1.5 });
    expect(c.fingerprint).not.toBe(a.fingerprint);
  });

  const bad: [string, () => void, RegExp][] = [
    [
      'a results line without a stratum',
      () => new SampledRun(BLOCK, 'A', '/a').resultLine({ row: 7, key: 'k7' }),
      /Expected every line of \/a\/results\.ndjson \(run A, a sample\) to carry its stratum and weight, got none on the line of row 7 \(key "k7"\)/,
    ],
    [
      'an unknown stratum',
      () => new SampledRun(BLOCK, 'A', '/a').resultLine({ row: 7, key: 'k7', stratum: 'nope', weight: 1 }),
      /one of the 2 strata of its manifest\.json, got "nope"/,
    ],
    [
      'another weight',
      () => new SampledRun(BLOCK, 'A', '/a').errorLine({ row: 7, key: 'k7', stratum: '(missing)|Reject', weight: 2 }),
      /errors\.ndjson \(stratum '\(missing\)\|Reject', 2 of 3\) to weigh 1\.5, got 2/,
    ],
    [
      'a weight that is not a number',
      () =>
        new SampledRun(BLOCK, 'A', '/a').resultLine({ row: 7, key: 'k7', stratum: '(missing)|Reject', weight: '1.5' }),
      /to weigh 1\.5, got "1\.5"/,
    ],
    [
      'more rows than sampled',
      () => {
        const r = new SampledRun(BLOCK, 'A', '/a');
        for (let i = 0; i < 3; i += 1)
          r.resultLine({ row: i + 1, key: `k${i}`, stratum: '(missing)|Reject', weight: 1.5 });
        r.finish();
      },
      /Expected at most 2 rows of stratum '\(missing\)\|Reject' in run A \(\/a\), as its manifest\.json sampled, got 3 \(3 in results, 0 in errors\)/,
    ],
  ];
  for (const [what, f, message] of bad) {
    it(`refuses ${what} (SAMPLE_INVALID)`, () => {
      const e = refusal(f);
      expect(e.code).toBe('SAMPLE_INVALID');
      expect(e.message).toMatch(message);
    });
  }
});

describe('sampleEstimates on a hand case', () => {
  // Stratum h0: N = 10, n = 4 (w 2.5); h1: N = 6, n = 2 (w 3), one of its rows failed (outside the domain).
  // Keys: h0 A✓B✓ out 0 amt 1000/1200 | h0 A✓B✗ out 1 amt 2000 | h0 A✗B✗ out ? | h0 A✗B✓ out 0 amt –/500 | h1 A✓B✓ out 0 amt 800/800
  it('weights by stratum, keeps the failed row in n_h, and fills every set', () => {
    const strata = [
      { name: 'h0', population: 10, sampled: 4 },
      { name: 'h1', population: 6, sampled: 2 },
    ];
    const u = new SampleUnits([], new Map(), Float64Array.from([2.5, 3]));
    const add = (h: number, a: [string, number | null], b: [string, number | null], outcome: 0 | 1 | null): void =>
      u.add(h, sideView(wf(a[0], a[1]) as never, 'payday'), sideView(wf(b[0], b[1]) as never, 'payday'), outcome);
    add(0, ['Approve', 1000], ['Approve', 1200], 0);
    add(0, ['Approve', 2000], ['Reject', null], 1);
    add(0, ['Reject', null], ['Reject', null], null);
    add(0, ['Reject', null], ['Approve', 500], 0);
    add(1, ['Approve', 800], ['Approve', 800], 0);
    const e = sampleEstimates(u.table(), u.weightedFeatures(), {
      strata,
      decisions: true,
      withOutcome: true,
      specs: [],
      replicates: 100,
      seed: 's',
    });
    // Σw over the compared keys: 4·2.5 + 3 = 13 (h1's failed row is outside them); both strata have a key: 16 rows.
    expect(e.population).toBe(16);
    expect(e.compared_population.estimate).toBeCloseTo(13, 12);
    expect(e.approval?.a?.estimate).toBeCloseTo((2.5 * 2 + 3) / 13, 12);
    expect(e.approval?.b?.estimate).toBeCloseTo((2.5 * 2 + 3) / 13, 12);
    expect(e.approval?.difference?.estimate).toBeCloseTo(0, 12);
    expect(e.swaps?.swap_out.count.estimate).toBeCloseTo(2.5, 12);
    expect(e.swaps?.swap_in.share?.estimate).toBeCloseTo(2.5 / 13, 12);
    expect(e.swaps?.net.estimate).toBeCloseTo(0, 12);
    // Bad rate of A's approved: bads 2.5 over known 2.5·2 + 3 = 8.
    expect(e.bad_rates?.a_approved).toMatchObject({ sample: 3, sample_known: 3, sample_bad: 1 });
    expect(e.bad_rates?.a_approved.bad_rate?.estimate).toBeCloseTo(2.5 / 8, 12);
    expect(e.bad_rates?.all.coverage?.estimate).toBeCloseTo(10.5 / 13, 12);
    expect(e.bad_rates?.swap_out.bad_rate?.estimate).toBe(1);
    expect(e.amounts?.a_total.estimate).toBeCloseTo(2.5 * 3000 + 3 * 800, 9);
    expect(e.amounts?.b_total.estimate).toBeCloseTo(2.5 * 1700 + 3 * 800, 9);
    expect(e.amounts?.change.estimate).toBeCloseTo(2.5 * -1300, 9);
    expect(e.amounts?.swap_in_total.estimate).toBeCloseTo(2.5 * 500, 9);
    expect(e.amounts?.swap_out_total.estimate).toBeCloseTo(2.5 * 2000, 9);
    expect(e.scores).toBeNull();
    expect(e.df).toBe(5 - 2);
  });
});

describe('--replicates', () => {
  it('defaults to 1,000 and takes at least 100', () => {
    expect(resolveCompareOptions({ outA: 'a', outB: 'b' }).replicates).toBe(1000);
    expect(resolveCompareOptions({ outA: 'a', outB: 'b', replicates: 250 }).replicates).toBe(250);
    for (const bad of [99, 0, 2.5, Number.NaN]) {
      expect(() => resolveCompareOptions({ outA: 'a', outB: 'b', replicates: bad })).toThrow(
        /Expected --replicates to be a whole number of at least 100, got/,
      );
    }
  });
});
