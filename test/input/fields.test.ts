import { describe, expect, it } from 'vitest';
import { getField, getFirstField, setPath } from '@bre-batch/formats/input/fields';

describe('getField', () => {
  const cases: Array<[string, Record<string, unknown>, string, { value: unknown; column: string } | undefined]> = [
    ['exact top-level column', { lead_id: 'L1' }, 'lead_id', { value: 'L1', column: 'lead_id' }],
    [
      'dotted column',
      { 'external.bureau_type': 'bureau_a_json' },
      'external.bureau_type',
      { value: 'bureau_a_json', column: 'external.bureau_type' },
    ],
    [
      'last name of a nested field',
      { bureau_type: 'bureau_a_json' },
      'external.bureau_type',
      { value: 'bureau_a_json', column: 'bureau_type' },
    ],
    [
      'nested NDJSON object',
      { external: { bureau_type: 'bureau_b_json' } },
      'external.bureau_type',
      { value: 'bureau_b_json', column: 'external.bureau_type' },
    ],
    [
      'dotted column wins over last name',
      { 'external.bank_type': 'bank_aa', bank_type: 'bank_bsa' },
      'external.bank_type',
      { value: 'bank_aa', column: 'external.bank_type' },
    ],
    [
      'empty dotted cell falls back to last name',
      { 'external.bank_type': '', bank_type: 'bank_bsa' },
      'external.bank_type',
      { value: 'bank_bsa', column: 'bank_type' },
    ],
    ['empty CSV cell is absent', { lead_id: '' }, 'lead_id', undefined],
    ['whitespace-only cell is absent', { lead_id: '   ' }, 'lead_id', undefined],
    ['JSON null is absent', { lead_id: null }, 'lead_id', undefined],
    ['zero is a value', { declared_income: 0 }, 'declared_income', { value: 0, column: 'declared_income' }],
    [
      'false is a value',
      { flag_current_default: false },
      'flag_current_default',
      { value: false, column: 'flag_current_default' },
    ],
    ['a top-level name is not found by a dotted column', { 'external.lead_id': 'x' }, 'lead_id', undefined],
    ['missing column', { a: 1 }, 'external.bureau_type', undefined],
    ['prototype keys are not fields', {}, 'constructor', undefined],
    ['nested path through a non-object', { external: 'text' }, 'external.bureau_type', undefined],
  ];
  it.each(cases)('%s', (_name, data, field, expected) => {
    expect(getField(data, field)).toEqual(expected);
  });

  it('getFirstField takes the first alias present', () => {
    expect(getFirstField({ bureau_raw_json: 'QQ==' }, ['raw_data', 'external.bureau_raw_json'])).toEqual({
      value: 'QQ==',
      column: 'bureau_raw_json',
    });
    expect(
      getFirstField({ raw_data: 'QQ==', bureau_raw_json: 'Qg==' }, ['raw_data', 'external.bureau_raw_json'])?.column,
    ).toBe('raw_data');
  });
});

describe('setPath', () => {
  it('nests dotted paths and merges into existing objects', () => {
    const o: Record<string, unknown> = {};
    setPath(o, 'external.bureau_type', 'x');
    setPath(o, 'external.bureau_raw_json', 'y');
    setPath(o, 'lead_id', 'L');
    expect(o).toEqual({ external: { bureau_type: 'x', bureau_raw_json: 'y' }, lead_id: 'L' });
  });
  it('a __proto__ column stays an own key and does not pollute prototypes', () => {
    const o: Record<string, unknown> = {};
    setPath(o, '__proto__.polluted', 'yes');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(o)).toEqual(['__proto__']);
  });
});
