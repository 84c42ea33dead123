/**
 * The user's path end to end: `bre-batch run champion_challenger` against the built-in sandbox writes both sides
 * in one output folder, then `bre-batch compare OUT OUT` writes the three files. Spawns the built CLI.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CompareJson } from '../../src/backtest/compare.js';
import { ROOT, spawnCli as cli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

/** 24 rows of the shipped sample, each with a PAN in the documented shape (5 letters, 4 digits, 1 letter). */
function input(dir: string): string {
  const [header, ...rows] = readFileSync(join(ROOT, 'samples', 'champion_challenger.csv'), 'utf8').trimEnd().split('\n');
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
    const run = await cli(['run', 'champion_challenger', '--input', input(dir), '--out', out, '--no-progress', '--rate', 'workflow=50/s']);
    expect(run.code, run.stderr).toBe(0);
    const cmp = await cli(['compare', out, out, '--outcome', 'defaulted', '--by', 'state']);
    expect(cmp.code, cmp.stderr).toBe(0);
    expect(cmp.stdout).toMatch(/^compared 24 keys; only in A 0, only in B 0/);
    const folder = join(out, 'compare-champion-vs-challenger');
    for (const f of ['compare.csv', 'compare.json', 'report.html']) expect(existsSync(join(folder, f))).toBe(true);
    const j = JSON.parse(readFileSync(join(folder, 'compare.json'), 'utf8')) as CompareJson;
    const c = j.comparisons[0];
    expect([c.stage_a, c.stage_b, c.n]).toEqual(['champion', 'challenger', 24]);
    expect(c.approval?.a.n).toBe(24);
    expect(c.features.length).toBeGreaterThan(5);
    expect(c.bad_rates?.all.rows).toBe(24);
    expect(readFileSync(join(folder, 'compare.csv'), 'utf8').trimEnd().split('\n')).toHaveLength(25);

    const bad = await cli(['compare', out, out, '--outcome', 'no_such_column']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Expected --outcome column 'no_such_column'/);
  }, 120_000);
});
