/**
 * The user's path end to end: `bre-batch run champion_challenger` against the built-in sandbox writes both sides
 * in one output folder, then `bre-batch compare OUT OUT` writes the three files. Spawns the built CLI.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CompareJson } from '../src/compare.js';
import { ROOT, spawnCli as cli } from '../../../test/helpers/cli.js';
import { tempDir } from '../../../test/helpers/temp.js';

/** 24 rows of the shipped sample, each with a PAN in the documented shape (5 letters, 4 digits, 1 letter). */
function input(dir: string): string {
  const [header, ...rows] = readFileSync(join(ROOT, 'samples', 'champion_challenger.csv'), 'utf8')
    .trimEnd()
    .split('\n');
  const cols = header.split(',');
  const pan = cols.indexOf('pan_number');
  const out = rows.slice(0, 24).map((line, i) => {
    const cells = line.split(',');
    cells[pan] = `ABCDE${String(1000 + i)}F`;
    return cells.join(',');
  });
  const path = join(dir, 'input.csv');
  writeFileSync(path, [header, ...out].join('\n') + '\n');
  return path;
}

describe('champion / challenger run, then compare (CLI, sandbox)', () => {
  it('produces compare.csv, compare.json and report.html', async () => {
    const dir = tempDir();
    const out = join(dir, 'run');
    const run = await cli([
      'run',
      'champion_challenger',
      '--input',
      input(dir),
      '--out',
      out,
      '--no-progress',
      '--rate',
      'workflow=50/s',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const cmp = await cli([
      'compare',
      out,
      out,
      '--outcome',
      'defaulted',
      '--by',
      'state',
      '--score',
      'bureau_intel.bureau_score',
      '--period',
      'application_date',
    ]);
    expect(cmp.code, cmp.stderr).toBe(0);
    expect(cmp.stdout).toMatch(/^compared 24 keys; only in A 0, only in B 0/);
    expect(cmp.stdout).toMatch(
      /score bureau_intel\.bureau_score: Gini A -?\d\.\d{3}, B -?\d\.\d{3}; same values in A and B; missing A 0, B 0/,
    );
    // The first 24 applications of the sample are from July 2024 but for row 17, which has no date: both small.
    expect(cmp.stdout).toContain('2 periods by month (2 small)');
    // A folder of its own beside the run's, named by it; nothing written into the run's folder.
    const folder = join(dir, 'compare-run-champion-vs-challenger');
    expect(cmp.stdout).toContain(`wrote ${join(folder, 'compare.csv')}`);
    expect(readdirSync(out).filter((f) => f.startsWith('compare'))).toEqual([]);
    for (const f of ['compare.csv', 'compare.json', 'report.html']) expect(existsSync(join(folder, f))).toBe(true);
    const j = JSON.parse(readFileSync(join(folder, 'compare.json'), 'utf8')) as CompareJson;
    const c = j.comparisons[0];
    expect([c.stage_a, c.stage_b, c.n]).toEqual(['champion', 'challenger', 24]);
    expect(c.approval?.a.n).toBe(24);
    expect(c.features.length).toBeGreaterThan(5);
    expect(c.bad_rates?.all.rows).toBe(24);
    const csv = readFileSync(join(folder, 'compare.csv'), 'utf8').trimEnd().split('\n');
    expect(csv).toHaveLength(25);
    expect(
      csv[0].endsWith(',score_a.bureau_intel.bureau_score,score_b.bureau_intel.bureau_score,outcome,segment,period'),
    ).toBe(true);
    expect(c.scores?.[0].keys).toBe(24);
    expect(c.periods?.periods.map((p) => [p.period, p.keys, p.small])).toEqual([
      ['2024-07', 23, true],
      ['(missing)', 1, true],
    ]);

    const bad = await cli(['compare', out, out, '--outcome', 'no_such_column']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Expected --outcome column 'no_such_column'/);

    const dir2 = await cli([
      'compare',
      out,
      out,
      '--outcome',
      'defaulted',
      '--score',
      'bureau_intel.bureau_score',
      '--score-direction',
      'bureau_intel.bureau_score=down',
    ]);
    expect(dir2.code).toBe(2);
    expect(dir2.stderr).toMatch(/Expected --score-direction NAME=higher or NAME=lower/);
  }, 120_000);
});
