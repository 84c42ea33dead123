/**
 * yargs' usage messages, said for a person: an unknown command names every command (and the one meant, when
 * it is a slip), an unknown option the option meant.
 */
import yargs, { type CommandModule } from 'yargs';
import { nearest } from '../config/suggest.js';
import { commandName, COMMANDS, type CommandEntry } from './commands.js';

/** The options a command declares, as yargs holds them (aliases and --help/--version included). */
function optionNames(module: CommandModule<object, never>): string[] {
  const y = yargs([]);
  if (typeof module.builder === 'function') (module.builder as (y: unknown) => unknown)(y);
  else if (module.builder) y.options(module.builder as never);
  const o = (y as unknown as { getOptions(): { key: Record<string, unknown> } }).getOptions();
  return Object.keys(o.key);
}

const UNKNOWN = /^Unknown arguments?: (.+)$/;

export function usageMessage(
  msg: string,
  chosen: CommandEntry | undefined,
  module: CommandModule<object, never> | undefined,
): string {
  const unknown = UNKNOWN.exec(msg)?.[1].split(', ');
  if (!unknown) return msg;
  const names = COMMANDS.map(commandName);
  if (!chosen) {
    const word = unknown[0];
    const near = nearest(word, names);
    return `Unknown command '${word}'${near ? ` (did you mean '${near}'?)` : ''}: Expected one of ${names.join(', ')}`;
  }
  const options = module ? optionNames(module) : [];
  const hints = unknown.map((u) => {
    const near = nearest(u, options);
    return near ? `--${u} (did you mean --${near}?)` : u;
  });
  return `${unknown.length === 1 ? 'Unknown argument' : 'Unknown arguments'}: ${hints.join(', ')}`;
}
