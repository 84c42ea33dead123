/** The sink's table and column names and kinds (pure): names within the database's limit, kinds widening as Parquet's. */
import { describe, expect, it } from 'vitest';
import { isBreError } from '@bre-batch/core/errors';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadPipeline } from '../../../src/config/pipeline.js';
import { declaredHeaders } from '../../../src/stages/index.js';
import {
  declaredColumnNames,
  errorColumns,
  hashedColumnName,
  newColumnName,
  plainColumnName,
  reservedNames,
  resultFixedColumns,
  sinkNames,
  transactionColumns,
  widerKind,
} from '../../../src/output/sink/tables.js';
import type { ColumnKind } from '@bre-batch/core/types';
import { ROOT } from '../../helpers/cli.js';

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

describe('plainColumnName: the snake_case of the field path, a name a person types unquoted', () => {
  const CASES: readonly (readonly [string, string])[] = [
    ['location.decision', 'location_decision'],
    ['decision.best_offer.loan_amount', 'decision_best_offer_loan_amount'],
    ['decision.bureau_intel.bureau_score', 'decision_bureau_intel_bureau_score'],
    ['location.geocoding.city', 'location_geocoding_city'],
    ['final_decision.ApprovedAmount', 'final_decision_approved_amount'],
    ['aa.account.maskedAccNumber', 'aa_account_masked_acc_number'],
    ['aa.account.FIPName', 'aa_account_fip_name'],
    ['bsa.summary.total.cashDeposits', 'bsa_summary_total_cash_deposits'],
    ['decision.loan-amount', 'decision_loan_amount'],
    ['décision.montant', 'd_cision_montant'],
    ['9stage.x', 'f_9stage_x'],
    ['_x.y', 'x_y'],
    ['nodot', 'nodot'],
    ['段階.字', 'f'],
  ];
  it.each(CASES)('%s is %s', (field, want) => {
    expect(plainColumnName(field)).toBe(want);
    expect(want).toMatch(/^[a-z][a-z0-9_]*$/);
  });
});

describe('newColumnName: the plain name, a suffix only on a collision or past the limit', () => {
  it.each(LIMITS)('keeps the plain name when it is free and fits (%s)', (_d, max) => {
    expect(newColumnName('decision.best_offer.loan_amount', max, RESERVED)).toBe('decision_best_offer_loan_amount');
  });

  it('a field meeting a column that exists (or a reserved name) is the one that gets the suffix, deterministically', () => {
    const taken = new Set([...RESERVED, 'decision_score']);
    const got = newColumnName('decision.Score', 63, taken);
    expect(got).toMatch(HASH);
    expect(got.slice(0, -9)).toBe('decision_score');
    expect(newColumnName('decision.Score', 63, taken)).toBe(got);
    expect(newColumnName('loaded.at', 63, RESERVED)).toMatch(/^loaded_at_[0-9a-f]{8}$/);
    // MySQL's names ignore case: a column `Decision_Score` takes the name too.
    expect(newColumnName('decision.score', 63, new Set(['Decision_Score'.toLowerCase()]))).toMatch(HASH);
  });

  it('gives fields that meet on one plain name different columns, each taken in turn', () => {
    const fields = ['decision.Score', 'decision.score_', 'decision.score', 'Decision.score', 'decision..score'];
    const taken = new Set(RESERVED);
    const cols = fields.map((f) => {
      const c = newColumnName(f, 63, taken);
      taken.add(c);
      return c;
    });
    expect(new Set(cols).size).toBe(fields.length);
    expect(cols[0]).toBe('decision_score');
    expect(cols.slice(1).every((c) => HASH.test(c))).toBe(true);
  });
});

describe("every shipped pipeline's declared fields", () => {
  const dir = join(ROOT, 'pipelines');
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
  it.each(files)('%s: plain names, no suffix (no two collide, none past a limit)', (file) => {
    const p = loadPipeline(join(dir, file));
    const headers = declaredHeaders(p.stages).map((d) => d.header);
    expect(headers.length).toBeGreaterThan(5);
    for (const [, max] of LIMITS) {
      const names = declaredColumnNames(headers, max, reservedNames(p.key));
      expect(names.filter((n) => HASH.test(n))).toEqual([]);
      expect(names).toEqual(headers.map(plainColumnName));
    }
  });
});

describe('hashedColumnName: the names the earlier release gave, found again in its tables', () => {
  it('stage_field for two plain parts, else hashed', () => {
    expect(hashedColumnName('location.decision', 63, RESERVED)).toBe('location_decision');
    expect(hashedColumnName('decision.best_offer.loan_amount', 63, RESERVED)).toMatch(
      /^decision_best_offer_loan_amount_[0-9a-f]{8}$/,
    );
  });
});

describe.each(LIMITS)('newColumnName (%s, %d bytes)', (_dialect, max) => {
  it('keeps a plain name up to the limit exactly', () => {
    const exact = `s.${'f'.repeat(max - 2)}`;
    expect(newColumnName(exact, max, RESERVED)).toBe(`s_${'f'.repeat(max - 2)}`);
    expect(bytes(newColumnName(exact, max, RESERVED))).toBe(max);
  });

  const long = [
    ['ascii one byte past', `stage.${'x'.repeat(max - 5)}`],
    ['ascii far past', `stage.${'x'.repeat(500)}`],
    ['two-byte characters', `étape.${'aé'.repeat(60)}`],
    ['four-byte characters (surrogate pairs)', `stage.${'x😀'.repeat(40)}`],
  ] as const;

  it.each(long)('shortens %s to within the limit, its start kept and a hash at the end', (_what, name) => {
    const short = newColumnName(name, max, RESERVED);
    expect(bytes(short)).toBeLessThanOrEqual(max);
    expect(short).toMatch(/^[a-z0-9_]+_[0-9a-f]{8}$/);
    expect(newColumnName(name, max, RESERVED)).toBe(short);
  });

  it('never gives two long names the same column, however alike their starts', () => {
    const common = `stage.${'x'.repeat(max)}`;
    const names = Array.from({ length: 2000 }, (_, i) => `${common}${i}`);
    const columns = names.map((n) => newColumnName(n, max, RESERVED));
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
  it('NAME: row, the sample design when sampled, the run and session, result, loaded_at', () => {
    expect(resultFixedColumns(false).map((c) => c.name)).toEqual([
      'row',
      'run_id',
      'run_session',
      'result',
      'loaded_at',
    ]);
    expect(resultFixedColumns(true).map((c) => [c.name, c.kind])).toEqual([
      ['row', 'int64'],
      ['stratum', 'string'],
      ['weight', 'double'],
      ['run_id', 'string'],
      ['run_session', 'int64'],
      ['result', 'json'],
      ['loaded_at', 'timestamp_local_ms'],
    ]);
  });

  it('NAME_errors and NAME_transactions name the key as the input does', () => {
    const errors = errorColumns('reference_id', false).map((c) => c.name);
    expect(errors).toContain('reference_id');
    expect(errors).not.toContain('key');
    expect(errors.slice(0, 3)).toEqual(['row', 'line', 'reference_id']);
    expect(errors.slice(-3)).toEqual(['run_id', 'run_session', 'loaded_at']);
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
