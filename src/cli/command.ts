/**
 * What the commands that end with an exit code share: the command module around their work, the output folder
 * they are given, `--json`.
 */
import { existsSync, statSync } from 'node:fs';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { BreError } from '@bre-batch/core/errors';

/** A command whose work returns its exit code; `builder` declares the options that make `A`. */
export function exitCodeCommand<A>(c: {
  readonly command: string;
  readonly describe: string;
  readonly builder: (y: Argv) => Argv<unknown>;
  readonly run: (a: ArgumentsCamelCase<A>) => Promise<number>;
}): CommandModule<object, A> {
  return {
    command: c.command,
    describe: c.describe,
    builder: (y: Argv) => c.builder(y) as unknown as Argv<A>,
    handler: async (a: ArgumentsCamelCase<A>) => {
      process.exitCode = await c.run(a);
    },
  };
}

/** The output folder of a run or a merge, as a positional argument. */
export const OUTPUT_FOLDER = {
  type: 'string',
  demandOption: true,
  describe: 'the output folder (run --out, or merge --out)',
} as const;

/** `--json`: what the command prints, as JSON. */
export const jsonOption = (describe: string) => ({ type: 'boolean', default: false, describe }) as const;

/** USAGE unless `dir` is a folder (`field`: the argument named in the error). */
export function requireFolder(dir: string, field?: string): void {
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new BreError(
      'USAGE',
      `Expected an output folder of bre-batch run or merge, got ${dir}, which is not a folder`,
      field ? { field } : {},
    );
}
