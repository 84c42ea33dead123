import { describe, expect, it } from 'vitest';
import {
  parseDelimiter,
  QUOTED,
  RECORD_START,
  scanLine,
  sniffDelimiter,
  type ScanCounts,
} from '@bre-batch/formats/input/csv-dialect';

describe('sniffing the separator from the first lines', () => {
  it.each([
    ['comma', ['a,b,c', '1,2,3', '4,5,6'], ','],
    [
      'semicolon with decimal commas',
      ['reference_id;latitude;longitude', 'L1;19,076;72,8777', 'L2;28,6139;77,209'],
      ';',
    ],
    ['TAB', ['a\tb', '1\t2'], '\t'],
    ['pipe', ['a|b|c', '1|2|3'], '|'],
    ['commas inside quoted fields of a semicolon file', ['a;b', '"x,y,z";1', '"p,q";2'], ';'],
    ['semicolons inside the values of a comma file', ['id,handles', '1,a;b;c', '2,d;e'], ','],
    ['a quoted field spanning lines', ['a;b', '"line one', 'line two";2', 'x;3'], ';'],
    ['the header alone', ['a|b'], '|'],
    ['blank lines around', ['', 'a;b', '', '1;2'], ';'],
  ])('%s', (_name, lines, expected) => {
    expect(sniffDelimiter(lines)).toBe(expected);
  });

  it('none when no candidate gives the header two columns (the caller reads one column)', () => {
    expect(sniffDelimiter(['reference_id', 'A1', 'A2'])).toBeUndefined();
    expect(sniffDelimiter([])).toBeUndefined();
  });

  it('the candidate whose rows agree with the header wins over one that only splits the header', () => {
    // ',' splits the header in two but no data row; ';' splits every row in three.
    expect(sniffDelimiter(['a,x;b;c', '1;2;3', '4;5;6'])).toBe(';');
  });

  it('ties go to the comma', () => {
    expect(sniffDelimiter(['a,b;c', '1,2;3'])).toBe(',');
  });
});

describe('the quote automaton', () => {
  const scan = (text: string, state = RECORD_START) => {
    const counts: ScanCounts = { n: 0, broken: false };
    return { state: scanLine(text, 44, state, counts), ...counts };
  };

  it.each([
    ['no quotes', 'a,b,c', false, 2, false],
    ['a quoted field closed on the line', '"a,b",c', false, 1, false],
    ['an escaped quote inside', '"say ""hi""",x', false, 1, false],
    ['a quoted field left open', 'a,"b,c', true, 1, false],
    ['a quote inside an unquoted field is a character', '37°36\'37.8"N,5\'10",x', false, 2, false],
    ['text after a closing quote is broken quoting', '"abc"def,x', false, 1, true],
    ['a space before an opening quote makes it a character', ' "a,b",c', false, 2, false],
  ])('%s', (_name, text, open, separators, broken) => {
    const r = scan(text);
    expect(r.state === QUOTED).toBe(open);
    expect(r.n).toBe(separators);
    expect(r.broken).toBe(broken);
  });

  it('a record open at the end of a line is closed by a later line', () => {
    expect(scan('still inside", then,more', QUOTED)).toMatchObject({ n: 2, broken: false });
    expect(scan('still inside', QUOTED).state).toBe(QUOTED);
  });
});

describe('--delimiter', () => {
  it.each([
    [';', ';'],
    ['tab', '\t'],
    ['TAB', '\t'],
    ['\\t', '\t'],
    ['\t', '\t'],
    ['pipe', '|'],
    ['comma', ','],
    ['semicolon', ';'],
    ['#', '#'],
  ])('%j is %j', (given, d) => {
    expect(parseDelimiter(given)).toBe(d);
  });
  it.each(['', ';;', '"', '\n', 'tabs'])('%j is refused', (given) => {
    expect(parseDelimiter(given)).toBeUndefined();
  });
});
