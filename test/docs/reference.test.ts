/**
 * The guide cannot fall behind the code: every error code of ERROR_TABLE has a row in the troubleshooting
 * page's table (docs/troubleshooting.md) and a section in the error codes reference; every command and every
 * option yargs knows is in the commands reference (docs/reference/commands.md), read here from yargs itself
 * (not from the generator's own reading of the builders); every metric a run exposes is in the metrics
 * reference; every shipped pipeline in the pipelines reference. And no page but the reference states an option's
 * default, so that there is one wording of it, the code's.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yargs from 'yargs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '@bre-batch/core/errors';
import { loadAllCommands } from '../../src/cli/commands.js';
import { readMarkdown, type MdFile, type MdHeading } from '../../scripts/docs/markdown.js';
import { commandDocs } from '../../scripts/docs/reference/commands.js';
import { sitePages } from '../../scripts/docs/site.js';
import { listPipelineNames } from '../../src/config/pipeline.js';
import { RunMetrics } from '../../src/metrics/prometheus.js';

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
    .map((c) => /^\s*\[?`([A-Z_]+)`(?:\]\([^)]*\))?\s*$/.exec(c)?.[1])
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
    const listed = firstCells(reference.body).map((c) => /^\s*\[?`([a-z-]+)/.exec(c)?.[1]);
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
      // The command's own section: the heading that is its name, with its groups' sections under it.
      const own = REFERENCE.headings.filter((h) => reference.body.includes(h.body) && h.depth === 2 && h.text === name);
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

describe('docs/reference/errors.md', () => {
  const page = readMarkdown(join(DOCS, 'reference', 'errors.md'));
  it('has a section for every code of ERROR_TABLE, saying where it lands', () => {
    for (const code of ERROR_CODES) {
      const h = page.headings.find((x) => x.text === code);
      expect(h, code).toBeDefined();
      expect(h!.body, code).toMatch(/Costs a row|Stops the command|Costs nothing but time/);
    }
  });
});

describe('docs/reference/metrics.md', () => {
  it('has every metric a run exposes, and says what each label holds', async () => {
    const text = await (await RunMetrics.start({ pipeline: 'p', shard: '' })).text();
    const exposed = [...text.matchAll(/^# HELP (\S+)/gm)].map((m) => m[1]);
    expect(exposed.length).toBeGreaterThan(10);
    const page = readFileSync(join(DOCS, 'reference', 'metrics.md'), 'utf8');
    expect(exposed.filter((name) => !page.includes(`\`${name}\``))).toEqual([]);
    const labels = section(readMarkdown(join(DOCS, 'reference', 'metrics.md')), 'Labels').body;
    expect(labels.split('\n').filter((l) => /^\| `[a-z]+` \|\s*\|$/.test(l))).toEqual([]);
  });
});

describe('docs/reference/pipelines.md', () => {
  it('has a section for every shipped pipeline', () => {
    const page = readMarkdown(join(DOCS, 'reference', 'pipelines.md'));
    expect(listPipelineNames().filter((n) => !page.headings.some((h) => h.depth === 2 && h.text === n))).toEqual([]);
  });
});

/** An option that has a default: its spelling, and its default when it is a value rather than words. */
interface Defaulted {
  readonly flag: string;
  readonly value?: string;
}

