/**
 * `compare --score-missing` (issue 31): a bureau score of -1 (no credit history) is no score. By default the
 * keys holding it are counted apart (compare.json `no_score`, the report's power table and a note), and left
 * out of the deciles, the cut-off table and the power; `--score-missing none` ranks -1 as the lowest score
 * (the old behaviour), `--score-missing=-1,0` adds a marker, and a value that is not a number is exit 2.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { wf, writeRunFolder } from '../../packages/backtest/test/fixtures.js';

const N = 400;
/** Key i's bureau score: every 10th key has no history (-1), every 25th a 0; others 300-899, bads lower. */
const scoreOf = (i: number) => (i % 10 === 0 ? -1 : i % 25 === 0 ? 0 : 300 + ((i * 37) % 600));
const badOf = (i: number) => (i % 10 === 0 ? i % 20 === 0 : scoreOf(i) < 500 ? i % 2 === 0 : i % 7 === 0);

function folders(): { a: string; b: string; root: string } {
  const root = tempDir();
  const input = join(root, 'input.csv');
  writeFileSync(
    input,
    'reference_id,bad\n' + Array.from({ length: N }, (_, k) => `k${k + 1},${badOf(k + 1) ? 1 : 0}\n`).join(''),
  );
  const lines = (shift: number) =>
    Array.from({ length: N }, (_, k) => {
      const i = k + 1;
      const s = scoreOf(i);
      return {
        row: i,
        key: `k${i}`,
        stages: { bre: wf(s >= 600 ? 'Approve' : 'Reject', null, { 'features.score': s <= 0 ? s : s + shift }) },
      };
    });
  return {
    root,
    a: writeRunFolder(join(root, 'a'), { lines: lines(0), inputPath: input }),
    b: writeRunFolder(join(root, 'b'), { lines: lines(5), inputPath: input }),
  };
}

async function compare(f: { a: string; b: string; root: string }, name: string, ...more: string[]) {
  const out = join(f.root, name);
  const r = await spawnCli(
    ['compare', f.a, f.b, '--outcome', 'bad', '--score', 'features.score', '--out', out, ...more],
    {},
  );
  expect(r.code, r.stderr).toBe(0);
  const json = JSON.parse(readFileSync(join(out, 'compare.json'), 'utf8'));
  return { r, side: json.comparisons[0].scores[0].a, html: readFileSync(join(out, 'report.html'), 'utf8') };
}

describe('compare --score-missing', () => {
  it('by default -1 is no score: counted apart, out of the deciles and the cut-off table', async () => {
    const f = folders();
    const { r, side, html } = await compare(f, 'default');
    const minus = Array.from({ length: N }, (_, k) => k + 1).filter((i) => scoreOf(i) === -1);
    expect(side.no_score).toMatchObject({
      keys: minus.length,
      markers: [{ value: -1, keys: minus.length, bad: minus.filter(badOf).length }],
    });
    expect(side.scored.keys).toBe(N - minus.length);
    expect(side.missing.keys).toBe(0);
    expect(Math.min(...side.decile_edges)).toBeGreaterThanOrEqual(0);
    expect(side.tradeoff.every((t: { cutoff: number }) => t.cutoff !== -1)).toBe(true);
    expect(html).toContain('carry a no-score marker');
    expect(r.stdout).toContain(`no-score markers A ${minus.length}, B ${minus.length}`);
  });

  it('none ranks -1 as a score; -1,0 takes out the zeros too; a value that is not a number is exit 2', async () => {
    const f = folders();
    const none = await compare(f, 'none', '--score-missing', 'none');
    expect(none.side.no_score.keys).toBe(0);
    expect(none.side.scored.keys).toBe(N);
    expect(Math.min(...none.side.decile_edges)).toBe(-1);

    const both = await compare(f, 'both', '--score-missing=-1,0');
    const zeros = Array.from({ length: N }, (_, k) => k + 1).filter((i) => scoreOf(i) === 0).length;
    expect(both.side.no_score.markers.map((m: { value: number; keys: number }) => [m.value, m.keys])).toEqual([
      [-1, N / 10],
      [0, zeros],
    ]);
    expect(Math.min(...both.side.decile_edges)).toBeGreaterThanOrEqual(300);

    const bad = await spawnCli(
      [
        'compare',
        f.a,
        f.b,
        '--outcome',
        'bad',
        '--score',
        'features.score',
        '--out',
        join(f.root, 'bad'),
        '--score-missing',
        'abc',
      ],
      {},
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("Expected --score-missing to list numbers (e.g. -1,0) or none, got 'abc'");
  });
});
