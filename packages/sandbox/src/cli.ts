/**
 * `bre-sandbox`: the sandbox on its own (this package's bin), with the options, banner and exit codes of
 * `bre-batch sandbox` (./command.ts), for a team that wants the emulator in its own tests without the runner.
 */
import { createRequire } from 'node:module';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { exitCodeOf, internalError, isBreError } from '@bre-batch/core/errors';
import { sandboxCommand } from './command.js';

/** package.json is one level up both from src/ (tsx) and from dist/ (the bundle). */
const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

try {
  await yargs(hideBin(process.argv))
    .scriptName('bre-sandbox')
    .command({ ...sandboxCommand, command: '$0' })
    .strict()
    .help()
    .version(version)
    .fail((msg, err) => {
      if (err) throw err;
      process.stderr.write(`bre-sandbox: ${msg}\nTry 'bre-sandbox --help'.\n`);
      process.exit(2);
    })
    .parseAsync();
} catch (thrown) {
  // As bre-batch does: a BreError says what to fix and exits by the error table; anything else is a bug.
  const err = isBreError(thrown) ? thrown : internalError(thrown);
  process.stderr.write(`bre-sandbox: ${err.message}\n`);
  if (err.code === 'USAGE') process.stderr.write("Try 'bre-sandbox --help'.\n");
  process.exitCode = exitCodeOf(err);
}
