/**
 * `bre-batch merge <out1> <out2> ... --out DIR`: option parsing only; the work is in src/output/merge.ts.
 * Exit 0 merged (warnings for missing or unfinished shards are printed, and summary.json says finished
 * false); 1 a row is in two places, in the wrong shard, or in none (nothing written); 2 the folders do not
 * belong together (other pipeline, input, key or shard count: a BreError, mapped by src/cli/main.ts).
 */
import type { Argv } from 'yargs';
import { formatMergeReport, mergeOutputs } from '../output/merge.js';
import { parseOutputFormats } from '../output/spool/output-formats.js';
import { writeRunReport } from '../report/write.js';
import { recordOutputs } from '../output/audit.js';
import { exitCodeCommand } from './command.js';

interface MergeArgs {
  dirs: string[];
  out: string;
  'output-formats'?: string;
  'keep-journal': boolean;
}

async function mergeCommandHandler(a: MergeArgs): Promise<number> {
  const log = (l: string) => process.stderr.write(`${l}\n`);
  const report = await mergeOutputs({
    dirs: a.dirs,
    out: a.out,
    log,
    formats: parseOutputFormats(a['output-formats']),
  });
  if (report.ok) {
    // A merge of every shard, finished, is a finished night: its journal gzip'ed as a run's.
    const compacted =
      report.summary?.finished && !a['keep-journal']
        ? `${await (await import('../output/journal/compact.js')).compactFinishedRun(a.out)}\n`
        : '';
    const page = await writeRunReport(a.out);
    // The merged folder's files as they are left, for `bre-batch verify` (its journals compacted first).
    await recordOutputs(a.out);
    process.stdout.write(`${formatMergeReport(report)}\n${compacted}  report: ${page.path}\n`);
  } else process.stderr.write(`${formatMergeReport(report)}\n`);
  return report.ok ? 0 : 1;
}

export const mergeCommand = exitCodeCommand<MergeArgs>({
  command: 'merge <dirs..>',
  describe: 'combine the output folders of `run --shard K/N` workers into one, checking every row is there once',
  builder: (y: Argv) =>
    y
      .positional('dirs', {
        type: 'string',
        array: true,
        demandOption: true,
        describe: "the shards' output folders (run --out of each worker)",
      })
      .option('out', {
        type: 'string',
        demandOption: true,
        describe: 'the merged output folder (new, empty, or an earlier merge to replace)',
      })
      .option('output-formats', {
        type: 'string',
        describe: 'formats of the rebuilt files: csv, parquet or csv,parquet (default both)',
      })
      .option('keep-journal', {
        type: 'boolean',
        default: false,
        describe: "keep the merged folder's journal uncompressed instead of gzip'ing it once the merge is finished",
      }),
  run: mergeCommandHandler,
});
