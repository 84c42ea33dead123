/**
 * yargs' usage messages, said for a person: an unknown command is named (and the one meant, when it is a
 * slip) whatever options follow it; an unknown option is named with the one meant, before anything else yargs
 * has to say (a required option missing).
 */
import yargs, { type Argv, type CommandModule } from 'yargs';
import { BreError } from '@bre-batch/core/errors';
import { nearest } from '../config/suggest.js';
import { commandName, COMMANDS, type CommandEntry } from './commands.js';

/** Options every command takes (global), which may come before the command's name: those taking a value. */
const GLOBAL_WITH_VALUE = new Set(['--output-mode']);
/** The commands that write a folder, and so take --output-mode; the others' help does not list it. */
const WRITES_FOLDER = new Set(['run', 'merge', 'compare', 'report']);

/** Options yargs or main.ts adds to every command. */
const GLOBAL = ['help', 'version', 'output-mode'];

/** The command's name: the first word that is neither an option nor a global option's value. */
export function commandWord(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i += 1) {
    if (args[i] === '--') return undefined;
    if (GLOBAL_WITH_VALUE.has(args[i])) i += 1;
    else if (!args[i].startsWith('-')) return args[i];
  }
  return undefined;
}

/** The options a command declares, as yargs holds them (aliases and --help/--version included). */
function optionNames(module: CommandModule<object, never>): string[] {
  const y = yargs([]);
  if (typeof module.builder === 'function') (module.builder as (y: unknown) => unknown)(y);
  else if (module.builder) y.options(module.builder as never);
  const o = (
    y as unknown as { getOptions(): { key: Record<string, unknown>; alias: Record<string, string[]> } }
  ).getOptions();
  return [...Object.keys(o.key), ...Object.values(o.alias ?? {}).flat()];
}

/** `--name` and `-n` given on the command line (before a `--`), as names: `--input=x` is `input`. */
function givenOptions(args: readonly string[]): string[] {
  const out: string[] = [];
  for (const a of args) {
    if (a === '--') break;
    // A negative number is a value (`--rate -1`), not an option.
    if (!a.startsWith('-') || /^-\d/.test(a) || a === '-') continue;
    out.push(a.replace(/^--?/, '').replace(/=.*$/s, ''));
  }
  return out;
}

const camel = (s: string) => s.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** Options given that the command does not take, each with the one meant when it is a slip. */
function unknownOptions(args: readonly string[], module: CommandModule<object, never> | undefined): string[] {
  const names = module ? optionNames(module) : [];
  const known = new Set([...names, ...names.map(camel), ...GLOBAL]);
  return givenOptions(args)
    .filter((o) => !known.has(o) && !(o.startsWith('no-') && known.has(o.slice(3))))
    .map((o) => {
      const near = nearest(o, names);
      return near ? `--${o} (did you mean --${near}?)` : `--${o}`;
    });
}

const UNKNOWN = /^Unknown arguments?: (.+)$/;

export function usageMessage(
  msg: string,
  args: readonly string[],
  chosen: CommandEntry | undefined,
  module: CommandModule<object, never> | undefined,
): string {
  const names = COMMANDS.map(commandName);
  if (!chosen) {
    const word = commandWord(args);
    if (word === undefined) return msg;
    const near = nearest(word, names);
    return `Unknown command '${word}'${near ? ` (did you mean '${near}'?)` : ''}: Expected one of ${names.join(', ')}`;
  }
  const options = unknownOptions(args, module);
  // A positional missing: yargs says "Not enough non-option arguments" or "Missing required argument: NAME".
  const first = /<([^>.]+)/.exec(chosen.command)?.[1];
  const positional =
    /^Not enough non-option arguments/.test(msg) || msg === `Missing required argument: ${first}` ? first : undefined;
  if (positional) msg = `Expected ${chosen.command.replace(/\.\./g, '')}, got no ${positional}`;
  const unknown = UNKNOWN.exec(msg)?.[1].split(', ');
  // Words yargs did not take that are not options: stray positionals.
  const stray = (unknown ?? []).filter((u) => !givenOptions(args).includes(u));
  const all = [...options, ...stray];
  if (all.length === 0) return msg;
  const said = `${all.length === 1 ? 'Unknown argument' : 'Unknown arguments'}: ${all.join(', ')}`;
  // The slip first: a required option "missing" is often the one misspelt.
  return unknown ? said : `${said}. ${msg}`;
}

/**
 * A command that writes no folder does not take --output-mode (global, so that it may come before a command's
 * name): its help leaves it out, and given, it is a usage error rather than silently ignored.
 */
export function withoutOutputMode(m: CommandModule<object, never>): CommandModule<object, never> {
  if (WRITES_FOLDER.has(commandName(m))) return m;
  const builder = m.builder;
  return {
    ...m,
    builder: (y) => {
      const built = (typeof builder === 'function' ? builder(y) : builder ? y.options(builder) : y) as Argv;
      return built.hide('output-mode').check((args) => {
        if (args['output-mode'] !== undefined)
          throw new BreError(
            'USAGE',
            `Expected --output-mode only with a command that writes a folder (${[...WRITES_FOLDER].join(', ')}), got it with ${commandName(m)}`,
            { field: 'output-mode' },
          );
        return true;
      }) as never;
    },
  };
}
