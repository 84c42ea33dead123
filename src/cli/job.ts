/**
 * `bre-batch job status NAME --sink URL` and `bre-batch job report NAME --sink URL`: a job's state as a whole,
 * read from its tables (src/job/status.ts) by any host at any time. Exit 0; 2 when the job is unknown or the
 * database cannot be reached.
 */
import type { Argv } from 'yargs';
import { BreError } from '@bre-batch/core/errors';
import { JobStore } from '../job/index.js';
import { formatJobReport, formatJobStatus, readJobReport, readJobStatus } from '../job/status.js';
import { formatJobVerify, verifyJob } from '../job/verify.js';
import { sinkNames } from '../output/sink/tables.js';
import { dialectOf } from '../db/index.js';
import { exitCodeCommand, jsonOption } from './command.js';
import { resolveSink, sinkOptionsOf, type SinkArgs } from './sink-options.js';

interface JobArgs extends SinkArgs {
  action: string;
  name: string;
  'window-hours'?: number;
  json: boolean;
}

async function jobCommandHandler(a: JobArgs): Promise<number> {
  if (a['window-hours'] !== undefined && !(a['window-hours'] > 0))
    throw new BreError('USAGE', `Expected --window-hours to be a number of hours above 0, got '${a['window-hours']}'`, {
      field: 'window-hours',
    });
  const store = await JobStore.open({
    url: resolveSink({ ...a, 'sink-retry': '0s' }, 'job')!.url,
    schema: a['sink-schema'],
    retryForMs: 0,
  });
  try {
    if (a.action === 'verify') {
      const job = await store.job(a.name);
      if (!job) throw unknownJob(a.name);
      const r = await verifyJob(store, a.name, sinkTables(store, a, job.definition.sink_table));
      process.stdout.write(`${a.json ? JSON.stringify(r, null, 2) : formatJobVerify(r!)}\n`);
      return r!.problems.length === 0 ? 0 : 1;
    }
    if (a.action === 'status') {
      const st = await readJobStatus(store, a.name, a['window-hours']);
      if (!st) throw unknownJob(a.name);
      process.stdout.write(`${a.json ? JSON.stringify(st, null, 2) : formatJobStatus(st)}\n`);
    } else {
      const job = await store.job(a.name);
      if (!job) throw unknownJob(a.name);
      const r = await readJobReport(store, a.name, sinkTables(store, a, job.definition.sink_table).errors);
      process.stdout.write(`${a.json ? JSON.stringify(r, null, 2) : formatJobReport(r!)}\n`);
    }
    return 0;
  } finally {
    await store.close();
  }
}

/** The sink's results and errors tables of the job, qualified (--sink-table over the job's own). */
function sinkTables(store: JobStore, a: JobArgs, jobTable: string): { results: string; errors: string } {
  const names = sinkNames(a['sink-table'] ?? jobTable.split('.').pop()!, dialectOf(store.opts.url).maxIdentifier);
  return {
    results: store.dialect.table(names.results, a['sink-schema']),
    errors: store.dialect.table(names.errors, a['sink-schema']),
  };
}

function unknownJob(name: string): BreError {
  return new BreError(
    'USAGE',
    `Expected a job that a worker has started, got '${name}': no such job in this database (start one with run ... --job ${name} --sink URL)`,
    { field: 'name' },
  );
}

export const jobCommand = exitCodeCommand<JobArgs>({
  command: 'job <action> <name>',
  describe:
    "a job shared by several hosts (run --job): its status (chunks, rows, workers and their rates, ETA), its report, or a check of it (verify), from the sink's database",
  builder: (y: Argv) =>
    y
      .positional('action', {
        type: 'string',
        choices: ['status', 'report', 'verify'],
        demandOption: true,
        describe:
          'status: where the job is now; report: its totals, errors by code; verify: every chunk done, every row and key once in the tables (exit 1 naming each difference)',
      })
      .positional('name', { type: 'string', demandOption: true, describe: "the job's name (run --job NAME)" })
      .options(
        sinkOptionsOf(
          {
            sink: "the database the job's workers write to (its state is kept there)",
            table: "with report: the results table whose NAME_errors holds the job's errors (default: the job's own)",
          },
          false,
        ),
      )
      .option('window-hours', {
        type: 'number',
        describe:
          'with status: the hours left in the window; says whether the rest fits with the workers now running, or how many more addresses it needs',
      })
      .option('json', jsonOption('print the status or report as JSON')),
  run: jobCommandHandler,
});
