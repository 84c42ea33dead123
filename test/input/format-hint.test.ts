/**
 * An input file of a type bre-batch does not read is named for what it is, as the same file renamed .csv is
 * (src/input/inspect.ts): an Excel workbook given as --input x.xlsx is told to be saved as CSV.
 */
import { describe, expect, it } from 'vitest';
import { resolveFormat } from '@bre-batch/formats/input/read';

const refused = (path: string) => {
  try {
    resolveFormat(path);
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error(`${path} was taken`);
};

describe('the input file type from its name', () => {
  it('a workbook: USAGE naming it and what to do', () => {
    const e = refused('night/Applicants.XLSX');
    expect(e.code).toBe('USAGE');
    expect(e.message).toBe(
      `Expected an input file ending in .csv, .tsv, .ndjson, .jsonl or .parquet (CSV, TSV and NDJSON also gzip'ed: .csv.gz...), or --input-format; got 'night/Applicants.XLSX', an Excel workbook: save it as CSV (Excel: Save As, "CSV UTF-8") and give that file`,
    );
    expect(refused('old.xls').message).toMatch(/, an old Excel workbook: save it as CSV /);
    expect(refused('sheet.ods').message).toMatch(/, an OpenDocument spreadsheet: save it as CSV /);
  });

  it('JSON, text and ZIP files: what the run reads instead', () => {
    expect(refused('rows.json').message).toMatch(
      /, a JSON file: give NDJSON, one JSON object a line, named \.ndjson or \.jsonl$/,
    );
    expect(refused('rows.txt').message).toMatch(/, a text file: give --input-format csv or tsv if it is one$/);
    expect(refused('rows.zip').message).toMatch(/, a ZIP archive: unpack it /);
  });

  it('an extension it knows nothing of: the list alone; a file it reads: its format', () => {
    expect(refused('rows.dat').message).toMatch(/got 'rows\.dat'$/);
    expect(resolveFormat('rows.csv.gz')).toBe('csv.gz');
    expect(resolveFormat('x.xlsx', 'csv')).toBe('csv');
  });
});
