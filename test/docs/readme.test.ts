/**
 * The guide cannot fall behind the code (issue 24): every error code of ERROR_TABLE has a row in the
 * troubleshooting page's table (docs/troubleshooting.md), and every command and every option yargs knows is in
 * the commands reference (docs/reference/commands.md), read from the commands' own definitions
 * (src/cli/commands.ts), not from --help's wrapped text.
 */
import { join } from 'node:path';
import yargs from 'yargs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/errors.js';
import { loadAllCommands } from '../../src/cli/commands.js';
import { readMarkdown, type MdFile, type MdHeading } from '../../scripts/docs/markdown.js';

const commands = await loadAllCommands();
const DOCS = join(import.meta.dirname, '..', '..', 'docs');
const TROUBLESHOOTING = readMarkdown(join(DOCS, 'troubleshooting.md'));
const REFERENCE = readMarkdown(join(DOCS, 'reference', 'commands.md'));

function section(page: MdFile, text: string): MdHeading {
  const found = page.headings.filter((h) => h.text === text);
  expect(found, `a heading '${text}'`).toHaveLength(1);
  return found[0];
}

/** The first cell of every table row of a section (header and separator rows included: harmless). */
function firstCells(body: string): string[] {
  return body
    .split('\n')
    .filter((l) => l.startsWith('|'))
    .map((l) => l.split(/(?<!\\)\|/)[1] ?? '');
}

/** `--name` spellings in the first cells of a section's tables. */
function documentedOptions(body: string): Set<string> {
  return new Set(firstCells(body).flatMap((c) => [...c.matchAll(/--([a-z0-9][a-z0-9-]*)/g)].map((m) => m[1])));
}

/** What the tests need of a command module, whatever its arguments' type. */
interface Command {
  readonly command?: string | readonly string[];
  readonly builder?: unknown;
}

interface YargsOption {
  readonly name: string;
  readonly negatable: boolean;
}

/** The options a command's builder declares (positionals and --help left out), as yargs holds them. */
function optionsOf(cmd: Command): YargsOption[] {
  const y = yargs([]);
  if (typeof cmd.builder === 'function') (cmd.builder as (y: unknown) => unknown)(y);
  else if (cmd.builder) y.options(cmd.builder as never);
  const o = (
    y as unknown as {
      getOptions(): { key: Record<string, unknown>; boolean: string[]; default: Record<string, unknown> };
    }
  ).getOptions();
  const positionals = new Set([...String(cmd.command).matchAll(/[<[]([^>\].]+)/g)].map((m) => m[1]));
  return Object.keys(o.key)
    .filter((k) => k !== 'help' && k !== 'version' && !positionals.has(k))
    .map((name) => ({ name, negatable: o.boolean.includes(name) && o.default[name] === true }));
}

/** What is missing from, and what is stale in, a section's option tables. */
function optionGaps(
  options: readonly YargsOption[],
  documented: ReadonlySet<string>,
): { missing: string[]; unknown: string[] } {
  // A boolean that is on by default is written as its negation (--no-progress).
  const spelled = new Map(options.map((o) => [o.negatable ? `no-${o.name}` : o.name, o]));
  const missing = [...spelled.keys()]
    .filter((s) => !documented.has(s) && !documented.has(spelled.get(s)!.name))
    .map((s) => `--${s}`);
  const known = new Set([...spelled.keys(), ...options.map((o) => o.name)]);
  const unknown = [...documented].filter((d) => !known.has(d)).map((d) => `--${d}`);
  return { missing, unknown };
}

const nameOf = (cmd: Command): string => String(cmd.command).split(' ')[0];

describe('docs/troubleshooting.md: by error code', () => {
  const codes = firstCells(section(TROUBLESHOOTING, 'By error code').body)
    .map((c) => /^\s*`([A-Z_]+)`\s*$/.exec(c)?.[1])
    .filter((c) => c !== undefined);

  it('has a row for every code of ERROR_TABLE', () => {
    expect(ERROR_CODES.filter((c) => !codes.includes(c))).toEqual([]);
  });

  it('has no row for a code that does not exist, and none twice', () => {
    expect(codes.filter((c) => !(ERROR_CODES as readonly string[]).includes(c))).toEqual([]);
    expect(codes.length).toBe(new Set(codes).size);
  });
});

describe('docs/reference/commands.md: commands and options', () => {
  const reference = section(REFERENCE, 'Commands and options');

  it('lists every command in the commands table', () => {
    const listed = firstCells(reference.body).map((c) => /^\s*`([a-z-]+)/.exec(c)?.[1]);
    expect(commands.map(nameOf).filter((n) => !listed.includes(n))).toEqual([]);
  });

  it('reads the options as yargs holds them', () => {
    const run = optionsOf(commands.find((c) => nameOf(c) === 'run')!);
    expect(run.map((o) => o.name)).toEqual(
      expect.arrayContaining(['input', 'out', 'rate', 'window-hours', 'progress']),
    );
    expect(run.map((o) => o.name)).not.toContain('pipeline');
    expect(run.find((o) => o.name === 'progress')?.negatable).toBe(true);
    expect(run.find((o) => o.name === 'dry-run')?.negatable).toBe(false);
  });

  it('finds an option left out and an option that no longer exists', () => {
    const opts = [
      { name: 'input', negatable: false },
      { name: 'progress', negatable: true },
      { name: 'limit', negatable: false },
    ];
    expect(
      optionGaps(opts, documentedOptions('| `--input FILE` | x |\n| `--no-progress` | y |\n| `--old-flag N` | z |')),
    ).toEqual({ missing: ['--limit'], unknown: ['--old-flag'] });
  });

  it.each(commands.map((c) => [nameOf(c), c]))(
    "`%s`: every option is in its section's table, and no other",
    (name, cmd) => {
      // The command's own section under "Commands and options": a heading naming it in code (`run`, `pipelines` and `detect`).
      const own = REFERENCE.headings.filter(
        (h) => reference.body.includes(h.body) && h !== reference && h.text.split(/[^a-z-]+/).includes(name as string),
      );
      expect(
        own.map((h) => h.text),
        `a section for \`${name}\` under "Commands and options"`,
      ).toHaveLength(1);
      expect(optionGaps(optionsOf(cmd as Command), documentedOptions(own[0].body))).toEqual({
        missing: [],
        unknown: [],
      });
    },
  );
});
