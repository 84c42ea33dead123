/**
 * Every command of `bre-batch`, in the order `--help` lists them: its name and one line, and how to load the
 * rest. main.ts loads only the module of the command given (`bre-batch --help` and a typo load none), so no
 * command pays for another's modules at start-up. test/cli/commands.test.ts holds each line to its module's.
 */
import type { CommandModule } from 'yargs';

export interface CommandEntry {
  /** As yargs takes it: the name and the positionals. */
  readonly command: string;
  readonly describe: string;
  readonly load: () => Promise<CommandModule<object, never>>;
}

const entry = (command: string, describe: string, load: () => Promise<unknown>): CommandEntry => ({
  command,
  describe,
  load: load as CommandEntry['load'],
});

export const COMMANDS: readonly CommandEntry[] = [
  entry(
    'run <pipeline>',
    'stream rows through a pipeline and write the output folder',
    async () => (await import('./run.js')).runCommand,
  ),
  entry(
    'sandbox',
    'start the built-in emulator of all three services on loopback and print its base URL and credentials',
    async () => (await import('@bre-batch/sandbox/command')).sandboxCommand,
  ),
  entry(
    'pipelines',
    'list the shipped pipelines with the input columns each needs',
    async () => (await import('./pipelines.js')).pipelinesCommand,
  ),
  entry(
    'detect <file...>',
    'print the bureau report format of each file (bureau_a_json, ...) or why it cannot be told',
    async () => (await import('./detect.js')).detectCommand,
  ),
  entry(
    'compare <outA> <outB>',
    'back-test two runs over the same rows: compare.csv, compare.json and report.html',
    async () => (await import('./compare.js')).compareCommand,
  ),
  entry(
    'merge <dirs..>',
    'combine the output folders of `run --shard K/N` workers into one, checking every row is there once',
    async () => (await import('./merge.js')).mergeCommand,
  ),
  entry(
    'load <out>',
    "write an output folder (a run's or a merged one) into database tables, with the same upserts as run --sink; no API call",
    async () => (await import('./load.js')).loadCommand,
  ),
  entry(
    'rename-columns',
    'rename the result columns of a sink table an earlier bre-batch made (hashed names) to plain ones, in place, each commented with its field',
    async () => (await import('./rename-columns.js')).renameColumnsCommand,
  ),
  entry(
    'job <action> <name>',
    "a job shared by several hosts (run --job): its status (chunks, rows, workers and their rates, ETA), its report, or a check of it (verify), from the sink's database",
    async () => (await import('./job.js')).jobCommand,
  ),
  entry(
    'verify <dir>',
    'check an output folder against its record (manifest.json: every output file and the input by sha256, or a database input read again) and that every input row is once in results or errors, stamped with its run',
    async () => (await import('./verify.js')).verifyCommand,
  ),
  entry(
    'report <dir>',
    "rebuild report.html of an output folder (a run's or a merged one) from the folder alone",
    async () => (await import('./report.js')).reportCommand,
  ),
];

export const commandName = (c: { readonly command?: unknown }): string => String(c.command).split(' ')[0];

/** Every command's module, loaded (for the tests that read their options: test/docs/reference.test.ts, and the generated reference, scripts/docs/). */
export async function loadAllCommands(): Promise<CommandModule<object, never>[]> {
  return Promise.all(COMMANDS.map((c) => c.load()));
}
