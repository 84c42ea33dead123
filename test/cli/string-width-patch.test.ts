/**
 * patches/{yargs,cliui,wrap-ansi}++string-width+<version>.patch (applied by patch-package in `postinstall`): the
 * copies of string-width that yargs and its help's layout bring make their Intl.Segmenter and the RGI emoji
 * expression at their first call, not at import, which every command paid for at its start
 * (docs/performance.md, "Start-up"). These checks fail, naming the patch, if a copy makes them at import again
 * (another version installed, an install with --ignore-scripts), and hold the widths the help's layout relies on.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

const COPIES = ['yargs', 'cliui', 'wrap-ansi'].map((parent) => ({
  parent,
  index: join(ROOT, 'node_modules', parent, 'node_modules', 'string-width', 'index.js'),
}));

describe('the string-width patches', () => {
  it.each(COPIES)("$parent's copy makes nothing costly at import", ({ parent, index }) => {
    const text = readFileSync(index, 'utf8');
    const patch = `patches/${parent}++string-width+<version>.patch (run \`npx patch-package\`, or update the patch)`;
    expect(text, patch).not.toMatch(/^const segmenter = new Intl\.Segmenter/m);
    expect(text, patch).not.toMatch(/^const rgiEmojiRegex = /m);
    expect(text, patch).toMatch(/segmenter \?\?= new Intl\.Segmenter\(\)/);
  });

  it.each(COPIES)(
    "$parent's copy measures text as before: ASCII, wide, emoji, combining marks, colours",
    async ({ index }) => {
      const { default: width } = (await import(pathToFileURL(index).href)) as { default: (s: string) => number };
      expect(width('run <pipeline>')).toBe(14);
      expect(width('古い')).toBe(4);
      expect(width('👍')).toBe(2);
      expect(width('e\u0301')).toBe(1);
      expect(width('\u001b[31mred\u001b[39m')).toBe(3);
      expect(width('')).toBe(0);
    },
  );
});
