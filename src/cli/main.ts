/** `bre-batch <command>`: argument parsing only; each command lives in its own file. */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { dirname } from 'node:path';
import { diskFullCode, diskFullError, exitCodeOf, internalError, isBreError } from '../errors.js';
import { commands } from './commands.js';
import { createLog } from '../log/logger.js';
import { applyOutputMode, parseOutputMode } from '../output/modes.js';

/** With --log-format json even the last word is a JSON line (the option may not have been parsed yet). */
function jsonLogs(): boolean {
  const argv = process.argv.slice(2);
  return argv.includes('--log-format=json') || argv.some((x, i) => x === '--log-format' && argv[i + 1] === 'json');
}

/**
 * yargs reads a lone `-` as a stray positional; `--input -` (stdin) must reach the option as its value. And it
 * reads `--no-proxy LIST` as `--proxy false` then a stray LIST (its --no- negation): joined, it is the option.
 */
function normaliseArgv(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === '--input' && argv[i + 1] === '-') {
      out.push('--input=-');
      i += 1;
    } else if (argv[i] === '--no-proxy' && argv[i + 1] !== undefined) {
      out.push(`--no-proxy=${argv[i + 1]}`);
      i += 1;
    } else out.push(argv[i]);
  }
  return out;
}

const cli = yargs(normaliseArgv(hideBin(process.argv)))
  .scriptName('bre-batch')
  .strict()
  .demandCommand(1, 'Expected a command: run, sandbox, pipelines, detect, compare, merge or report')
  .recommendCommands()
  .help()
  .version(false)
  .fail((msg, err) => {
    if (err) throw err;
    // Written synchronously in both forms, so nothing is lost to the exit.
    if (jsonLogs()) createLog({ format: 'json' })(`bre-batch: ${msg}`, { level: 'error', code: 'USAGE' });
    else process.stderr.write(`bre-batch: ${msg}\nTry 'bre-batch --help'.\n`);
    process.exit(2);
  });
// Every command that writes a folder (run, merge, compare --out, report) creates it for its owner only:
// the mode is the process's umask, set before the command starts (src/output/modes.ts).
cli
  .option('output-mode', { type: 'string', global: true, describe: 'mode of the folders and files written, in octal (files get it without x); default 0700: owner only, since they hold applicants\' data' })
  .middleware((argv) => applyOutputMode(parseOutputMode(argv['output-mode'])), true);
for (const c of commands) cli.command(c as never);

try {
  await cli.parseAsync();
} catch (thrown) {
  // A full disk met by any command (run names its output folder itself, src/cli/run.ts): DISK_FULL, exit 3.
  const path = (thrown as { path?: unknown } | null)?.path;
  // Anything else that is not a BreError is a bug: INTERNAL, asking for a report.
  const err = isBreError(thrown) ? thrown
    : diskFullCode(thrown) ? diskFullError(typeof path === 'string' ? dirname(path) : '.', thrown, 'the folder')
      : internalError(thrown);
  createLog({ format: jsonLogs() ? 'json' : 'human' })(`bre-batch: ${err.message}`, { level: 'error', code: err.code });
  if (err.code === 'INTERNAL' && process.env.BRE_DEBUG) process.stderr.write(`${err.stack}\n`);
  // Exit codes (CONTRACT): 0 all rows ok, 1 some rows in errors (set by the command), 2 or 3 by the error table.
  process.exitCode = exitCodeOf(err);
}
