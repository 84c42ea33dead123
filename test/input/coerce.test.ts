import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  describeValue,
  fieldError,
  issuesToFieldErrors,
  parseBoolean,
  parseString,
  zBoolean,
  zNumber,
  zString,
} from '../../src/input/coerce.js';
import { parseNumber } from '@bre-batch/formats/input/numbers';

describe('parseNumber', () => {
  const cases: Array<[unknown, number | undefined]> = [
    [12, 12],
    [' 12 ', 12],
    ['-3.5', -3.5],
    ['+7', 7],
    ['.5', 0.5],
    ['1e3', 1000],
    ['0', 0],
    ['12,000', 12000],
    ['1,234,567.50', 1234567.5],
    ['1,20,000', 120000],
    ['12,34,56,789', 123456789],
    ['12,5', undefined],
    ['1,2,3', undefined],
    ['12,0000', undefined],
    ['abc', undefined],
    ['', undefined],
    ['0x10', undefined],
    ['Infinity', undefined],
    ['NaN', undefined],
    [Number.NaN, undefined],
    [true, undefined],
    [null, undefined],
    ['12abc', undefined],
  ];
  it.each(cases)('%j -> %j', (input, expected) => expect(parseNumber(input)).toBe(expected));
});

describe('parseBoolean', () => {
  const cases: Array<[unknown, boolean | undefined]> = [
    [true, true],
    [false, false],
    ['true', true],
    ['FALSE', false],
    [' Yes ', true],
    ['no', false],
    ['1', true],
    ['0', false],
    [1, true],
    [0, false],
    ['y', undefined],
    ['2', undefined],
    [2, undefined],
    ['', undefined],
  ];
  it.each(cases)('%j -> %j', (input, expected) => expect(parseBoolean(input)).toBe(expected));
});

describe('parseString', () => {
  const cases: Array<[unknown, string | undefined]> = [
    ['00123', '00123'],
    [' id-1 ', 'id-1'],
    [560001, '560001'],
    [9000000001, '9000000001'],
    [true, undefined],
    [{}, undefined],
  ];
  it.each(cases)('%j -> %j', (input, expected) => expect(parseString(input)).toBe(expected));
});

describe('zod schemas', () => {
  const schema = z.object({
    lat: zNumber({ min: -90, max: 90 }),
    n: zNumber(),
    flag: zBoolean(),
    id: zString({ maxLength: 5 }),
    kind: zString({ oneOf: ['bank_aa', 'bank_bsa'] }),
    opt: zNumber().optional(),
  });
  const cols = (p: string): string => p;

  it('coerces text to the documented types', () => {
    expect(schema.parse({ lat: '19.07', n: '12,000', flag: 'yes', id: '00123', kind: ' bank_aa ' })).toEqual({
      lat: 19.07,
      n: 12000,
      flag: true,
      id: '00123',
      kind: 'bank_aa',
    });
  });

  it('reports every problem with "Expected X, got Y"', () => {
    const r = schema.safeParse({ lat: '95', n: 'abc', flag: 'maybe', id: 'toolong', kind: 'bank_x', opt: 'x' });
    expect(r.success).toBe(false);
    const errors = issuesToFieldErrors(r.error!.issues, cols);
    expect(errors.map((e) => [e.field, e.expected, e.message])).toEqual([
      // `lat` is personal (a location): its value is described, never quoted
      ['lat', 'a number between -90 and 90', 'lat: Expected a number between -90 and 90, got a number above 90'],
      ['n', 'a number', "n: Expected a number, got 'abc'"],
      [
        'flag',
        'a boolean (true/false, yes/no or 1/0)',
        "flag: Expected a boolean (true/false, yes/no or 1/0), got 'maybe'",
      ],
      ['id', 'a string of at most 5 characters', "id: Expected a string of at most 5 characters, got 'toolong'"],
      ['kind', 'one of bank_aa, bank_bsa', "kind: Expected one of bank_aa, bank_bsa, got 'bank_x'"],
      ['opt', 'a number', "opt: Expected a number, got 'x'"],
    ]);
  });

  it('a missing required field says so', () => {
    const r = schema.safeParse({ lat: 1, n: 1, flag: true, kind: 'bank_aa' });
    const errors = issuesToFieldErrors(r.error!.issues, (p) => `col:${p}`);
    expect(errors).toEqual([
      {
        field: 'col:id',
        expected: 'a string of at most 5 characters',
        message: "Missing required field 'col:id': expected a string of at most 5 characters",
      },
    ]);
  });
});

describe('messages never quote personal data', () => {
  it('describes a personal field by its length only', () => {
    expect(fieldError('pan_number', 'a string', 'ABCDE1234F').message).toBe(
      'pan_number: Expected a string, got text of 10 characters',
    );
    expect(fieldError('auth_token', 'a string', 'sekret-token').message).not.toContain('sekret');
  });
  it('masks PAN-like text inside ordinary values', () => {
    expect(describeValue('ABCDE1234F')).toBe("'******234F'");
    expect(describeValue('x'.repeat(50))).toBe(`'${'x'.repeat(37)}...'`);
  });
});

describe('a message a person can act on', () => {
  const semicolon = { decimalComma: false, separator: ';' };
  const latitude = (value: unknown, style?: typeof semicolon) => {
    const r = z.object({ latitude: zNumber({ min: -90, max: 90 }, style) }).safeParse({ latitude: value });
    return issuesToFieldErrors(r.error!.issues, (p) => p)[0];
  };

  it('says what kind of value a personal field held, the same way whatever it was', () => {
    const said = (v: unknown) => latitude(v).message;
    expect(said('91')).toBe('latitude: Expected a number between -90 and 90, got a number above 90');
    expect(said(-91.5)).toBe('latitude: Expected a number between -90 and 90, got a number below -90');
    expect(said('N/A')).toBe('latitude: Expected a number between -90 and 90, got text of 3 characters');
    expect(said('19,076')).toBe(
      'latitude: Expected a number between -90 and 90, got a number with a decimal comma: see --decimal-comma',
    );
    expect(said(true)).toBe('latitude: Expected a number between -90 and 90, got a boolean');
    for (const v of ['91', 'N/A', '19,076']) expect(said(v)).not.toContain(v);
  });

  it('does not repeat the hint where the expectation already names --decimal-comma', () => {
    const e = latitude('19,076', semicolon);
    expect(e.message.match(/--decimal-comma/g)).toHaveLength(1);
    expect(e.message).toMatch(/, got a number with a decimal comma$/);
  });

  it('keeps the value as given for --keep-personal-data only', () => {
    expect(latitude('N/A').quoting).toBe("latitude: Expected a number between -90 and 90, got 'N/A'");
    expect(fieldError('pan_number', 'a string', 'ABCDE1234F').quoting).toBe(
      "pan_number: Expected a string, got 'ABCDE1234F'",
    );
  });

  it('quotes a value of a field that is not personal data as given', () => {
    const income = fieldError('declared_income', 'a number', '25000 INR');
    expect(income.message).toBe("declared_income: Expected a number, got '25000 INR'");
    expect(income.quoting).toBeUndefined();
    expect(fieldError('declared_income', 'a number', '45000,50').message).toBe(
      "declared_income: Expected a number, got '45000,50', a number with a decimal comma: see --decimal-comma",
    );
    expect(fieldError('flag', 'a boolean', true).message).toBe('flag: Expected a boolean, got true');
  });
});
