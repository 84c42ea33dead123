/** `run`'s input options: the file (or stdin, or a database: ./database.ts), its format, encoding and separator. */
import { INPUT_FORMATS, resolveFormat, resolveTextOptions, type InputFormat } from '@bre-batch/formats/input/read';
import type { FilesRoot } from '../../input/files-root.js';
import type { DbInputSettings } from '../../pipeline/settings.js';
import type { OptionFamily, OptionsContext } from './family.js';

export interface InputArgs {
  input: string;
  'input-format'?: string;
  encoding?: string;
  delimiter?: string;
  'decimal-comma': boolean;
  'files-root'?: string;
  'allow-empty': boolean;
}

export const INPUT_OPTIONS = {
  title: 'Input:',
  options: {
    input: {
      type: 'string',
      demandOption: true,
      describe:
        'CSV, TSV, NDJSON or Parquet file (CSV, TSV, NDJSON also .gz), - for stdin, or a database: postgres://HOST[:PORT]/DB, mysql://HOST[:PORT]/DB (no password: PGPASSWORD, ~/.pgpass, MYSQL_PWD), env:VAR or file:PATH holding the URL',
    },
    'input-format': {
      type: 'string',
      choices: [...INPUT_FORMATS],
      defaultDescription: 'from the extension',
      describe: "required for stdin (e.g. csv.gz for gzip'ed CSV on stdin)",
    },
    encoding: {
      type: 'string',
      defaultDescription: 'UTF-8; a byte order mark decides',
      describe: 'text encoding of the input, e.g. windows-1252, latin1, utf-16le, shift_jis',
    },
    delimiter: {
      type: 'string',
      defaultDescription: 'TAB for .tsv, else sniffed among , ; TAB |',
      describe: 'CSV field separator: one character, or tab, comma, semicolon, pipe',
    },
    'decimal-comma': {
      type: 'boolean',
      default: false,
      describe:
        'numbers written as text use a decimal comma and dot grouping: 19,076 is 19.076, 1.20.000,50 is 120000.5',
    },
    'allow-empty': {
      type: 'boolean',
      default: false,
      describe:
        'an input with no data rows (0 bytes, a header only, an empty table) is an empty night: exit 0, said in the summary (default: exit 2, INPUT_EMPTY)',
    },
    'files-root': {
      type: 'string',
      defaultDescription: "the input file's folder; none for stdin",
      describe:
        'the folder files named in rows (bureau_report_path, bank_data_path) must lie inside; relative paths resolve against it',
    },
  },
} as const satisfies OptionFamily;

export interface ResolvedInput {
  readonly input: string;
  readonly inputFormat: InputFormat;
  readonly encoding?: string;
  readonly delimiter?: string;
  readonly decimalComma: boolean;
  readonly filesRoot: FilesRoot;
  readonly allowEmpty: boolean;
}

/** The input as the run reads it; `source` is the database input, when --input names one. */
export function resolveInput(
  a: InputArgs,
  source: DbInputSettings | undefined,
  ctx: Pick<OptionsContext, 'filesRoot'>,
): ResolvedInput {
  // A database's rows are typed values, read as NDJSON's are.
  const inputFormat = source ? 'ndjson' : resolveFormat(a.input, a['input-format']);
  const text = source ? {} : resolveTextOptions(a, inputFormat);
  const filesRoot = ctx.filesRoot(a['files-root'], source ? { database: source.url.display } : a.input);
  return {
    input: source ? source.url.display : a.input,
    inputFormat,
    ...text,
    decimalComma: a['decimal-comma'],
    filesRoot,
    allowEmpty: a['allow-empty'],
  };
}
