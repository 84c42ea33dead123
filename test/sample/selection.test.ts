/**
 * The stable selection (src/sample/selection.ts, src/sample/draw.ts): the n_h keys of smallest
 * sha256(seed + NUL + key) per stratum, whatever order the rows come in, the same across a resume (a read
 * started over) and across shards (the union of the shards' chosen rows is the unsharded selection), and
 * another seed another sample.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { shardOf } from '../../src/input/shard.js';
import { resolveSampleOptions } from '../../src/sample/design.js';
import type { SampleDesign } from '@bre-batch/formats/manifest';
import { SampleDraw, StrataCount, weightOf } from '../../src/sample/draw.js';
import { BottomK, sampleHash } from '../../src/sample/selection.js';
import { stratumValues } from '../../src/sample/strata.js';

interface Row {
  readonly row: number;
  readonly key: string;
  readonly data: Record<string, unknown>;
}

const MONTHS = ['2025-01-15', '2025-02-10', '2025-03-03', '', '2025-04-30'];
/** 1,000 rows over 5 months (one of them missing) and 2 channels, unevenly. */
const ROWS: Row[] = Array.from({ length: 1000 }, (_, i) => ({
  row: i + 1,
  key: `CC-${String(i + 1).padStart(5, '0')}`,
  data: { application_date: MONTHS[(i * 3 + (i >> 4)) % 5], channel: i % 7 === 0 ? 'partner' : 'direct' },
}));

function draw(
  rows: readonly Row[],
  options: Parameters<typeof resolveSampleOptions>[0],
): { design: SampleDesign; chosen: Map<number, number> } {
  const spec = resolveSampleOptions(options)!;
  const count = new StrataCount();
  for (const r of rows) count.add(stratumValues(r.data, spec.stratifyBy));
  const design = count.design(spec);
  const d = new SampleDraw(design);
  for (const r of rows) d.offer(stratumValues(r.data, spec.stratifyBy), r.key, r.row);
  return { design, chosen: d.chosen() };
}

const OPTIONS = { sampleShare: '0.2', stratifyBy: 'application_date:month,channel' };

describe('sampleHash', () => {
  it('is sha256 of the seed, a NUL and the key, in hex', () => {
    expect(sampleHash('bre-batch', 'CC-00001')).toBe(
      createHash('sha256').update(Buffer.from('bre-batch\0CC-00001', 'utf8')).digest('hex'),
    );
    expect(sampleHash('bre-batch', 'CC-00001')).not.toBe(sampleHash('bre-batch2', 'CC-00001'));
    // the NUL keeps seed and key apart: ('a', 'bc') is not ('ab', 'c')
    expect(sampleHash('a', 'bc')).not.toBe(sampleHash('ab', 'c'));
  });
});

describe('BottomK', () => {
  it('keeps the k smallest (hash, then row) of any stream', () => {
    const items = Array.from({ length: 500 }, (_, i) => ({ hash: sampleHash('s', String(i % 450)), row: i + 1 }));
    for (const k of [0, 1, 2, 17, 450, 500, 600]) {
      const b = new BottomK(k);
      for (const it of items) b.offer(it);
      const expected = [...items]
        .sort((a, c) => (a.hash < c.hash ? -1 : a.hash > c.hash ? 1 : a.row - c.row))
        .slice(0, k);
      expect(b.sorted()).toEqual(expected);
      expect(b.size).toBe(Math.min(k, items.length));
    }
  });
});

