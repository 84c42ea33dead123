/** The sink's table and column names and kinds (pure): names within the database's limit, kinds widening as Parquet's. */
import { describe, expect, it } from 'vitest';
import { isBreError } from '../../../src/errors.js';
import {
  columnName,
  errorColumns,
  resultFixedColumns,
  sinkNames,
  transactionColumns,
  widerKind,
} from '../../../src/output/sink/tables.js';
import type { ColumnKind } from '../../../src/types.js';

const LIMITS = [
  ['postgres', 63],
  ['mysql', 64],
] as const;
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

const HASH = /_[0-9a-f]{8}$/;
const RESERVED = new Set(['reference_id', 'row', 'stratum', 'weight', 'result', 'loaded_at']);

describe('columnName: plain names a user types unquoted', () => {
  // [field, column]; `#` stands for the 8 hex digits of the field's hash.
  const CASES: readonly (readonly [string, string])[] = [
    ['location.decision', 'location_decision'],
    ['decision.loan_amount', 'decision_loan_amount'],
    ['final_decision.approved', 'final_decision_approved'],
    ['bureau.score2', 'bureau_score2'],
    ['s.0', 's_0'],
    ['final_decision.ApprovedAmount', 'final_decision_approvedamount_#'],
    ['features.bank.avg_balance', 'features_bank_avg_balance_#'],
    ['decision.loan-amount', 'decision_loan_amount_#'],
    ['décision.montant', 'd_cision_montant_#'],
    ['9stage.x', 'f_9stage_x_#'],
    ['_x.y', '_x_y_#'],
    ['nodot', 'nodot_#'],
    ['loaded.at', 'loaded_at_#'],
    ['reference.id', 'reference_id_#'],
    ['段階.字', '_____#'],
  ];
  it.each(CASES)('%s is %s', (field, want) => {
    for (const [, max] of LIMITS) {
      const got = columnName(field, max, RESERVED);
      expect(got).toMatch(/^[a-z_][a-z0-9_]*$/);
      if (want.endsWith('#')) {
        expect(got).toMatch(HASH);
        expect(got.slice(0, -8)).toBe(want.slice(0, -1));
      } else expect(got).toBe(want);
      // Stable: the same field always gets the same column.
      expect(columnName(field, max, RESERVED)).toBe(got);
    }
  });

  it('gives fields that meet on one sanitised name different columns', () => {
    const fields = [
      'decision.Score',
      'decision.score_',
      'decision.score',
      'Decision.score',
      'decision.sco-re',
      'decision.sco re',
    ];
    const cols = fields.map((f) => columnName(f, 63, RESERVED));
    expect(new Set(cols).size).toBe(fields.length);
  });
});

describe.each(LIMITS)('columnName (%s, %d bytes)', (_dialect, max) => {
  it('keeps a plain name up to the limit exactly', () => {
    const exact = `s.${'f'.repeat(max - 2)}`;
    expect(columnName(exact, max)).toBe(`s_${'f'.repeat(max - 2)}`);
    expect(bytes(columnName(exact, max))).toBe(max);
  });

  const long = [
    ['ascii one byte past', `stage.${'x'.repeat(max - 5)}`],
    ['ascii far past', `stage.${'x'.repeat(500)}`],
    ['two-byte characters', `étape.${'é'.repeat(60)}`],
    ['three-byte characters', `段階.${'字'.repeat(40)}`],
    ['four-byte characters (surrogate pairs)', `stage.${'😀'.repeat(30)}`],
  ] as const;

  it.each(long)('shortens %s to within the limit, its start kept and a hash at the end', (_what, name) => {
    const short = columnName(name, max);
    expect(bytes(short)).toBeLessThanOrEqual(max);
    expect(short).toMatch(/^[a-z0-9_]+_[0-9a-f]{8}$/);
    expect(columnName(name, max)).toBe(short);
  });

  it('never gives two long names the same column, however alike their starts', () => {
    const common = `stage.${'x'.repeat(max)}`;
    const names = Array.from({ length: 2000 }, (_, i) => `${common}${i}`);
    const columns = names.map((n) => columnName(n, max));
    expect(new Set(columns).size).toBe(names.length);
    for (const c of columns) expect(bytes(c)).toBeLessThanOrEqual(max);
  });
});

describe('sinkNames', () => {
  it.each(LIMITS)('names the three tables after NAME (%s)', (_dialect, max) => {
    expect(sinkNames('loans', max)).toEqual({
      results: 'loans',
      errors: 'loans_errors',
      transactions: 'loans_transactions',
    });
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
    expect(resultFixedColumns(true).map((c) => [c.name, c.kind])).toEqual([
      ['row', 'int64'],
      ['stratum', 'string'],
      ['weight', 'double'],
      ['result', 'json'],
      ['loaded_at', 'timestamp_local_ms'],
    ]);
  });

  it('NAME_errors and NAME_transactions name the key as the input does', () => {
    const errors = errorColumns('reference_id', false).map((c) => c.name);
    expect(errors).toContain('reference_id');
    expect(errors).not.toContain('key');
    expect(errors.slice(0, 3)).toEqual(['row', 'line', 'reference_id']);
    expect(errors.at(-1)).toBe('loaded_at');
    expect(errorColumns('reference_id', true).map((c) => c.name)).toEqual(
      expect.arrayContaining(['stratum', 'weight']),
    );
    const tx = transactionColumns('reference_id').map((c) => c.name);
    expect(tx.slice(0, 2)).toEqual(['reference_id', 'seq']);
    expect(tx).not.toContain('key');
    expect(tx).toEqual(
      expect.arrayContaining(['timestamp', 'timestamp_offset', 'value_date', 'amount', 'balance', 'narration']),
    );
  });
});
