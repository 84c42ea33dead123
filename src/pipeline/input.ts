/**
 * Opening the run's input, the one place where the header check is made (packages/formats/src/input/header.ts): the
 * header is read and checked against every column the pipeline's stages need in every row before anything is
 * called or written, so a file with a misnamed column costs one exit 2 and a message, not a night of
 * row errors. `run`, `run --dry-run` and `run --plan` all open their input here.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { BreError, isBreError } from '@bre-batch/core/errors';
import type { DbColumn } from '../db/index.js';
import { COMMA_STYLE } from '@bre-batch/formats/input/numbers';
import { checkFileColumns } from '../input/files-root.js';
import { DbSource, sourceIdentity } from '../input/db/index.js';
import { resolveHeader, type ColumnRequirements } from '@bre-batch/formats/input/header';
import { describeEmpty, inspectInputFile } from '../input/inspect.js';
import { estimateRows, readRowBatches } from '@bre-batch/formats/input/read';
import { lineKey } from '../input/shard.js';
import type { Pipeline } from '../config/pipeline.js';
import { FILES, readFrontier, readManifest, type Manifest } from '@bre-batch/formats';
import { JournalKeys } from '../output/journal/keys.js';
import { sourceDifferences } from '../output/folder-identity.js';
import { kindOf } from '../stages/index.js';
import type { SampleSpec } from '../sample/design.js';
import type { InputRow, NumberStyle } from '@bre-batch/core/types';
import type { FrontierPoint } from './frontier-tracker.js';
import type { RunSettings, SourceSettings } from './settings.js';

/** The columns of file paths a pipeline reads (read inside the files root: src/input/files-root.ts). */
function fileColumns(pipeline: Pipeline): string[] {
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
    for (const name of spec.required)
      if (!required.has(name)) required.set(name, [name, ...(spec.alternatives?.[name] ?? [])]);
    const names = [
      ...spec.required,
      ...spec.optional,
      ...Object.keys(spec.conditional),
      ...Object.values(spec.alternatives ?? {}).flat(),
      ...(spec.files ?? []),
    ];
    for (const name of names) {
      if (!/^[\w.-]+$/.test(name)) continue; // descriptions such as "(every other column)"
      known.add(name);
      const dot = name.lastIndexOf('.');
      if (dot !== -1) known.add(name.slice(dot + 1));
    }
  }
  return {
    what: `pipeline '${pipeline.name}'${sample?.stratifyBy.length ? ' and --stratify-by' : ''}`,
    required: [...required.values()],
    known: [...known],
  };
}

/** manifest.json's `input.reading` (packages/formats/src/manifest.ts). */
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
  /** A database input: the source (closed by the caller) and where this session's reading started. */
  readonly db?: { readonly source: DbSource; readonly start: FrontierPoint | undefined };
  /** The input had no data rows and --allow-empty said that was expected: what it held, in words. */
  readonly empty?: string;
}

export interface OpenOptions {
  /**
   * A database input read for a run into --out: start after the folder's frontier, when it has one and may
   * be trusted, and check that every row the folder holds still has its key. Default: read from the start.
   */
  readonly resume?: boolean;
}

/** What opening the input reads of a run's settings (the bench draws samples with no run around them). */
export type InputSettings = SourceSettings &
  Pick<RunSettings, 'pipeline' | 'sample' | 'log'> &
  /** Where a database input's resume point is (`OpenOptions.resume`). */
  Partial<Pick<RunSettings, 'outDir' | 'retryErrors'>>;

/**
 * An input without data rows is INPUT_EMPTY (exit 2), naming what it held: a truncated nightly export must
 * not look like a quiet night. --allow-empty says an empty input is expected: `what` is returned instead.
 */
function emptyInput(s: InputSettings, where: string, what: string): string {
  if (s.allowEmpty) return what;
  throw new BreError(
    'INPUT_EMPTY',
    `Expected data rows in ${where}, got ${what}: an empty or truncated export? Nothing was called. ` +
      'Give --allow-empty when an empty input is expected (the run then ends with exit 0 and says so)',
    { field: 'input' },
  );
}

/**
 * Opens the input and reads its first batch of rows (the header with it). Throws a BreError with exit 2
 * (INPUT_HEADER, INPUT_UNREADABLE; for a database DB_UNREACHABLE, DB_QUERY_FAILED) when the header is not
 * what the pipeline needs or the input cannot be read, and FILES_ROOT_NEEDED when it names a column of file
 * paths and the run has no files root (stdin or a database without --files-root). `log` hears the one line
 * saying which separator was sniffed, when it is not a comma (and, for a database, where a resume starts).
 */
export async function openInput(
  s: InputSettings,
  log: (line: string) => void = s.log,
  opts: OpenOptions = {},
): Promise<OpenedInput> {
  if (s.source) return openDbInput(s, log, opts);
  // A missing path, a folder or a binary file is said in words before it is read as rows.
  const bytes = inspectInputFile(s.input, s.inputFormat, s.encoding);
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
    onEncoding: (name) => {
      encoding = name;
    },
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
  const empty = first.done
    ? emptyInput(
        s,
        s.input === '-' ? 'the input (stdin)' : `the input ${s.input}`,
        describeEmpty({ bytes, columns, format: s.inputFormat }),
      )
    : undefined;
  return {
    reader,
    first,
    numberStyle,
    reading: { encoding, delimiter, decimal_comma: decimalComma },
    columns,
    ...(empty ? { empty } : {}),
  };
}

