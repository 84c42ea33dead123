/**
 * The back-testing page's figures are the ones the commands give: the commands `npm run docs:pictures` writes
 * them from (scripts/docs/figures.ts) run here through the built CLI, as a user types them in a folder holding
 * the shipped samples, and every figure block of docs/backtesting.md must be what they give today.
 */
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { blocksOf, type CompareJson, FIGURE_COMMANDS, figureBlocks, withBlocks } from '../../scripts/docs/figures.js';
import { ROOT, spawnCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const PAGE = join(ROOT, 'docs', 'backtesting.md');

describe('the back-testing figures of the guide', () => {
  it('are what the commands give', async () => {
    const work = tempDir('bre-docs-figures-');
    cpSync(join(ROOT, 'samples', 'champion_challenger.csv'), join(work, 'samples', 'champion_challenger.csv'));
    for (const args of [
      FIGURE_COMMANDS.full,
      FIGURE_COMMANDS.fullCompare,
      FIGURE_COMMANDS.sample,
      FIGURE_COMMANDS.sampleCompare,
    ]) {
      const r = await spawnCli(args, {}, { cwd: work });
      expect(r.code, `bre-batch ${args.join(' ')}\n${r.stderr}`).toBe(0);
    }
    const json = (dir: string) => JSON.parse(readFileSync(join(work, dir, 'compare.json'), 'utf8')) as CompareJson;
    const given = figureBlocks(json('output/bt-compare'), json('output/cc-20-compare'));
    const shown = blocksOf(readFileSync(PAGE, 'utf8'));
    expect(Object.keys(shown).sort()).toEqual(Object.keys(given).sort());
    for (const [name, text] of Object.entries(given)) expect(shown[name], `${name}: npm run docs:pictures`).toBe(text);
  }, 300_000);

  it('a block is replaced whole, and a page without the block is left as it is', () => {
    const page = 'before\n<!-- figures:a -->\nold\nlines\n<!-- /figures -->\nafter\n';
    expect(withBlocks(page, { a: 'new' })).toBe('before\n<!-- figures:a -->\nnew\n<!-- /figures -->\nafter\n');
    expect(blocksOf(withBlocks(page, { b: 'x' }))).toEqual({ a: 'old\nlines' });
  });
});
