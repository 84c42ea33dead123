import { describe, expect, it } from 'vitest';
import { BreError } from '@bre-batch/core/errors';
import { closest, resolveHeader, type ColumnRequirements, type HeaderAsRead } from '@bre-batch/formats/input/header';
import { loadPipeline } from '../../src/config/pipeline.js';
import { columnRequirements } from '../../src/pipeline/input.js';

const header = (names: string[], extra: Partial<HeaderAsRead> = {}): HeaderAsRead => ({
  names,
  where: 'line 1',
  delimiter: ',',
  ...extra,
});
const LOCATION: ColumnRequirements = {
  what: "pipeline 'location'",
  required: [['reference_id'], ['user_id'], ['lead_id'], ['latitude'], ['longitude']],
  known: ['reference_id', 'user_id', 'lead_id', 'latitude', 'longitude'],
};

function refused(fn: () => unknown): BreError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(BreError);
    expect((err as BreError).code).toBe('INPUT_HEADER');
    return err as BreError;
  }
  throw new Error('expected the header to be refused');
}

describe('matching header names to the pipeline', () => {
  it.each([
    [
      'exact',
      ['reference_id', 'user_id', 'lead_id', 'latitude', 'longitude'],
      ['reference_id', 'user_id', 'lead_id', 'latitude', 'longitude'],
    ],
    [
      'spaces around names',
      [' reference_id', 'user_id ', ' lead_id ', 'latitude', 'longitude'],
      ['reference_id', 'user_id', 'lead_id', 'latitude', 'longitude'],
    ],
    [
      'case',
      ['Reference_ID', ' USER_ID ', 'Lead_Id', 'latitude', 'LONGITUDE'],
      ['reference_id', 'user_id', 'lead_id', 'latitude', 'longitude'],
    ],
    [
      'unknown columns keep their spelling',
      ['reference_id', 'user_id', 'lead_id', 'latitude', 'longitude', 'My Note'],
      ['reference_id', 'user_id', 'lead_id', 'latitude', 'longitude', 'My Note'],
    ],
  ])('%s', (_name, names, expected) => {
    expect(resolveHeader(header(names), LOCATION)).toEqual(expected);
  });

  it('without requirements names are only trimmed', () => {
    expect(resolveHeader(header([' A ', 'b']))).toEqual(['A', 'b']);
  });

  it('two names equal apart from case are refused, naming both', () => {
    const e = refused(() =>
      resolveHeader(header(['reference_id', 'User_ID', 'user_id', 'lead_id', 'latitude', 'longitude']), LOCATION),
    );
    expect(e.message).toMatch(/'User_ID' \(column 2\) and 'user_id' \(column 3\) differ only in case/);
  });

  it.each([
    ['a duplicate', ['a', 'b', 'a'], /names column 'a' twice \(columns 1 and 3\)/],
    ['a duplicate once trimmed', ['a', ' a '], /names column 'a' twice/],
    ['an empty name', ['a', ' ', 'b'], /column 2 of the header has no name/],
  ])('%s is refused', (_name, names, message) => {
    expect(refused(() => resolveHeader(header(names))).message).toMatch(message);
  });
});

describe('required columns', () => {
  it('a missing column: named, the header as read shown, the closest names offered, the fix said', () => {
    const e = refused(() => resolveHeader(header(['Reference ID', 'user_id', 'lead', 'lat', 'lon']), LOCATION));
    expect(e.message).toMatch(
      /^Expected the input's header to have every column pipeline 'location' needs in every row; missing: reference_id, lead_id, latitude, longitude/,
    );
    expect(e.message).toContain(
      'header as read: line 1, 5 columns, fields separated by \',\' (comma): "Reference ID", "user_id", "lead", "lat", "lon"',
    );
    expect(e.message).toContain(
      "did you mean: 'Reference ID' for reference_id; 'lead' for lead_id; 'lat' for latitude; 'lon' for longitude?",
    );
    expect(e.message).toMatch(/fix: rename the header's columns/);
    expect(e.field).toBe('reference_id');
  });

  it('a one-column header (another separator) suggests --delimiter', () => {
    const e = refused(() => resolveHeader(header(['reference_id:user_id:lead_id:latitude:longitude']), LOCATION));
    expect(e.message).toMatch(/give --delimiter: the header was read as one column/);
  });

  it('an alternative name satisfies a requirement', () => {
    const req: ColumnRequirements = {
      what: 'x',
      required: [['date_from', 'datetimerangefrom']],
      known: ['date_from', 'datetimerangefrom'],
    };
    expect(resolveHeader(header(['DateTimeRangeFrom']), req)).toEqual(['datetimerangefrom']);
    expect(refused(() => resolveHeader(header(['date']), req)).message).toMatch(
      /missing: date_from or datetimerangefrom/,
    );
  });

  it('a dotted requirement is met as rows are read: the dotted column, the last name, or a nested field', () => {
    const req: ColumnRequirements = {
      what: 'x',
      required: [['external.bank_type']],
      known: ['external.bank_type', 'bank_type'],
    };
    expect(resolveHeader(header(['external.bank_type']), req)).toEqual(['external.bank_type']);
    expect(resolveHeader(header(['Bank_Type']), req)).toEqual(['bank_type']);
    expect(resolveHeader(header(['external'], { nested: ['external.bank_type'] }), req)).toEqual(['external']);
    refused(() => resolveHeader(header(['external'], { nested: ['external.other'] }), req));
  });

  it('a long header is shown in part', () => {
    const names = Array.from({ length: 40 }, (_, i) => `c${i}`);
    expect(refused(() => resolveHeader(header(names), LOCATION)).message).toContain('... (10 more)');
  });
});

describe('closest names', () => {
  it.each([
    [['reference_id'], ['Reference ID', 'x'], ['Reference ID']],
    [['reference_id'], ['referenceid', 'refid'], ['referenceid']],
    [['latitude'], ['lat', 'long'], ['lat']],
    [['declared_income'], ['declared_incme', 'income'], ['declared_incme']],
    [['lead_id'], ['zzz', 'q'], []],
  ])('%j among %j', (wanted, names, expected) => {
    expect(closest(wanted, names)).toEqual(expected);
  });
});

describe("the shipped pipelines' requirements", () => {
  it('aa_transactions accepts datetimerangefrom for date_from', () => {
    const req = columnRequirements(loadPipeline('aa_transactions'));
    expect(req.required).toContainEqual(['date_from', 'datetimerangefrom']);
    expect(req.known).toContain('reference_id');
  });

  it('bureau_mobile_bank needs external.bank_type, which a bank_type column gives', () => {
    const req = columnRequirements(loadPipeline('bureau_mobile_bank'));
    expect(req.required).toContainEqual(['external.bank_type']);
    expect(req.known).toContain('bank_type');
  });
});