/** The units of prose a page states things in: table rows, and the sentences of its paragraphs, code left out. */
function statements(markdown: string): string[] {
  const out: string[] = [];
  let fence = false;
  let paragraph: string[] = [];
  const flush = () => {
    out.push(...paragraph.join(' ').split(/(?<=[.;])\s+/));
    paragraph = [];
  };
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    if (fence || /^ {4}/.test(line) || line.trim() === '' || /^\s*(```|~~~)/.test(line)) {
      flush();
      continue;
    }
    if (line.startsWith('|')) {
      flush();
      out.push(line);
    } else paragraph.push(line.trim());
  }
  flush();
  return out.filter((s) => s !== '');
}

/** The statements of a page that state an option's default: a table with a default column, or a sentence naming an option with "default" or with its default value. */
function statedDefaults(markdown: string, options: readonly Defaulted[]): string[] {
  const found: string[] = [];
  let header: string | undefined;
  for (const s of statements(markdown)) {
    const text = s.replace(/\]\([^)]*\)/g, ']');
    if (/^\|(?:[^|]*\|)*\s*default\b[^|]*\|/i.test(text)) header = text;
    else if (!text.startsWith('|')) header = undefined;
    // A table with a default column whose rows are options of the command line (an API's table is not).
    if (header && (/^\|\s*`--[a-z]/.test(text) || /default[^|]*`--[a-z]/i.test(header)) && !/^\|[\s|:-]+$/.test(text)) {
      found.push(`a table with a default column: ${header.slice(0, 120)}`);
      header = undefined;
      continue;
    }
    for (const o of options) {
      if (!new RegExp(`${o.flag}(?![a-z0-9-])`).test(text)) continue;
      const value = o.value
        ? new RegExp(
            `(?<![\\w.])${o.value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/(\d)([a-z])/i, '$1\\s?$2')}(?![\\w.%])`,
            'i',
          )
        : undefined;
      // "default" soon after the option, or its default value beside it (its own examples, `--flag VALUE`, aside).
      const near = new RegExp(`${o.flag}(?![a-z0-9-])[^.;|]{0,40}?\\bdefaults?\\b`, 'i');
      if (near.test(text) || value?.test(text.replace(new RegExp(`${o.flag}[=\\s]\\S+`, 'g'), ''))) {
        found.push(`${o.flag}: ${s.slice(0, 160)}`);
      }
    }
  }
  return found;
}

describe('no page but the reference states an option default', async () => {
  const ROOT_DIR = join(DOCS, '..');
  const docs = await commandDocs();
  const options: Defaulted[] = docs.flatMap((c) =>
    c.options
      .filter((o) => !o.positional && (o.opts.default !== undefined || o.opts.defaultDescription !== undefined))
      .map((o) => {
        const d = o.opts.default;
        const literal = o.opts.defaultDescription === undefined && (typeof d === 'string' || typeof d === 'number');
        return { flag: `--${o.name}`, ...(literal && String(d).length > 0 ? { value: String(d) } : {}) };
      }),
  );
  // The reference states them; the history and the decision records are records, kept as they were written.
  const pages = sitePages(ROOT_DIR).filter((p) => !/^docs\/(reference\/|decisions\/|history\.md$)/.test(p));

  it('finds the defaults a page would state, and leaves alone what is not one', () => {
    const planted = [
      '| option | default | meaning |',
      '|---|---|---|',
      '| `--stop-grace` | 10s | how long |',
      '',
      '| API option | default |',
      '|---|---|',
      '| `slowMs` | 60 000 |',
      '',
      'A run without `--out` takes up its unfinished folder again ([The default folder](output.md)).',
      '',
      '| service | default `--rate` |',
      '|---|---|',
      '| workflow | 500/min |',
      'Calls in flight finish within `--stop-grace` (10 s by default).',
      'Each attempt waits, up to `--max-attempts`, 6 of them.',
      'Give `--stop-grace 30s` to wait longer; `--rate` takes `N/min`.',
      '',
      '    bre-batch run x --stop-grace 10s   # an example, not a statement',
    ].join('\n');
    expect(statedDefaults(planted, options).map((s) => s.split(':')[0])).toEqual([
      'a table with a default column',
      'a table with a default column',
      '--stop-grace',
      '--max-attempts',
    ]);
  });

  it.each(pages)('%s', (page) => {
    expect(statedDefaults(readFileSync(join(ROOT_DIR, page), 'utf8'), options)).toEqual([]);
  });
});
