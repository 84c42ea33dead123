/**
 * `bre-batch load OUT --sink URL`: option parsing only; the work is in src/output/sink/load.ts. Exit 0 loaded;
 * 2 the folder or the sink cannot be used (nothing written); 3 the sink went away part-way (re-run it).
 */
import type { Argv } from 'yargs';
import { defaultSinkTable, loadFolder } from '../output/sink/load.js';
import { exitCodeCommand } from './command.js';
import { resolveSink, sinkOptionsOf, type SinkArgs } from './sink-options.js';

interface LoadArgs extends SinkArgs {
  out: string;
}

async function loadCommandHandler(a: LoadArgs): Promise<number> {
  const log = (l: string) => process.stderr.write(`${l}\n`);
  const target = resolveSink(a, a['sink-table'] ?? defaultSinkTable(a.out))!;
  const r = await loadFolder(a.out, target, log);
  process.stdout.write(
    `Loaded ${a.out} into ${r.tables}: ${r.results} result${r.results === 1 ? '' : 's'} and ${r.errors} error${r.errors === 1 ? '' : 's'} written (${r.batches} batch${r.batches === 1 ? '' : 'es'})${r.startedAt.results + r.startedAt.errors > 0 ? '; rows the tables already had from this folder were not read again' : ''}\n`,
  );
  if (r.retrying)
    log(
      `load: warning: ${a.out} holds an unfinished --retry-errors (errors.retrying.ndjson): those rows are loaded once that run finishes`,
    );
  return 0;
}

export const loadCommand = exitCodeCommand<LoadArgs>({
  command: 'load <out>',
  describe:
    "write an output folder (a run's or a merged one) into database tables, with the same upserts as run --sink; no API call",
  builder: (y: Argv) =>
    y.positional('out', { type: 'string', demandOption: true, describe: 'the output folder to load' }).options(
      sinkOptionsOf({
        sink: 'the database to write the folder into',
        table:
          "the results table NAME (errors go to NAME_errors, transactions to NAME_transactions; default: the folder's pipeline name)",
      }),
    ),
  run: loadCommandHandler,
});
