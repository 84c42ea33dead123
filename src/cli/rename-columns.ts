/**
 * `bre-batch rename-columns --sink URL --sink-table NAME`: option parsing only; the work is in
 * src/output/sink/rename.ts. Exit 0 renamed (or, with --dry-run, the statements printed); 2 the sink or the
 * table cannot be used (nothing changed).
 */
import type { Argv } from 'yargs';
import { renameColumns } from '../output/sink/rename.js';
import { exitCodeCommand } from './command.js';
import { resolveSink, sinkOptionsOf, type SinkArgs } from './sink-options.js';

interface RenameArgs extends SinkArgs {
  'dry-run': boolean;
}

async function renameHandler(a: RenameArgs): Promise<number> {
  const target = resolveSink(a, a['sink-table'] ?? '')!;
  const r = await renameColumns(target, a['dry-run']);
  const out = (l: string) => process.stdout.write(`${l}\n`);
  for (const c of r.renames) {
    const what =
      c.from === c.to ? `${c.from}: comment set to its field ${c.field}` : `${c.from} -> ${c.to} (field ${c.field})`;
    out(a['dry-run'] ? `would rename ${what}: ${c.statements.join('; ')};` : `renamed ${what}`);
  }
  for (const c of r.unknown)
    process.stderr.write(
      `rename-columns: ${c}: no row has a value in it, so its field is not known; left as it is (a run that meets the field finds it by this name)\n`,
    );
  out(
    `${r.table}: ${r.renames.length} column${r.renames.length === 1 ? '' : 's'} ${a['dry-run'] ? 'to rename (nothing changed: --dry-run)' : 'renamed in place'}${r.unknown.length > 0 ? `, ${r.unknown.length} left as they are` : ''}`,
  );
  return 0;
}

export const renameColumnsCommand = exitCodeCommand<RenameArgs>({
  command: 'rename-columns',
  describe:
    'rename the result columns of a sink table an earlier bre-batch made (hashed names) to plain ones, in place, each commented with its field',
  builder: (y: Argv) =>
    y.options({
      ...sinkOptionsOf(
        { sink: 'the database holding the table', table: 'the results table NAME whose columns to rename' },
        false,
      ),
      'sink-table': { type: 'string', demandOption: true, describe: 'the results table NAME whose columns to rename' },
      'dry-run': {
        type: 'boolean',
        default: false,
        describe: 'print the statements that would rename the columns, change nothing',
      },
    }),
  run: (a) => renameHandler({ ...a, 'sink-retry': '60s' }),
});
