import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { benchCompare } from '../../bench/compare.js';
import { benchSampleCoverage, coverageTable } from '../../bench/sample-coverage.js';
import { tempDir } from '../helpers/temp.js';

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

  it('sample coverage: runs the whole input once, compares samples of it and counts the intervals holding the full run', async () => {
    const dir = join(tempDir(), 'coverage');
    const r = await benchSampleCoverage({ dir, rows: 1500, seeds: 3, replicates: 100 });
    expect([r.rows, r.sampled, r.seeds]).toEqual([1500, 300, 3]);
    const auc = r.figures.find((f) => f.figure.startsWith('AUC'));
    expect(auc?.truth).toBeGreaterThan(0.6);
    expect(auc?.seeds).toBe(3);
    expect(r.figures.filter((f) => f.target).map((f) => f.figure)).toEqual([
      'approval rate A', 'approval rate B', 'swap-out share', 'bad rate of A\u2019s approved set', 'AUC of the champion\u2019s bureau score',
    ]);
    for (const f of r.figures) expect(f.covered).toBeLessThanOrEqual(f.seeds);
    expect(coverageTable(r)).toMatch(/^\| figure \| full run \| covered/);
    expect(readdirSync(dir).sort()).toEqual(['cmp-full', 'input.csv']);
  }, 120_000);
});
