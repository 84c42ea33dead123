/**
 * docs/reference/commands.md: every command and every option, read from the yargs definitions the CLI itself
 * uses (src/cli/commands.ts, each command's builder; run's families in src/cli/run-options/), so that the
 * reference and `--help` have one wording. The builder runs on a fresh yargs instance whose `option`,
 * `options`, `positional` and `group` are watched as they are called.
 */
import yargs, { type Argv, type Options, type PositionalOptions } from 'yargs';
import { COMMANDS, commandName } from '../../../src/cli/commands.js';
import { cell, code, table } from './markdown.js';

interface Declared {
  readonly name: string;
  readonly positional: boolean;
  readonly opts: Options & PositionalOptions;
}

/** One option (or positional argument) of a command, as its builder declares it. */
interface OptionDoc extends Declared {
  /** The group `--help` shows it in (`Input`, `Limits and network`...); `Options` when the command has none. */
  readonly group: string;
}

export interface CommandDoc {
  readonly name: string;
  /** As yargs takes it: the name and the positionals (`run <pipeline>`). */
  readonly usage: string;
  readonly describe: string;
  readonly options: readonly OptionDoc[];
  /** What `--help` prints after the options (`detect`'s exit codes), when the builder says anything there. */
  readonly epilogue?: string;
}

type Method = 'option' | 'options' | 'positional' | 'group' | 'epilogue' | 'epilog';

/** Runs a command's builder on a yargs instance that records what it declares. */
function declared(builder: unknown): {
  found: Map<string, Declared>;
  groups: Map<string, string>;
  epilogue?: string;
} {
  const y = yargs([]) as unknown as Argv & Record<Method, (...args: unknown[]) => unknown>;
  const found = new Map<string, Declared>();
  const groups = new Map<string, string>();
  let epilogue: string | undefined;
  const watch = (method: Method, record: (args: unknown[]) => void): void => {
    const original = (y[method] as (...args: unknown[]) => unknown).bind(y);
    y[method] = (...args: unknown[]) => {
      record(args);
      original(...args);
      return y;
    };
  };
  const option = (positional: boolean) => (args: unknown[]) => {
    if (typeof args[0] === 'string') {
      const opts = (args[1] ?? {}) as Declared['opts'];
      // yargs calls option() itself for a positional: the builder's own declaration stands.
      const before = found.get(args[0]);
      if (!before || (!before.positional && Object.keys(opts).length > 0))
        found.set(args[0], { name: args[0], positional, opts });
    } else if (args[0] && typeof args[0] === 'object') {
      for (const [name, opts] of Object.entries(args[0] as Record<string, Declared['opts']>))
        found.set(name, { name, positional, opts });
    }
  };
  watch('option', option(false));
  watch('options', option(false));
  watch('positional', option(true));
  watch('group', (args) => {
    const keys = (Array.isArray(args[0]) ? args[0] : [args[0]]) as string[];
    const title = String(args[1]).replace(/:$/, '');
    // yargs groups positionals itself; they are listed as the command's arguments.
    if (title !== 'Positionals') for (const k of keys) groups.set(k, title);
  });
  for (const m of ['epilogue', 'epilog'] as const) watch(m, (args) => (epilogue = String(args[0])));
  if (typeof builder === 'function') (builder as (y: Argv) => unknown)(y);
  else if (builder) y.options(builder as Record<string, Options>);
  return { found, groups, ...(epilogue === undefined ? {} : { epilogue }) };
}

export async function commandDocs(): Promise<CommandDoc[]> {
  const out: CommandDoc[] = [];
  for (const entry of COMMANDS) {
    const mod = await entry.load();
    const { found, groups, epilogue } = declared(mod.builder);
    const options = [...found.values()]
      .filter((d) => d.name !== 'help' && d.name !== 'version')
      .map((d) => ({ ...d, group: d.positional ? 'Arguments' : (groups.get(d.name) ?? 'Options') }));
    out.push({
      name: commandName(entry),
      usage: entry.command,
      describe: entry.describe,
      options,
      ...(epilogue === undefined ? {} : { epilogue }),
    });
  }
  return out;
}

