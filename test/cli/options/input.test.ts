/** `run`'s input options (src/cli/run-options/input.ts): --input, --input-format, --encoding, --delimiter, --decimal-comma, --files-root. */
import { describe, expect, it } from 'vitest';
import { fakeContext, parseCommandLine, refusal, resolveArgs } from './parse.js';

describe('--input', () => {
  it('is required', () => {
    expect(() => parseCommandLine(['run', 'location'])).toThrow(/Missing required argument: input/);
  });

  it('is the file as given; - is stdin', () => {
    expect(resolveArgs(['--input', 'data/in.csv']).settings.input).toBe('data/in.csv');
    expect(resolveArgs(['--input=-', '--input-format', 'csv']).settings.input).toBe('-');
  });
});

describe('--input-format', () => {
  it('defaults from the extension', () => {
    expect(resolveArgs(['--input', 'a.csv']).settings.inputFormat).toBe('csv');
    expect(resolveArgs(['--input', 'a.jsonl']).settings.inputFormat).toBe('ndjson');
    expect(resolveArgs(['--input', 'a.tsv.gz']).settings.inputFormat).toBe('tsv.gz');
    expect(resolveArgs(['--input', 'a.parquet']).settings.inputFormat).toBe('parquet');
  });

  it('wins over the extension', () => {
    expect(resolveArgs(['--input', 'a.txt', '--input-format', 'ndjson']).settings.inputFormat).toBe('ndjson');
  });

  it('is required for stdin, and Parquet cannot be streamed', () => {
    expect(refusal(['--input=-'])).toMatchObject({ code: 'USAGE' });
    expect(refusal(['--input=-', '--input-format', 'parquet']).message).toMatch(
      /Expected a Parquet file, got --input - \(stdin\)/,
    );
  });

  it('takes only the formats run reads', () => {
    expect(() => resolveArgs(['--input-format', 'xlsx'])).toThrow(/Invalid values:[\s\S]*xlsx/);
  });
});

describe('--encoding', () => {
  it('is unset by default (UTF-8 unless a byte order mark says otherwise)', () => {
    expect(resolveArgs([]).settings.encoding).toBeUndefined();
  });

  it('takes a WHATWG label', () => {
    expect(resolveArgs(['--encoding', 'latin1']).settings.encoding).toBe('windows-1252');
  });

  it('refuses a name that is none, and any with Parquet', () => {
    expect(refusal(['--encoding', 'klingon']).message).toMatch(
      /Expected --encoding to be an encoding name .*got 'klingon'/,
    );
    expect(refusal(['--input', 'a.parquet', '--encoding', 'utf-8']).message).toMatch(
      /Expected no --encoding with Parquet input/,
    );
  });
});

describe('--delimiter', () => {
  it('is left to the reader by default (TAB for .tsv, else sniffed)', () => {
    expect(resolveArgs([]).settings.delimiter).toBeUndefined();
    expect(resolveArgs(['--input', 'a.tsv']).settings.delimiter).toBeUndefined();
  });

  it('takes one character or its name', () => {
    expect(resolveArgs(['--delimiter', 'semicolon']).settings.delimiter).toBe(';');
    expect(resolveArgs(['--delimiter', '|']).settings.delimiter).toBe('|');
  });

  it('refuses more than one character', () => {
    expect(refusal(['--delimiter', ';;'])).toMatchObject({ code: 'USAGE', message: expect.stringContaining("';;'") });
  });
});

describe('--decimal-comma', () => {
  it('is off by default, on when given', () => {
    expect(resolveArgs([]).settings.decimalComma).toBe(false);
    expect(resolveArgs(['--decimal-comma']).settings.decimalComma).toBe(true);
  });
});

describe('--files-root', () => {
  it("defaults to the input file's folder, and none for stdin", () => {
    expect(resolveArgs([]).settings.filesRoot).toMatchObject({ kind: 'folder', given: false });
    expect(resolveArgs(['--input=-', '--input-format', 'csv']).settings.filesRoot).toMatchObject({ kind: 'none' });
  });

  it('is the folder given, looked up through the context', () => {
    const seen: unknown[] = [];
    const ctx = fakeContext({
      filesRoot: (given, input) => {
        seen.push([given, input]);
        return { kind: 'folder', path: '/r', real: '/r', given: true };
      },
    });
    expect(resolveArgs(['--files-root', 'reports'], ctx).settings.filesRoot).toMatchObject({
      kind: 'folder',
      path: '/r',
      given: true,
    });
    expect(seen).toEqual([['reports', 'in.csv']]);
  });
});

describe('--allow-empty', () => {
  it('is off by default: an input with no data rows is exit 2', () => {
    expect(resolveArgs([]).settings.allowEmpty).toBe(false);
    expect(resolveArgs(['--allow-empty']).settings.allowEmpty).toBe(true);
  });
});
