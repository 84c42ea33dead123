/**
 * Opening the run's input, the one place where the header check is made (src/input/header.ts): the header
 * is read and checked against every column the pipeline's stages need in every row before anything is
 * called or written, so a file with a misnamed column costs one exit 2 and a message, not a night of
 * row errors. `run`, `run --dry-run` and `run --plan` all open their input here.
 */
import { BreError, isBreError } from '../errors.js';
import { COMMA_STYLE } from '../input/coerce.js';
import { checkFileColumns } from '../input/files-root.js';
import { resolveHeader, type ColumnRequirements } from '../input/header.js';
import { readRowBatches } from '../input/read.js';
import type { Pipeline } from '../config/pipeline.js';
import type { Manifest } from '../output/format/index.js';
import { kindOf } from '../stages/index.js';
import type { SampleSpec } from '../sample/design.js';
import type { InputRow, NumberStyle } from '../types.js';
import type { RunSettings } from './settings.js';

/** The columns of file paths a pipeline reads (read inside the files root: src/input/files-root.ts). */
export function fileColumns(pipeline: Pipeline): string[] {
  return [...new Set(pipeline.stages.flatMap((stage) => kindOf(stage).columns(stage).files ?? []))];
}

/**
 * The columns a pipeline needs in every row, and every name it reads (for matching header names); with a
 * sample, the --stratify-by columns too (the header must have them, however empty their cells).
 */
export function columnRequirements(pipeline: Pipeline, sample?: SampleSpec): ColumnRequirements {
  const required = new Map<string, readonly string[]>();
  const known = new Set<string>([pipeline.key]);
  for (const c of sample?.stratifyBy ?? []) {
    required.set(c.column, [c.column]);
    known.add(c.column);
  }
  for (const stage of pipeline.stages) {
    const spec = kindOf(stage).columns(stage);
    for (const name of spec.required) if (!required.has(name)) required.set(name, [name, ...(spec.alternatives?.[name] ?? [])]);
    const names = [...spec.required, ...spec.optional, ...Object.keys(spec.conditional), ...Object.values(spec.alternatives ?? {}).flat(), ...(spec.files ?? [])];
    for (const name of names) {
      if (!/^[\w.-]+$/.test(name)) continue; // descriptions such as "(every other column)"
      known.add(name);
      const dot = name.lastIndexOf('.');
      if (dot !== -1) known.add(name.slice(dot + 1));
    }
  }
  return { what: `pipeline '${pipeline.name}'${sample?.stratifyBy.length ? ' and --stratify-by' : ''}`, required: [...required.values()], known: [...known] };
}

/** manifest.json's `input.reading` (src/output/format/manifest.ts). */
export type InputReading = NonNullable<Manifest['input']['reading']>;

export interface OpenedInput {
  /** The rows, a batch at a time; `first` has been taken already. */
  readonly reader: AsyncGenerator<InputRow[]>;
  readonly first: IteratorResult<InputRow[]>;
  /** How numbers written as text are read in this input (its separator, --decimal-comma). */
  readonly numberStyle: NumberStyle;
  /** How the rows are read, for the manifest (a resume must read them the same way). */
  readonly reading: InputReading;
  /** The names rows are keyed by, as the header check resolved them; undefined for NDJSON (no header). */
  readonly columns: readonly string[] | undefined;
}

/** What opening the input reads of a run's settings (the bench draws samples with no run around them). */
export type InputSettings = Pick<RunSettings, 'pipeline' | 'input' | 'inputFormat' | 'encoding' | 'delimiter' | 'decimalComma' | 'sample' | 'filesRoot' | 'log'>;

/**
 * Opens the input and reads its first batch of rows (the header with it). Throws a BreError with exit 2
 * (INPUT_HEADER, INPUT_UNREADABLE) when the header is not what the pipeline needs or cannot be read, and
 * FILES_ROOT_NEEDED when it names a column of file paths and the run has no files root (stdin without
 * --files-root).
 * `log` hears the one line saying which separator was sniffed, when it is not a comma.
 */
export async function openInput(s: InputSettings, log: (line: string) => void = s.log): Promise<OpenedInput> {
  const req = columnRequirements(s.pipeline, s.sample);
  const files = fileColumns(s.pipeline);
  let delimiter: string | null = null;
  let columns: string[] | undefined;
  let encoding: string | null = null;
  const reader = readRowBatches(s.input, {
    format: s.inputFormat,
    encoding: s.encoding,
    delimiter: s.delimiter,
    notice: log,
    onEncoding: (name) => { encoding = name; },
    header: (header) => {
      delimiter = header.delimiter ?? null;
      columns = resolveHeader(header, req);
      checkFileColumns(columns, files, s.filesRoot, header.where);
      return columns;
    },
  });
  let first: IteratorResult<InputRow[]>;
  try {
    first = await reader.next();
  } catch (err) {
    if (isBreError(err)) throw err;
    throw new BreError('INPUT_UNREADABLE', `cannot read the input ${s.input}: ${(err as Error).message}`);
  }
  const decimalComma = s.decimalComma ?? false;
  const separator = delimiter ?? ',';
  const numberStyle = decimalComma || separator !== ',' ? { decimalComma, separator } : COMMA_STYLE;
  return { reader, first, numberStyle, reading: { encoding, delimiter, decimal_comma: decimalComma }, columns };
}
