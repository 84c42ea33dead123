/** `bre-batch report <out>`: rebuilds report.html of an output folder; the work is in src/report/. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Argv } from 'yargs';
import { BreError } from '@bre-batch/core/errors';
import { FILES } from '@bre-batch/formats';
import { writeRunReport } from '../report/write.js';
import { exitCodeCommand, OUTPUT_FOLDER, requireFolder } from './command.js';

interface ReportArgs {
  dir: string;
}

async function reportCommandHandler(a: ReportArgs): Promise<number> {
  requireFolder(a.dir);
  if (!existsSync(join(a.dir, FILES.manifest)) && !existsSync(join(a.dir, FILES.summary))) {
    throw new BreError(
      'USAGE',
      `Expected an output folder of bre-batch run or merge (with manifest.json), got ${a.dir}`,
    );
  }
  const { path, missing } = await writeRunReport(a.dir);
  for (const m of missing) process.stderr.write(`report: ${m}\n`);
  process.stdout.write(`report: ${path}\n`);
  return 0;
}

export const reportCommand = exitCodeCommand<ReportArgs>({
  command: 'report <dir>',
  describe: "rebuild report.html of an output folder (a run's or a merged one) from the folder alone",
  builder: (y: Argv) => y.positional('dir', OUTPUT_FOLDER),
  run: reportCommandHandler,
});
