/** The sink's table and column names and kinds (pure): names within the database's limit, kinds widening as Parquet's. */
import { describe, expect, it } from 'vitest';
import { isBreError } from '../../../src/errors.js';
import { columnName, errorColumns, resultFixedColumns, sinkNames, transactionColumns, widerKind } from '../../../src/output/sink/tables.js';
import type { ColumnKind } from '../../../src/types.js';

const LIMITS = [['postgres', 63], ['mysql', 64]] as const;
const bytes = (s: string) => Buffer.byteLength(s);

function usageError(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (err) {
    if (isBreError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('expected a BreError');
}

describe.each(LIMITS)('columnName (%s, %d bytes)', (_dialect, max) => {
  it('keeps a name that fits as it is, up to the limit exactly', () => {
    expect(columnName('decision.decision', max)).toBe('decision.decision');
    const exact = `s.${'f'.repeat(max - 2)}`;
    expect(bytes(exact)).toBe(max);
    expect(columnName(exact, max)).toBe(exact);
  });

  const long = [
    ['ascii one byte past', `stage.${'x'.repeat(max - 5)}`],
    ['ascii far past', `stage.${'x'.repeat(500)}`],
    ['two-byte characters', `étape.${'é'.repeat(60)}`],
    ['three-byte characters', `段階.${'字'.repeat(40)}`],
    ['four-byte characters (surrogate pairs)', `stage.${'😀'.repeat(30)}`],
  ] as const;

  it.each(long)('shortens %s to within the limit, its start kept and a hash at the end', (_what, name) => {
    expect(bytes(name)).toBeGreaterThan(max);
    const short = columnName(name, max);
    expect(bytes(short)).toBeLessThanOrEqual(max);
    expect(short).toMatch(/~[0-9a-f]{8}$/);
    expect(name.startsWith(short.slice(0, 6))).toBe(true);
    // The same name always gives the same column (a resumed run finds it again).
    expect(columnName(name, max)).toBe(short);
  });

  it('never cuts a character in half (the database would get U+FFFD, another name)', () => {
    for (let pad = 0; pad < 8; pad += 1) {
      const short = columnName(`s.${'x'.repeat(pad)}${'😀'.repeat(30)}`, max);
      expect(bytes(short)).toBeLessThanOrEqual(max);
      // Well-formed UTF-16 is what survives a round trip through UTF-8 unchanged.
      expect(Buffer.from(short, 'utf8').toString('utf8')).toBe(short);
    }
  });

  it('never gives two long names the same column, however alike their starts', () => {
    const common = `stage.${'x'.repeat(max)}`;
    const names = Array.from({ length: 2000 }, (_, i) => `${common}${i}`);
    const columns = names.map((n) => columnName(n, max));
    expect(new Set(columns).size).toBe(names.length);
    for (const c of columns) expect(bytes(c)).toBeLessThanOrEqual(max);
    // Nor a long name the column of a short one that reads like its shortened form.
    const short = columnName(names[0], max);
    expect(columnName(short, max)).toBe(short);
    expect(columnName(`${names[0]}!`, max)).not.toBe(short);
  });
});

describe('sinkNames', () => {
  it.each(LIMITS)('names the three tables after NAME (%s)', (_dialect, max) => {
    expect(sinkNames('loans', max)).toEqual({ results: 'loans', errors: 'loans_errors', transactions: 'loans_transactions' });
  });

  it.each(LIMITS)('takes the longest name whose _transactions table still fits (%s)', (_dialect, max) => {
    const longest = 't'.repeat(max - '_transactions'.length);
    expect(sinkNames(longest, max).transactions).toHaveLength(max);
    const e = usageError(() => sinkNames(`${longest}t`, max));
    expect(e.code).toBe('USAGE');
    expect(e.message).toContain(String(max - '_transactions'.length));
  });

  it('counts bytes, not characters', () => {
    // 25 two-byte characters are 50 bytes: fits PostgreSQL's 63 with _transactions; 26 do not.
    expect(sinkNames('é'.repeat(25), 63).results).toBe('é'.repeat(25));
    expect(usageError(() => sinkNames('é'.repeat(26), 63)).code).toBe('USAGE');
  });

  it('refuses an empty name or one with a NUL', () => {
    expect(usageError(() => sinkNames('', 63)).code).toBe('USAGE');
    expect(usageError(() => sinkNames('a\0b', 63)).code).toBe('USAGE');
  });
});

describe('widerKind', () => {
  const KINDS: readonly ColumnKind[] = ['boolean', 'int64', 'double', 'string', 'json', 'timestamp_local_ms', 'date'];
  const expected = (a: ColumnKind, b: ColumnKind): ColumnKind => {
    if (a === b) return a;
    const pair = new Set([a, b]);
    if (pair.has('int64') && pair.has('double')) return 'double';
    return 'string';
  };
  it.each(KINDS.flatMap((a) => KINDS.map((b) => [a, b, expected(a, b)] as const)))('%s with %s is %s', (a, b, want) => {
    expect(widerKind(a, b)).toBe(want);
  });
});

describe('fixed columns', () => {
  it('NAME: row, the sample design when sampled, result, loaded_at', () => {
    expect(resultFixedColumns(false).map((c) => c.name)).toEqual(['row', 'result', 'loaded_at']);
    expect(resultFixedColumns(true).map((c) => [c.name, c.kind])).toEqual([['row', 'int64'], ['stratum', 'string'], ['weight', 'double'], ['result', 'json'], ['loaded_at', 'timestamp_local_ms']]);
  });

  it('NAME_errors and NAME_transactions name the key as the input does', () => {
    const errors = errorColumns('reference_id', false).map((c) => c.name);
    expect(errors).toContain('reference_id');
    expect(errors).not.toContain('key');
    expect(errors.slice(0, 3)).toEqual(['row', 'line', 'reference_id']);
    expect(errors.at(-1)).toBe('loaded_at');
    expect(errorColumns('reference_id', true).map((c) => c.name)).toEqual(expect.arrayContaining(['stratum', 'weight']));
    const tx = transactionColumns('reference_id').map((c) => c.name);
    expect(tx.slice(0, 2)).toEqual(['reference_id', 'seq']);
    expect(tx).not.toContain('key');
    expect(tx).toEqual(expect.arrayContaining(['timestamp', 'timestamp_offset', 'value_date', 'amount', 'balance', 'narration']));
  });
});