/** A boolean that is on by default is given as its negation (`--no-progress`). */
function spelled(o: OptionDoc): string {
  if (o.positional) return `<${o.name}>`;
  const negated = o.opts.type === 'boolean' && o.opts.default === true;
  return negated ? `--no-${o.name}` : `--${o.name}`;
}

function typeOf(o: OptionDoc): string {
  const parts: string[] = [];
  if (o.opts.choices)
    parts.push(`one of ${(o.opts.choices as readonly unknown[]).map((c) => code(String(c))).join(', ')}`);
  else if (o.opts.type === 'boolean') parts.push('flag');
  else if (o.opts.type === 'number') parts.push('number');
  else parts.push('text');
  if (o.opts.array) parts.push(o.positional ? 'one or more' : 'repeatable');
  if (o.opts.demandOption) parts.push('**required**');
  return parts.join(', ');
}

function defaultOf(o: OptionDoc): string {
  if (o.opts.defaultDescription !== undefined) return String(o.opts.defaultDescription);
  const d = o.opts.default;
  if (d === undefined) return '';
  if (o.opts.type === 'boolean') return d === true ? 'on' : 'off';
  if (Array.isArray(d)) return d.length === 0 ? '' : code(d.join(','));
  return code(String(d));
}

const groupHeading = (command: string, group: string): string => `\`${command}\`: ${group.toLowerCase()}`;

export function commandsPage(docs: readonly CommandDoc[]): string[] {
  const lines: string[] = [
    '# Commands and options',
    '',
    'Every command of `bre-batch` and every option it takes, with its type, its default and its help, as the code',
    'declares them: `bre-batch <command> --help` prints the same words. When and why to use each: the task pages',
    "of the [guide](../index.md). A wrong option is exit 2 with `Expected X, got Y` and the command's help to read;",
    'a misspelt command, option or pipeline name is answered with the one meant.',
    '',
    ...table(
      ['command', 'what it does'],
      docs.map((c) => [`[${code(c.usage)}](#${c.name})`, cell(c.describe)]),
    ),
  ];
  for (const c of docs) {
    lines.push(
      '',
      `## \`${c.name}\``,
      '',
      `    bre-batch ${c.usage}${c.options.some((o) => !o.positional) ? ' [options]' : ''}`,
      '',
      `${cell(c.describe[0].toUpperCase() + c.describe.slice(1))}.`,
    );
    const groups = [...new Set(c.options.map((o) => o.group))];
    for (const g of groups) {
      const rows = c.options.filter((o) => o.group === g);
      const many = groups.filter((x) => x !== 'Arguments').length > 1;
      if (g === 'Arguments') lines.push('', '| argument | type | meaning |', '|---|---|---|');
      else {
        if (many) lines.push('', `### ${groupHeading(c.name, g)}`);
        lines.push('', '| option | type | default | meaning |', '|---|---|---|---|');
      }
      for (const o of rows) {
        const meaning = cell(String(o.opts.describe ?? o.opts.description ?? o.opts.desc ?? ''));
        const alias = o.opts.alias
          ? ` (${[o.opts.alias]
              .flat()
              .map((a) => code(`-${String(a).length > 1 ? '-' : ''}${a}`))
              .join(', ')})`
          : '';
        if (g === 'Arguments') lines.push(`| ${code(spelled(o))} | ${typeOf(o)} | ${meaning} |`);
        else lines.push(`| ${code(spelled(o))}${alias} | ${typeOf(o)} | ${cell(defaultOf(o))} | ${meaning} |`);
      }
    }
    if (c.epilogue) lines.push('', cell(c.epilogue));
  }
  return lines;
}
