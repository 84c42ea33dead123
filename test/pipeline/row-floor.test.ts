/**
 * RowFloor: the lowest row a session may still write a line for. Table-driven over starts and ends, and a
 * seeded walk against a plain model (the least row started and not ended, or one past the last started).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RowFloor } from '../../src/pipeline/row-floor.js';

/** `s N`: row N starts; `e N`: row N ends. The floor after each step. */
const cases: readonly (readonly [string, readonly string[], readonly number[]])[] = [
  ['nothing started: nothing known', [], []],
  ['one row in flight, then ended', ['s 1', 'e 1'], [1, 2]],
  [
    'rows end out of order: the floor waits for the lowest',
    ['s 1', 's 2', 's 3', 'e 2', 'e 3', 'e 1'],
    [1, 1, 1, 1, 1, 4],
  ],
  ['rows skipped between starts (resumed, other shards)', ['s 3', 's 9', 'e 3', 'e 9', 's 20'], [3, 3, 9, 10, 20]],
  [
    "a row that starts below one before (a job's chunks): off for the session",
    ['s 5', 's 2', 'e 5', 'e 2', 's 9'],
    [5, 0, 0, 0, 0],
  ],
  ['the same row twice: off', ['s 4', 'e 4', 's 4'], [4, 5, 0]],
];

describe('RowFloor', () => {
  it.each(cases)('%s', (_name, steps, floors) => {
    const f = new RowFloor();
    const tickets = new Map<number, number>();
    const seen = steps.map((step) => {
      const [what, n] = step.split(' ');
      const row = Number(n);
      if (what === 's') tickets.set(row, f.start(row));
      else f.end(tickets.get(row)!);
      return f.floor;
    });
    expect(f.floor).toBe(floors.at(-1) ?? 0);
    expect(seen).toEqual(floors);
  });

  it('matches the least row in flight (or one past the last started) over any order of ends, past its first ring size', () => {
    let deepest = 0;
    fc.assert(
      fc.property(
        // Seven starts in ten: hundreds of rows in flight, past the ring's first 256 slots.
        fc.array(fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 9 }), fc.nat()), {
          minLength: 900,
          maxLength: 1500,
        }),
        (steps) => {
          const f = new RowFloor();
          const inFlight = new Map<number, number>(); // row -> ticket
          let row = 0;
          for (const [gap, die, pick] of steps) {
            if (die < 7 || inFlight.size === 0) {
              row += gap;
              inFlight.set(row, f.start(row));
            } else {
              const rows = [...inFlight.keys()];
              const ended = rows[pick % rows.length]!;
              f.end(inFlight.get(ended)!);
              inFlight.delete(ended);
            }
            const want = inFlight.size > 0 ? Math.min(...inFlight.keys()) : row + 1;
            expect(f.floor).toBe(want);
            deepest = Math.max(deepest, inFlight.size);
          }
        },
      ),
      { numRuns: 60, seed: 20261129 },
    );
    // The walks went past the ring's first size (256 slots), so its growth was crossed.
    expect(deepest).toBeGreaterThan(256);
  });
});