/**
 * The header check of a database input: a json/jsonb column `a` may hold any `a.b` a pipeline reads (its rows
 * are objects, reached by dotted path as NDJSON's nested fields are: packages/formats/src/input/fields.ts), which
 * the columns alone cannot tell: such paths count as present, and a row without one is that row's error.
 */
function jsonPaths(req: ColumnRequirements, columns: readonly DbColumn[]): string[] {
  const json = new Set(columns.filter((c) => c.type === 'json' || c.type === 'jsonb').map((c) => c.name.toLowerCase()));
  return req.required
    .flat()
    .filter((name) => name.includes('.') && json.has(name.slice(0, name.indexOf('.')).toLowerCase()));
}

async function openDbInput(s: InputSettings, log: (line: string) => void, opts: OpenOptions): Promise<OpenedInput> {
  const db = s.source!;
  const req = columnRequirements(s.pipeline, s.sample);
  const files = fileColumns(s.pipeline);
  let names: string[] | undefined;
  const source = await DbSource.open({
    url: db.url,
    relation: db.relation,
    key: s.pipeline.key,
    retryForMs: db.retryForMs,
    statementTimeoutMs: db.statementTimeoutMs,
    pageRows: db.pageRows,
    notice: (line) => log(line),
    header: (header, columns) => {
      names = resolveHeader({ ...header, nested: jsonPaths(req, columns) }, req);
      checkFileColumns(names, files, s.filesRoot, header.where);
      return names;
    },
  });
  try {
    const resume = opts.resume ? await resumeOf(s, log) : undefined;
    const rows = source.rows(resume?.start);
    const reader = resume ? checkedRows(rows, resume.keys, s.pipeline.key, source.description) : rows;
    const first = await reader.next();
    // A resume past the last row reads nothing, yet the input is not empty.
    const empty =
      first.done && !resume?.start
        ? emptyInput(
            s,
            source.description,
            db.relation.kind === 'table' ? 'an empty table (0 rows)' : 'a query that returned 0 rows',
          )
        : undefined;
    return {
      reader,
      first,
      numberStyle: COMMA_STYLE,
      reading: { encoding: null, delimiter: null, decimal_comma: false },
      columns: names,
      db: { source, start: resume?.start },
      ...(empty ? { empty } : {}),
    };
  } catch (err) {
    await source.close();
    throw err;
  }
}

/**
 * Where a database input's run into --out starts, and the keys of the rows the folder holds after it. From
 * the start: a new folder, a folder of another input (the output refuses it when it opens), --retry-errors
 * or an interrupted retry (the rows to run again are anywhere), and a folder without a readable frontier
 * (killed before its first write: the done rows are skipped as for a file).
 */
async function resumeOf(
  s: InputSettings,
  log: (line: string) => void,
): Promise<{ start: FrontierPoint | undefined; keys: JournalKeys } | undefined> {
  const dir = s.outDir;
  if (dir === undefined) return undefined;
  const old = readManifest(dir);
  if (!old || old.key !== s.pipeline.key || old.input.source === undefined) return undefined;
  const now = { ...old, input: { ...old.input, source: sourceIdentity(s.source!.url, s.source!.relation) } };
  if (sourceDifferences(old, now).length > 0) return undefined;
  let start: FrontierPoint | undefined;
  if (!s.retryErrors && !existsSync(join(dir, FILES.retrying))) {
    const read = readFrontier(dir);
    if (read.problem)
      log(
        `warning: ${join(dir, FILES.frontier)} cannot be read (${read.problem}): reading the input from its start (rows already done are skipped)`,
      );
    start = read.frontier ? { row: read.frontier.row, key: read.frontier.key } : undefined;
  }
  if (start)
    log(
      `resuming after row ${start.row} (${s.pipeline.key} ${start.key === null ? 'NULL' : `'${start.key}'`}): the rows up to it are done`,
    );
  return { start, keys: await JournalKeys.read(dir, start?.row ?? 0) };
}

/** The rows, each one the folder already holds checked against its line's key: SOURCE_CHANGED when it differs. */
async function* checkedRows(
  rows: AsyncGenerator<InputRow[]>,
  keys: JournalKeys,
  keyColumn: string,
  what: string,
): AsyncGenerator<InputRow[]> {
  for await (const batch of rows) {
    if (keys.size > 0) {
      for (const r of batch) {
        // The rows of a duplicated key are all errors, in an order the database does not keep: any of them
        // may take any of their numbers.
        if (r.readError?.code === 'DUPLICATE_KEY') continue;
        const key = lineKey(r, keyColumn);
        if (keys.matches(r.row, key) === false) {
          throw new BreError(
            'SOURCE_CHANGED',
            `row ${r.row} of ${what} now has ${keyColumn} ${key === null ? 'NULL' : `'${key}'`}, but the output folder's line for row ${r.row} has another key: ` +
              'the input changed behind the run (rows added or removed before the last row read, or keys changed), so its row numbers no longer name the same rows. ' +
              'Nothing more is read into this folder; to run the input as it is now, use a new --out',
            { row: r.row, field: keyColumn },
          );
        }
      }
    }
    yield batch;
  }
}

/**
 * About how many data rows the input holds, for the progress bar, the monitor and a stopped run's estimate:
 * a file's lines (packages/formats/src/input/read.ts), a database's `count(*)`; undefined for stdin.
 */
export function estimateInputRows(s: RunSettings, source?: DbSource): Promise<number> | undefined {
  if (source) return source.count();
  if (s.input === '-' || s.source) return undefined;
  return estimateRows(s.input, s.inputFormat);
}
