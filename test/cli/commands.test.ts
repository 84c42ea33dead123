/**
 * The command line as a whole (src/cli/main.ts, commands.ts, usage.ts), through the built CLI: the commands
 * --help lists are the modules' own, a slip is answered with what was meant, a usage error names the help
 * of the command it came from, and a run's input is checked before any sandbox starts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commandName, COMMANDS } from '../../src/cli/commands.js';
import { nearest } from '../../src/config/suggest.js';
import { ROOT, spawnCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

describe('the commands list', () => {
  it.each(COMMANDS.map((c) => [commandName(c), c]))(
    "`%s`: its line in --help is its module's",
    async (_name, entry) => {
      const module = await entry.load();
      expect({ command: module.command, describe: module.describe }).toEqual({
        command: entry.command,
        describe: entry.describe,
      });
    },
  );
});

describe('nearest', () => {
  it('finds a slip of a letter or two, and nothing for what is far or ambiguous', () => {
    expect(nearest('locaton', ['bank', 'location', 'repeat'])).toBe('location');
    expect(nearest('limt', ['limit', 'input', 'rate'])).toBe('limit');
    expect(nearest('lod', ['run', 'load', 'report'])).toBe('load');
    expect(nearest('nope', ['bank', 'location', 'repeat'])).toBeUndefined();
    expect(nearest('ab', ['ax', 'ay'])).toBeUndefined();
  });
});

describe('bre-batch', () => {
  it("--version prints the package's version", async () => {
    const r = await spawnCli(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(
      (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version,
    );
  });

  it('an unknown command names every command, and the one meant', async () => {
    const r = await spawnCli(['lod']);
    expect(r.code).toBe(2);
    for (const c of COMMANDS) expect(r.stderr).toContain(commandName(c));
    expect(r.stderr).toContain(
      `Unknown command 'lod' (did you mean 'load'?): Expected one of ${COMMANDS.map(commandName).join(', ')}`,
    );
    expect(r.stderr).toContain("Try 'bre-batch --help'.");
  });

  it('no command at all names every command', async () => {
    const r = await spawnCli([]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`Expected a command: ${COMMANDS.map(commandName).join(', ')}`);
  });

  it('an unknown option of run says the one meant and points at run --help', async () => {
    const r = await spawnCli(['run', 'location', '--input', 'samples/location.csv', '--limt', '3']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Unknown argument: --limt (did you mean --limit?)');
    expect(r.stderr).toContain("Try 'bre-batch run --help'.");
  });

  it('a number that is none is quoted as given, and the usage names run --help', async () => {
    const r = await spawnCli(['run', 'location', '--input', 'samples/location.csv', '--limit', 'abc']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("Expected --limit to be a whole number >= 0, got 'abc'");
    expect(r.stderr).toContain("Try 'bre-batch run --help'.");
  });

  it('a misspelt pipeline says the one meant', async () => {
    const r = await spawnCli(['run', 'locaton', '--input', 'samples/location.csv']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("no pipeline named 'locaton' (did you mean 'location'?)");
  });

  it('a missing input file is said before any sandbox starts, and nothing is written', async () => {
    const out = join(tempDir(), 'out');
    const r = await spawnCli([
      'run',
      'location',
      '--input',
      join(tempDir(), 'missing.csv'),
      '--out',
      out,
      '--no-progress',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('missing.csv');
    expect(r.stderr).not.toContain('sandbox');
  });

  it('run --help groups the options by task, with their defaults and values', async () => {
    const r = await spawnCli(['run', '--help']);
    expect(r.code).toBe(0);
    const titles = [...r.stdout.matchAll(/^([A-Z][a-z ]+):$/gm)].map((m) => m[1]);
    expect(titles).toEqual([
      'Positionals',
      'Input',
      'Output',
      'Limits and network',
      'Database',
      'Sampling',
      'Monitoring',
      'Run control',
      'Spend',
      'Options',
    ]);
    expect(r.stdout).toMatch(/--sample-allocation[\s\S]*proportional, equal[\s\S]*\[default: proportional\]/);
    expect(r.stdout).toMatch(/--max-attempts[\s\S]*\[default: 6\]/);
    expect(r.stdout).toMatch(
      /--out [\s\S]*\[default: output\/<pipeline>-<UTC timestamp>, or the unfinished one of\s+the same run\]/,
    );
  });
});
