import fc from 'fast-check';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { csvField, csvRecords } from '../../../src/output/files/csv-line.js';

describe('csvRecords', () => {
  it.each([
    ['plain', 'plain'],
    ['', ''],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['cr\r', '"cr\r"'],
    ["'=x", "'=x"],
    ['naïve 😀', 'naïve 😀'],
  ])('%j -> %j', (value, want) => {
    expect(csvField(value)).toBe(want);
  });

  it('writes what csv-stringify writes with its defaults, for any records', () => {
    const field = fc.oneof(
      fc.string(),
      fc.constantFrom('', ',', '"', '\n', '\r\n', '""', ' , '),
      fc.string({ unit: fc.constantFrom('a', ',', '"', '\n', '\r', ' ', 'é') }),
    );
    fc.assert(
      fc.property(
        fc.array(fc.array(field, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 8 }),
        (records) => {
          expect(csvRecords(records)).toBe(stringify(records));
        },
      ),
      { numRuns: 500 },
    );
  });
});
