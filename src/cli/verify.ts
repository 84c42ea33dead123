/**
 * `bre-batch verify <dir>`: checks an output folder against its record in manifest.json and the invariant (the
 * work is src/output/verify.ts). Exit 0 when nothing differs, 1 naming each difference, 2 when the folder is not
 * one bre-batch wrote.
 */
import type { Argv } from 'yargs';
import { verifyFolder, type VerifyReport } from '../output/verify.js';
import { exitCodeCommand, jsonOption, OUTPUT_FOLDER, requireFolder } from './command.js';
import { resolveDbUrl } from './db-url.js';

interface VerifyArgs {
  dir: string;
  json: boolean;
  input?: string;
}

export function formatVerifyReport(r: VerifyReport): string {
  const lines = [
    r.problems.length === 0
      ? `verified ${r.folder}: as recorded, every row once`
      : `${r.folder}: ${r.problems.length} difference${r.problems.length === 1 ? '' : 's'}`,
    ...r.problems.map((p) => `  DIFFERS: ${p}`),
    ...r.checked.map((c) => `  checked: ${c}`),
    ...r.notes.map((n) => `  not checked: ${n}`),
  ];
  return `${lines.join('\n')}\n`;
}

async function verifyCommandHandler(a: VerifyArgs): Promise<number> {
  requireFolder(a.dir, 'dir');
  const r = await verifyFolder(a.dir, a.input === undefined ? {} : { input: resolveDbUrl(a.input, '--input') });
  process.stdout.write(a.json ? `${JSON.stringify(r, null, 2)}\n` : formatVerifyReport(r));
  return r.problems.length === 0 ? 0 : 1;
}

export const verifyCommand = exitCodeCommand<VerifyArgs>({
  command: 'verify <dir>',
  describe:
    'check an output folder against its record (manifest.json: every output file and the input by sha256, or a database input read again) and that every input row is once in results or errors, stamped with its run',
  builder: (y: Argv) =>
    y
      .positional('dir', OUTPUT_FOLDER)
      .option('json', jsonOption('print what was checked and each difference as JSON'))
      .option('input', {
        type: 'string',
        describe:
          "a database input's URL (or env:VAR, file:PATH), when reading it again needs what manifest.json leaves out (parameters, a password); it must name the database the run read. Default: the recorded URL",
      }),
  run: verifyCommandHandler,
});
