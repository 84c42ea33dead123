/**
 * `bre-batch <command>`: argument parsing only; each command lives in its own file. Only the module of the
 * command given is loaded (./commands.ts): `bre-batch --help` and `pipelines` do not pay for `run`'s.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { diskFullCode, diskFullError, exitCodeOf, internalError, isBreError } from '@bre-batch/core/errors';
import { createLog } from '../log/logger.js';
import { applyOutputMode, parseOutputMode } from '../output/modes.js';
import { commandName, COMMANDS, type CommandEntry } from './commands.js';
import { commandWord, usageMessage, withoutOutputMode } from './usage.js';

/** With --log-format json even the last word is a JSON line (the option may not have been parsed yet). */
function jsonLogs(argv: readonly string[]): boolean {
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

/** The part of yargs' internals this file touches: the usage instance of yargs 18 (the same object throughout). */
interface YargsInternals {
  getInternalMethods(): { getUsageInstance(): { cacheHelpMessage: () => void } };
}

const argv = normaliseArgv(hideBin(process.argv));
const chosen: CommandEntry | undefined = COMMANDS.find((c) => commandName(c) === commandWord(argv));
const chosenModule = chosen ? await chosen.load() : undefined;
const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

const cli = yargs(argv)
  .scriptName('bre-batch')
  .strict()
  .demandCommand(1, `Expected a command: ${COMMANDS.map(commandName).join(', ')}`)
  .help()
  .version(version)
  .fail((msg, err) => {
    if (err) throw err;
    const text = usageMessage(msg, argv, chosen, chosenModule);
    // Written synchronously in both forms, so nothing is lost to the exit.
    if (jsonLogs(argv)) createLog({ format: 'json' })(`bre-batch: ${text}`, { level: 'error', code: 'USAGE' });
    else
      process.stderr.write(`bre-batch: ${text}\nTry 'bre-batch ${chosen ? `${commandName(chosen)} ` : ''}--help'.\n`);
    process.exit(2);
  });
// Every command that writes a folder (run, merge, compare --out, report) creates it for its owner only:
// the mode is the process's umask, set before the command starts (src/output/modes.ts).
cli
  .option('output-mode', {
    type: 'string',
    global: true,
    describe:
      "mode of the folders and files written, in octal (files get it without x); default 0700: owner only, since they hold applicants' data",
  })
  .middleware((args) => applyOutputMode(parseOutputMode(args['output-mode'])), true);
// yargs formats the whole help of the command it is about to run, in case the handler shows it later
// (cacheHelpMessage): for `run`'s options that took longer than parsing them. No handler shows help, and
// usage errors go through .fail above with a message of their own, so nothing ever reads that copy; --help
// itself never reaches a handler and formats the help as it is printed.
(cli as unknown as YargsInternals).getInternalMethods().getUsageInstance().cacheHelpMessage = () => undefined;
for (const c of COMMANDS)
  cli.command(
    c === chosen
      ? (withoutOutputMode(chosenModule!) as never)
      : { command: c.command, describe: c.describe, handler: () => undefined },
  );

try {
  await cli.parseAsync();
} catch (thrown) {
  // A full disk met by any command (run names its output folder itself, src/app/execute-run.ts): DISK_FULL, exit 3.
  const path = (thrown as { path?: unknown } | null)?.path;
  // Anything else that is not a BreError is a bug: INTERNAL, asking for a report.
  const err = isBreError(thrown)
    ? thrown
    : diskFullCode(thrown)
      ? diskFullError(typeof path === 'string' ? dirname(path) : '.', thrown, 'the folder')
      : internalError(thrown);
  const json = jsonLogs(argv);
  createLog({ format: json ? 'json' : 'human' })(`bre-batch: ${err.message}`, { level: 'error', code: err.code });
  // A usage error says where the command's options are explained.
  if (!json && err.code === 'USAGE' && chosen) process.stderr.write(`Try 'bre-batch ${commandName(chosen)} --help'.\n`);
  if (err.code === 'INTERNAL' && process.env.BRE_DEBUG) process.stderr.write(`${err.stack}\n`);
  // Exit codes (CONTRACT): 0 all rows ok, 1 some rows in errors (set by the command), 2 or 3 by the error table.
  process.exitCode = exitCodeOf(err);
}
