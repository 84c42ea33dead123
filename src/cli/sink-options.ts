/**
 * The --sink options, as `run` and `load` take them: the URL (no password on the command line: env:VAR or
 * file:PATH for one), the table (default: the pipeline's name), PostgreSQL's schema, and how long a sink that
 * went away is tried again.
 */
import type { Options } from 'yargs';
import { BreError } from '@bre-batch/core/errors';
import { parseDuration } from '@bre-batch/core/units';
import { dialectOf } from '../db/index.js';
import type { SinkTarget } from '../output/sink/index.js';
import { resolveDbUrl } from './db-url.js';

export interface SinkArgs {
  sink?: string;
  'sink-table'?: string;
  'sink-schema'?: string;
  'sink-retry': string;
}

export const SINK_OPTIONS = {
  sink: {
    type: 'string',
    describe:
      'also write results, errors and transactions into database tables, exactly once: postgres://HOST[:PORT]/DB or mysql://HOST[:PORT]/DB (no password: PGPASSWORD, ~/.pgpass, MYSQL_PWD), env:VAR or file:PATH holding the URL',
  },
  'sink-table': {
    type: 'string',
    describe:
      "with --sink: the results table NAME (errors go to NAME_errors, transactions to NAME_transactions; default: the pipeline's name)",
  },
  'sink-schema': {
    type: 'string',
    describe: "with a PostgreSQL --sink: the schema of its tables (default: the connection's search_path)",
  },
  'sink-retry': {
    type: 'string',
    default: '60s',
    describe:
      'with --sink: how long to keep connecting again when the database goes away before stopping (exit 3, resumable)',
  },
} as const satisfies Record<string, Options>;

/**
 * The --sink options of a command whose work is the sink (`load`, `job`, `rename-columns`): --sink required and
 * each said as that command uses it; `retry` false for a command that reads once.
 */
export function sinkOptionsOf(what: { readonly sink: string; readonly table: string }, retry = true) {
  return {
    sink: {
      type: 'string',
      demandOption: true,
      describe: `${what.sink}: postgres://HOST[:PORT]/DB or mysql://HOST[:PORT]/DB (no password: PGPASSWORD, ~/.pgpass, MYSQL_PWD), env:VAR or file:PATH holding the URL`,
    },
    'sink-table': { type: 'string', describe: what.table },
    'sink-schema': {
      type: 'string',
      describe: "a PostgreSQL --sink's schema of the tables (default: the connection's search_path)",
    },
    ...(retry ? { 'sink-retry': SINK_OPTIONS['sink-retry'] } : {}),
  } as const satisfies Record<string, Options>;
}

/** The sink target, or undefined without --sink (its other options then refused). */
export function resolveSink(
  a: SinkArgs,
  defaultTable: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
  read?: (path: string, what: string) => string,
): SinkTarget | undefined {
  if (a.sink === undefined) {
    const given =
      a['sink-table'] !== undefined ? 'sink-table' : a['sink-schema'] !== undefined ? 'sink-schema' : undefined;
    if (given)
      throw new BreError('USAGE', `Expected --${given} only with --sink URL, got --${given} without --sink`, {
        field: given,
      });
    return undefined;
  }
  const url = resolveDbUrl(a.sink, '--sink', env, read);
  const schema = a['sink-schema'];
  const dialect = dialectOf(url);
  if (schema !== undefined && !dialect.schemas) {
    throw new BreError(
      'USAGE',
      `Expected --sink-schema only with a --sink that has schemas (PostgreSQL), got it with ${url.display}: ${dialect.label} has no schema apart from the URL's database`,
      { field: 'sink-schema' },
    );
  }
  const table = a['sink-table'] ?? defaultTable;
  if (table.trim() === '')
    throw new BreError('USAGE', "Expected --sink-table to be a table name, got ''", { field: 'sink-table' });
  return {
    url,
    table,
    ...(schema !== undefined ? { schema } : {}),
    retryForMs: parseDuration(a['sink-retry'], { flag: 'sink-retry', unit: 's' }),
  };
}
