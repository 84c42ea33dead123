/**
 * Usage errors name the real mistake, read as a person reads them (in-process: only the text matters; the exit
 * code and the "Try --help" line are test/cli/commands.test.ts's): an unknown command whatever options follow
 * it, an unknown option before a "missing required argument", and each command's help listing only its options.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yargs from 'yargs';
import { describe, expect, it } from 'vitest';
import { commandName, COMMANDS, loadAllCommands } from '../../src/cli/commands.js';
import { usageMessage, withoutOutputMode } from '../../src/cli/usage.js';

const modules = await loadAllCommands();
const entry = (name: string) => COMMANDS.find((c) => commandName(c) === name)!;
const moduleOf = (name: string) => modules.find((m) => commandName(m) === name)!;

/** What yargs says for `args`, as main.ts sets it up (strict, --output-mode global, the chosen command). */
async function said(args: string[]): Promise<{ failure?: string; help: string }> {
  const name = args.find((a) => !a.startsWith('-'));
  const chosen = COMMANDS.find((c) => commandName(c) === name);
  const module = chosen ? moduleOf(commandName(chosen)) : undefined;
  let failure: string | undefined;
  let help = '';
  const cli = yargs(args)
    .scriptName('bre-batch')
    .strict()
    .exitProcess(false)
    .demandCommand(1, 'Expected a command')
    .option('output-mode', { type: 'string', global: true, describe: 'mode' })
    .fail((msg, err) => {
      // The first failure is the one main.ts says (it exits there); stopping here keeps the handler from running.
      failure ??= err ? err.message : usageMessage(msg, args, chosen, module);
      throw new Error(failure);
    });
  for (const c of COMMANDS)
    cli.command(
      chosen === c
        ? (withoutOutputMode(module!) as never)
        : { command: c.command, describe: c.describe, handler: () => undefined },
    );
  // The handlers are not run: only the parse and the help matter here.
  try {
    await cli.parseAsync(args, {}, (_err, _argv, output) => {
      help = output;
    });
  } catch {
    // the failure, kept above
  }
  return { failure, help };
}

describe('usage errors name the real mistake', () => {
  it('an unknown command is named whatever options follow it, with the one meant', async () => {
    for (const [args, word, meant] of [
      [['rn', 'location', '--input', 'x.csv'], 'rn', 'run'],
      [['sandbx', '--port', '9'], 'sandbx', 'sandbox'],
      [['--output-mode', '0700', 'lod', 'out'], 'lod', 'load'],
    ] as const) {
      const { failure } = await said([...args]);
      expect(failure).toBe(
        `Unknown command '${word}' (did you mean '${meant}'?): Expected one of ${COMMANDS.map(commandName).join(', ')}`,
      );
    }
  });

  it('an unknown option is named, with the one meant, before a required one is said to be missing', async () => {
    const { failure } = await said(['run', 'location', '--inptu', 'x.csv']);
    expect(failure).toBe('Unknown argument: --inptu (did you mean --input?). Missing required argument: input');
  });

  it('several unknown options, --name=value and a stray word are all named', async () => {
    const { failure } = await said(['run', 'location', '--input', 'x.csv', '--limt=3', '--ratee', '5', 'extra']);
    expect(failure).toBe('Unknown arguments: --limt (did you mean --limit?), --ratee (did you mean --rate?), extra');
  });

  it('a missing positional says the command and what it lacks', async () => {
    const { failure } = await said(['run', '--input', 'x.csv']);
    expect(failure).toBe('Expected run <pipeline>, got no pipeline');
  });

  it('--output-mode with a command that writes no folder is refused, not ignored', async () => {
    const { failure } = await said(['sandbox', '--output-mode', '0700']);
    expect(failure).toBe(
      'Expected --output-mode only with a command that writes a folder (run, merge, compare, report), got it with sandbox',
    );
  });
});

describe("each command's help lists only the options it takes, the required ones marked", () => {
  it.each(['sandbox', 'job', 'load', 'pipelines', 'detect', 'rename-columns'])(
    '%s --help has no --output-mode',
    async (name) => {
      const args = name === 'job' ? ['job', 'status', 'x', '--help'] : [name, '--help'];
      const { help } = await said(args);
      expect(help).toContain(`bre-batch ${entry(name).command.split(' ')[0]}`);
      expect(help).not.toContain('--output-mode');
    },
  );

  it('detect --help says its exit codes, as the docs do', async () => {
    const { help } = await said(['detect', '--help']);
    expect(help.replace(/\s+/g, ' ')).toContain(
      "Exit codes: 0 every file's format was told; 1 some file's format is unknown (its line says why); 2 some file could not be read",
    );
    const docs = readFileSync(join(import.meta.dirname, '../../docs/reference/commands.md'), 'utf8').replace(
      /\s+/g,
      ' ',
    );
    expect(docs).toContain(
      "0 every file's format was told; 1 some file's format is unknown (its line says why); 2 some file could not be read",
    );
  });

  it.each(['run', 'merge', 'compare', 'report'])('%s --help lists --output-mode', async (name) => {
    expect((await said([name, '--help'])).help).toContain('--output-mode');
  });

  it.each(['load', 'job', 'rename-columns'])('%s: --sink is required and says what it is for', async (name) => {
    const { help } = await said(name === 'job' ? ['job', 'status', 'x', '--help'] : [name, '--help']);
    const sink = help.slice(help.indexOf('--sink '), help.indexOf('--sink-table'));
    expect(sink).toContain('[required]');
    expect(sink).not.toContain('also write');
  });
});
