/** The sandbox's pincode table is what ../scripts/build-pincode-table.ts builds from its two packages today. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildPincodeTable, TABLE_PATH } from '../scripts/build-pincode-table.js';

describe('pincode table', () => {
  it("the committed src/geo/pincode-table.ts is the generator's output (re-run the script after changing it)", () => {
    const built = buildPincodeTable();
    expect(
      built.text === readFileSync(TABLE_PATH, 'utf8'),
      'pincode-table.ts differs from what `npx tsx packages/sandbox/scripts/build-pincode-table.ts` writes',
    ).toBe(true);
    expect(built.pincodes).toBeGreaterThan(18_000);
    expect(built.states).toBeGreaterThan(30);
  });
});
