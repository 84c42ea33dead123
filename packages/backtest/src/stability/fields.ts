/**
 * PSI over time of every numeric result field of one comparison, on both sides: bins are A's deciles (the
 * feature bins already fixed from A's sample for the A-vs-B PSI), counted per period of the key.
 */
import { binLabels, binOf, type FeatureBins } from '../features.js';
import type { Json } from '@bre-batch/core/types';
import { OverTime, type StabilityFigures } from './over-time.js';

export class FieldStability {
  private readonly fields: { name: string; bins: FeatureBins; a: OverTime; b: OverTime }[] = [];

  constructor(featureBins: ReadonlyMap<string, FeatureBins>) {
    for (const [name, bins] of featureBins) {
      if (bins.type !== 'numeric') continue;
      const n = binLabels(bins).length;
      this.fields.push({ name, bins, a: new OverTime(n), b: new OverTime(n) });
    }
  }

  /** One compared key; a side whose stage did not run is not counted. */
  add(
    period: string,
    fa: Readonly<Record<string, Json>>,
    fb: Readonly<Record<string, Json>>,
    ranA: boolean,
    ranB: boolean,
  ): void {
    for (const f of this.fields) {
      if (ranA) f.a.add(period, binOf(f.bins, fa[f.name]));
      if (ranB) f.b.add(period, binOf(f.bins, fb[f.name]));
    }
  }

  figures(minKeys: number): StabilityFigures[] {
    return this.fields.flatMap((f) =>
      f.a.sameAs(f.b)
        ? [f.a.figures(f.name, 'a=b', 'numeric', minKeys)]
        : [f.a.figures(f.name, 'a', 'numeric', minKeys), f.b.figures(f.name, 'b', 'numeric', minKeys)],
    );
  }
}
