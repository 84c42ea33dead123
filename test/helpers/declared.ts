/** A normaliser's result against the fields its stage kind declares: each present, each value of its declared kind. */
import { expect } from 'vitest';
import { kindOfTypes } from '../../src/output/files/parquet/schema.js';
import { kindBits, typeBit } from '../../src/output/journal/columns.js';
import type { ResultField } from '@bre-batch/core/types';

export function expectDeclared(result: Record<string, unknown>, fields: readonly ResultField[]): void {
  for (const f of fields) {
    expect(result).toHaveProperty([f.name]);
    const v = result[f.name];
    // A value of another kind would widen the column: the declaration would be wrong for the answers seen.
    if (v !== null)
      expect({ field: f.name, kind: kindOfTypes(typeBit(v) | kindBits(f.kind)) }).toEqual({
        field: f.name,
        kind: f.kind,
      });
  }
}
