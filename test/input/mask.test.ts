import { describe, expect, it } from 'vitest';
import { isPersonalField, maskCategory, maskQuotedValue, maskRow, maskText } from '@bre-batch/formats/input/mask';

describe('maskRow', () => {
  const cases: Array<[string, unknown, unknown]> = [
    ['pan_number', 'ABCDE1234F', '******234F'],
    ['phone', '9876543210', '*******210'],
    ['mobile', 9876543210, '*******210'],
    ['name_aadhar', 'Fake Test Person', 'F. T. P.'],
    ['pan_name', 'FAKE TESTPERSON', 'F. T.'],
    ['address_aadhar', '1 Fake Street, Testnagar', '[redacted address, 24 chars]'],
    ['dob', '1990-01-31', '****-**-**'],
    ['account_number', '123456789012', '********9012'],
    ['email', 'fake.person@example.invalid', 'f***@example.invalid'],
    ['aadhaar', '1234 5678 9012', '********9012'],
    ['pincode_aadhar', '400001', '400***'],
    ['latitude', '19.076012', 19.08],
    // What is not a number is shown by its kind, as the row's message says it.
    ['latitude', 'N/A', '[text of 3 characters]'],
    ['longitude', '72,877', '[a number with a decimal comma]'],
    // An empty cell stays empty (a latitude of 0 would be a value the file never had).
    ['latitude', '', ''],
    ['pan_number', '', ''],
    ['phone', '  ', '  '],
    ['auth_token', 'FAKE-ROW-TOKEN', '[secret]'],
    ['bureau_raw_json', 'eyJhIjoxfQ==', '[redacted 12 bytes]'],
    ['external.bureau_raw_json', 'eyJhIjoxfQ==', '[redacted 12 bytes]'],
    ['bank_data', { metadata: {}, transaction_data: [] }, '[redacted 37 bytes]'],
    ['state_aadhar', 'Maharashtra', 'Maharashtra'],
    ['gender', 'F', 'F'],
    ['reference_id', '9876543210', '9876543210'],
    ['declared_income', '25000', '25000'],
    ['notes', 'call 9876543210 re PAN ABCDE1234F', 'call *******210 re PAN ******234F'],
    ['bureau_report_path', 'reports/bureau_a.json', 'reports/bureau_a.json'],
    ['bank_name', 'FAKE BANK', 'FAKE BANK'],
  ];
  it.each(cases)('%s', (column, value, expected) => {
    expect(maskRow({ [column]: value })[column]).toEqual(expected);
  });

  it('masks nested keys and keeps the shape', () => {
    const row = {
      reference_id: 'R1',
      external: { bureau_type: 'bureau_a_json', bureau_raw_json: 'QUJD', bank_data: [{ a: 1 }] },
      applicant: { name: 'Fake Person', phones: ['9000000001'] },
    };
    expect(maskRow(row)).toEqual({
      reference_id: 'R1',
      external: {
        bureau_type: 'bureau_a_json',
        bureau_raw_json: '[redacted 4 bytes]',
        bank_data: '[redacted 9 bytes]',
      },
      applicant: { name: 'F. P.', phones: ['*******001'] },
    });
    expect(row.external.bureau_raw_json).toBe('QUJD'); // the input is not changed
  });

  it('classifies columns', () => {
    expect(maskCategory('panNumber')).toBe('pan');
    expect(maskCategory('PAN-NUMBER')).toBe('pan');
    expect(maskCategory('customer_mobile_number')).toBe('phone');
    expect(maskCategory('file_password')).toBe('secret');
    expect(maskCategory('rule_engine_name')).toBeUndefined();
    // latitude and longitude are masked (about 1 km), and messages say only what kind of value they held
    expect(isPersonalField('latitude')).toBe(true);
    expect(isPersonalField('declared_income')).toBe(false);
    expect(isPersonalField('external.bureau_raw_json')).toBe(true);
  });
});

describe('maskText', () => {
  const cases: Array<[string, string]> = [
    ['PAN ABCDE1234F rejected', 'PAN ******234F rejected'],
    ['pan:abcde1234f,', 'pan:******234f,'],
    ['phone 9876543210.', 'phone *******210.'],
    ['phone +919876543210', 'phone **********210'],
    ['aadhaar 1234 5678 9012 given', 'aadhaar ********9012 given'],
    ['mail fake@example.invalid now', 'mail f***@example.invalid now'],
    ['amount 12345 and id ABC12', 'amount 12345 and id ABC12'],
    ['timestamp 2024-05-01 10:00:00', 'timestamp 2024-05-01 10:00:00'],
  ];
  it.each(cases)('%s', (input, expected) => expect(maskText(input)).toBe(expected));
});

describe('maskQuotedValue', () => {
  it('quotes the value as the masked row shows it; leaves other messages and unmasked fields alone', () => {
    expect(
      maskQuotedValue("latitude: Expected a number between -90 and 90, got 'abc'", 'latitude', { latitude: 'abc' }),
    ).toBe("latitude: Expected a number between -90 and 90, got '[text of 3 characters]'");
    expect(
      maskQuotedValue("pan_number: Expected 10 characters, got 'ABCDE1234FX'", 'pan_number', {
        pan_number: 'ABCDE1234FX',
      }),
    ).toBe("pan_number: Expected 10 characters, got '*******34FX'");
    expect(
      maskQuotedValue("declared_income: Expected a number, got 'lots'", 'declared_income', { declared_income: 'lots' }),
    ).toBe("declared_income: Expected a number, got 'lots'");
    expect(maskQuotedValue("Missing required field 'latitude'", 'latitude', { latitude: '' })).toBe(
      "Missing required field 'latitude'",
    );
    expect(maskQuotedValue('anything', undefined, {})).toBe('anything');
  });
});