describe('the draw', () => {
  it('keeps, per stratum, the n_h rows of smallest hash (checked by sorting whole strata)', () => {
    const { design, chosen } = draw(ROWS, OPTIONS);
    expect(design.population).toBe(1000);
    expect(design.sampled).toBe(design.strata.reduce((s, x) => s + x.sample, 0));
    expect(chosen.size).toBe(design.sampled);
    design.strata.forEach((s, i) => {
      const members = ROWS.filter(
        (r) =>
          JSON.stringify(
            stratumValues(r.data, [
              { column: 'application_date', group: 'month' },
              { column: 'channel', group: null },
            ]),
          ) === JSON.stringify(s.values),
      );
      expect(members.length).toBe(s.population);
      const smallest = members
        .map((r) => ({ row: r.row, hash: sampleHash('bre-batch', r.key) }))
        .sort((a, b) => (a.hash < b.hash ? -1 : 1))
        .slice(0, s.sample)
        .map((r) => r.row)
        .sort((a, b) => a - b);
      expect(
        [...chosen]
          .filter(([, h]) => h === i)
          .map(([row]) => row)
          .sort((a, b) => a - b),
      ).toEqual(smallest);
      expect(weightOf(s)).toBe(s.population / s.sample);
    });
    // the missing month is a stratum of its own, listed after the months
    expect(design.strata.slice(-2).map((s) => s.name)).toEqual(['(missing)|direct', '(missing)|partner']);
  });

  it('chooses the same rows in any read order (a resume that starts over reads them again)', () => {
    const a = draw(ROWS, OPTIONS);
    const shuffled = [...ROWS].sort((x, y) => sampleHash('order', x.key).localeCompare(sampleHash('order', y.key)));
    const b = draw(shuffled, OPTIONS);
    expect(b.design).toEqual(a.design);
    expect(new Map([...b.chosen].sort((x, y) => x[0] - y[0]))).toEqual(
      new Map([...a.chosen].sort((x, y) => x[0] - y[0])),
    );
  });

  it('shards: each worker draws the same sample and runs its share; the union is the unsharded selection', () => {
    const whole = draw(ROWS, OPTIONS);
    const keyOf = new Map(ROWS.map((r) => [r.row, r.key]));
    const union = new Set<number>();
    for (let k = 1; k <= 3; k += 1) {
      const worker = draw(ROWS, OPTIONS);
      expect(worker.design).toEqual(whole.design);
      for (const row of worker.chosen.keys())
        if (shardOf(keyOf.get(row), row, 3) === k) {
          expect(union.has(row)).toBe(false);
          union.add(row);
        }
    }
    expect([...union].sort((a, b) => a - b)).toEqual([...whole.chosen.keys()].sort((a, b) => a - b));
  });

  it('another seed draws another sample of the same design', () => {
    const a = draw(ROWS, OPTIONS);
    const b = draw(ROWS, { ...OPTIONS, seed: 'another' });
    expect(b.design.strata).toEqual(a.design.strata);
    const same = [...b.chosen.keys()].filter((r) => a.chosen.has(r)).length;
    // two independent 20% samples share about 20% of their rows
    expect(same / a.chosen.size).toBeGreaterThan(0.08);
    expect(same / a.chosen.size).toBeLessThan(0.35);
  });

  it('refuses strata whose names collide', () => {
    const rows = [
      { row: 1, key: 'a', data: { x: 'a|b', y: 'c' } },
      { row: 2, key: 'b', data: { x: 'a', y: 'b|c' } },
    ];
    expect(() => draw(rows, { sample: '2', stratifyBy: 'x,y' })).toThrow(/both named 'a\|b\|c'/);
    expect(() =>
      draw(
        [
          { row: 1, key: 'a', data: { x: '(missing)' } },
          { row: 2, key: 'b', data: { x: '' } },
        ],
        { sample: '2', stratifyBy: 'x' },
      ),
    ).toThrow(/both named '\(missing\)'/);
  });

  it('a row whose stratum the first read did not see means the input changed between the reads', () => {
    const spec = resolveSampleOptions({ sample: '2', stratifyBy: 'x' })!;
    const count = new StrataCount();
    count.add(['1']);
    const d = new SampleDraw(count.design(spec));
    expect(() => d.offer(['2'], 'k', 5)).toThrow(/input changed while it was read/);
  });
});
