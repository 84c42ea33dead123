import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { benchCompare } from '../../bench/compare.js';
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
});
