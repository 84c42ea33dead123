/**
 * The pure parts of a job (issue 30): a chunk's committed bits and position, --plan's answer for the rest, and
 * which settings make a worker another job's.
 */
import { describe, expect, it } from 'vitest';
import { bitsOf, clearBit, countBits, emptyBits, hasBit, prefixOf, setBit } from '../../src/job/bits.js';
import { planFor } from '../../src/job/status.js';
import { definitionDifferences, type JobDefinition } from '../../src/job/definition.js';

describe("a chunk's committed rows", () => {
  it('rows committed out of order: the position is the prefix without a gap; the count every bit', () => {
    const bits = emptyBits(20);
    for (const i of [0, 1, 2, 4, 5, 19]) expect(setBit(bits, i)).toBe(true);
    expect(setBit(bits, 4)).toBe(false);
    expect(prefixOf(bits, 20)).toBe(3);
    expect(countBits(bits, 20)).toBe(6);
    setBit(bits, 3);
    expect(prefixOf(bits, 20)).toBe(6);
    expect(hasBit(bits, 19)).toBe(true);
    expect(clearBit(bits, 1)).toBe(true);
    expect(prefixOf(bits, 20)).toBe(1);
  });

  it('a full chunk, across whole bytes and a partial last byte', () => {
    const bits = emptyBits(21);
    for (let i = 0; i < 21; i += 1) setBit(bits, i);
    expect(prefixOf(bits, 21)).toBe(21);
    expect(countBits(bits, 21)).toBe(21);
  });

  it('bits as the database gives them (bytea, or NULL for none) are sized to the chunk', () => {
    expect(countBits(bitsOf(null, 10), 10)).toBe(0);
    expect(prefixOf(bitsOf(Buffer.from([0xff, 0x01]), 10), 10)).toBe(9);
  });
});

describe("job status: --plan's answer for the rest", () => {
  it("fits when the live workers' combined rate covers the rows left in the window", () => {
    expect(planFor(3600, [{ rate: 0.5 }, { rate: 0.5 }], 1)).toEqual({ windowHours: 1, fits: true, moreAddresses: 0 });
  });
  it("else the addresses short, at the live workers' mean rate", () => {
    // 2 workers at 1 row/s: 7,200 rows in an hour; 18,000 left needs 5 workers: 3 more.
    expect(planFor(18_000, [{ rate: 1 }, { rate: 1 }], 1)).toEqual({ windowHours: 1, fits: false, moreAddresses: 3 });
  });
  it('nothing left fits; no worker alive needs at least one', () => {
    expect(planFor(0, [], 1).fits).toBe(true);
    expect(planFor(10, [], 1)).toEqual({ windowHours: 1, fits: false, moreAddresses: 1 });
  });
});

describe('which settings make another job', () => {
  const def: JobDefinition = {
    sink_table: 'loc',
    pipeline: { name: 'location', sha256: 'a'.repeat(64) },
    input: { kind: 'file', identity: 'of 10 bytes, sha256 b', reading: 'r1' },
    key: 'reference_id',
    rates: 'workflow=500/min',
  };
  it('the same: none', () => {
    expect(definitionDifferences(def, { ...def })).toEqual([]);
  });
  it('each difference named', () => {
    const other: JobDefinition = {
      ...def,
      pipeline: { name: 'bank', sha256: 'c'.repeat(64) },
      rates: 'workflow=400/min',
      sink_table: 'other',
    };
    const d = definitionDifferences(def, other);
    expect(d).toHaveLength(3);
    expect(d.join('\n')).toMatch(/the pipeline: the job runs 'location'/);
    expect(d.join('\n')).toMatch(/the rate: the job runs at workflow=500\/min, this worker at workflow=400\/min/);
    expect(d.join('\n')).toMatch(/the sink table/);
  });
  it('how a file is read counts only when this worker has read it', () => {
    expect(definitionDifferences(def, { ...def, input: { ...def.input, reading: undefined } })).toEqual([]);
    expect(definitionDifferences(def, { ...def, input: { ...def.input, reading: 'r2' } })).toHaveLength(1);
  });
});
