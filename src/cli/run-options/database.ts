/**
 * `run`'s database options: a database --input (--table or --query, how long to keep connecting, a page's
 * time-out and size) and the --sink (src/cli/sink-options.ts, shared with `load`).
 */
import { BreError } from '@bre-batch/core/errors';
import { parseDuration } from '@bre-batch/core/units';
import { DEFAULT_PAGE_ROWS, parseRelation } from '../../input/db/index.js';
import type { DbInputSettings } from '../../pipeline/settings.js';
import type { SinkTarget } from '../../output/sink/index.js';
import { namesDatabase, resolveDbUrl } from '../db-url.js';
import { resolveSink, SINK_OPTIONS, type SinkArgs } from '../sink-options.js';
import { wholeNumber, type OptionFamily, type OptionsContext } from './family.js';

export interface DatabaseArgs extends SinkArgs {
  input: string;
  table?: string;
  query?: string;
  'input-retry': string;
  'input-timeout': string;
  'input-page-rows': unknown;
  'input-format'?: string;
  encoding?: string;
  delimiter?: string;
  'decimal-comma': boolean;
}

export const DATABASE_OPTIONS = {
  title: 'Database:',
  options: {
    table: {
      type: 'string',
      describe: 'with a database --input: the table to read, NAME or SCHEMA.NAME ("Quoted"."Parts" keep case and dots)',
    },
    query: {
      type: 'string',
      describe:
        'with a database --input: a SELECT whose rows to read (instead of --table); it is read in key order, in pages',
    },
    'input-retry': {
      type: 'string',
      default: '60s',
      describe:
        'with a database --input: how long to keep connecting again when it goes away mid-run before stopping (exit 3, resumable)',
    },
    'input-timeout': {
      type: 'string',
      default: '5m',
      describe:
        'with a database --input: how long one page may go unanswered before its connection is taken for lost (then connected again, as for --input-retry)',
    },
    'input-page-rows': {
      requiresArg: true,
      default: DEFAULT_PAGE_ROWS,
      describe: 'with a database --input: rows read per keyset page, 1 to 100000 (smaller for very wide rows)',
    },
    ...SINK_OPTIONS,
  },
} as const satisfies OptionFamily;

/**
 * A database --input (a URL, env:VAR or file:PATH) with --table or --query; undefined for a file. The options
 * that only say how to read text make no sense for a database's typed rows and are refused (exit 2).
 */
export function resolveDbInput(
  a: Omit<DatabaseArgs, keyof SinkArgs>,
  ctx: Pick<OptionsContext, 'env' | 'readSecretFile'>,
): DbInputSettings | undefined {
  if (!namesDatabase(a.input)) {
    const given = a.table !== undefined ? '--table' : a.query !== undefined ? '--query' : undefined;
    if (given)
      throw new BreError(
        'USAGE',
        `Expected ${given} only with a database --input (postgres://HOST/DB, mysql://HOST/DB, env:VAR or file:PATH), got --input ${a.input}`,
        { field: given.slice(2) },
      );
    return undefined;
  }
  const textOnly: [string, unknown][] = [
    ['input-format', a['input-format']],
    ['encoding', a.encoding],
    ['delimiter', a.delimiter],
    ['decimal-comma', a['decimal-comma'] || undefined],
  ];
  for (const [flag, value] of textOnly) {
    if (value !== undefined)
      throw new BreError(
        'USAGE',
        `Expected no --${flag} with a database --input, got --${flag}${value === true ? '' : ` ${String(value)}`}: a database's rows come typed (numbers as numbers, text as text), not as text to decode`,
        { field: flag },
      );
  }
  const pageRows = wholeNumber('input-page-rows', a['input-page-rows'], { min: 1, max: 100_000 });
  const url = resolveDbUrl(a.input, '--input', ctx.env, ctx.readSecretFile);
  return {
    url,
    relation: parseRelation({ table: a.table, query: a.query }, url.dialect),
    retryForMs: parseDuration(a['input-retry'], { flag: 'input-retry', unit: 's' }),
    statementTimeoutMs: parseDuration(a['input-timeout'], { flag: 'input-timeout', unit: 's', min: 1 }),
    pageRows,
  };
}

/** --sink and its options; the results table is named after the pipeline unless --sink-table says otherwise. */
export function resolveRunSink(
  a: SinkArgs,
  pipelineName: string,
  ctx: Pick<OptionsContext, 'env' | 'readSecretFile'>,
): SinkTarget | undefined {
  return resolveSink(a, pipelineName, ctx.env, ctx.readSecretFile);
}
