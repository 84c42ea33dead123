import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { benchCompare } from '../../../bench/compare.js';
import { benchCoverage, coverageRow } from '../../../bench/coverage.js';
import { runInProcess } from '../../../test/helpers/cli-in-process.js';
import { tempDir } from '../../../test/helpers/temp.js';

// The benchmark runs the compare in a child process from the build (dist/), as `npm run bench` does; vitest's
// global setup has built it.
describe('benchCompare', () => {
  it('synthesises two runs, compares them (with --score and --period) in a child process and reports time and peak RSS', async () => {
    const dir = join(tempDir(), 'bench');
    const r = await benchCompare({ rows: 3000, dir, risk: true });
    expect(r.rows).toBe(3000);
    expect(r.seconds).toBeGreaterThan(0);
    // A Node process cannot run in less than ~20 MB; a compare of 3000 rows needs far less than 1 GB.
    expect(r.peakRssMb).toBeGreaterThan(20);
    expect(r.peakRssMb).toBeLessThan(1024);
    expect(r.resultsMb).toBeGreaterThan(1);
    expect(r.buckets).toBeGreaterThanOrEqual(1);
    expect(readdirSync(dir)).toEqual([]);
  });
});

// The coverage simulation of the sampled estimators (bench/coverage.ts, `npm run bench -- --only coverage`), on the shipped
// sample's make at its own size and with two seeds: the same machinery as the 200-seed run, its runs and compares
// in this process (the bench spawns them; a process adds only start-up, which it does not measure here).
describe('benchCoverage', () => {
  it('runs the input whole once, takes the truth from a census, compares samples of it, and a real sampled run equals its derived folder', async () => {
    const dir = tempDir();
    const r = await benchCoverage({ dir, rows: 1500, share: 0.2, seeds: 2, realRuns: 1, cli: runInProcess });
    expect([r.rows, r.sampled, r.strata, r.seeds]).toEqual([1500, 300, 16, 2]);
    // The census (weight 1 everywhere) gives compare's plain figures of the full folder.
    expect(r.plain_vs_census.approval_rate_a).toBeLessThan(1e-12);
    expect(r.plain_vs_census.bad_rate_a_approved).toBeLessThan(1e-12);
    // The shipped sample's whole-run figures (README, On a sample: 52.2% approved by the champion, 11.4% swapped out).
    const full = Object.fromEntries(r.table.map((t) => [t.figure, t.full]));
    expect(full.approval_rate_a).toBeCloseTo(0.522, 3);
    expect(full.swap_out_share).toBeCloseTo(0.114, 3);
    expect(full.auc_champion).toBeGreaterThan(0.6);
    expect(r.real_runs_identical).toEqual(['coverage-1']);
    for (const t of r.table) {
      expect([t.seeds, t.no_interval]).toEqual([2, 0]);
      expect(t.covered).toBeLessThanOrEqual(2);
      expect(t.mean_se).toBeGreaterThan(0);
      expect(t.sd_of_estimates).toBeGreaterThan(0);
    }
  }, 180_000);
});

describe('coverageRow: one figure of the coverage table', () => {
  const est = (estimate: number, se: number | null, ci: [number, number] | null) => ({
    estimate,
    se,
    ci: ci && { lower: ci[0], upper: ci[1] },
  });

  it("counts the intervals holding the full run's value, ends included, over every seed", () => {
    const row = coverageRow(
      'approval_rate_a',
      0.5,
      [
        est(0.48, 0.01, [0.46, 0.5]), // the upper end: covered
        est(0.53, 0.01, [0.51, 0.55]), // misses
        est(0.5, 0, null), // no interval (no variation): not covered
        est(0.52, 0.02, [0.48, 0.56]),
      ],
      5,
    ); // a fifth seed gave no estimate
    expect(row).toMatchObject({
      figure: 'approval_rate_a',
      full: 0.5,
      seeds: 5,
      covered: 2,
      no_interval: 2,
      coverage: 0.4,
      in_target: false,
    });
    expect(row.mean_half_width).toBeCloseTo((0.02 + 0.02 + 0.04) / 3, 12);
    expect(row.mean_se).toBeCloseTo(0.04 / 4, 12);
    // Estimates 0.48, 0.53, 0.5, 0.52: mean 0.5075, sample SD with n − 1.
    expect(row.sd_of_estimates).toBeCloseTo(Math.sqrt((0.0275 ** 2 + 0.0225 ** 2 + 0.0075 ** 2 + 0.0125 ** 2) / 3), 12);
    // z over the seeds with an SE above 0: −2, 3, 1.
    expect(row.mean_z).toBeCloseTo(2 / 3, 12);
    expect(row.sd_z).toBeCloseTo(Math.sqrt(((-2 - 2 / 3) ** 2 + (3 - 2 / 3) ** 2 + (1 - 2 / 3) ** 2) / 2), 12);
  });

  const cases: [number, boolean][] = [
    [92, false],
    [93, true],
    [95, true],
    [97, true],
    [98, false],
  ];
  for (const [covered, inTarget] of cases) {
    it(`${covered} of 100 covered is ${inTarget ? 'in' : 'outside'} the 93-97% target`, () => {
      const list = Array.from({ length: 100 }, (_, i) =>
        est(i < covered ? 0.5 : 0.9, 0.1, i < covered ? [0.4, 0.6] : [0.8, 1]),
      );
      expect(coverageRow('auc_champion', 0.5, list, 100).in_target).toBe(inTarget);
    });
  }
});
