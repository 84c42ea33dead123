/** The site's build is kept by its inputs (../helpers/site-build.ts): what changes the hash and what does not. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { siteInputsHash } from '../helpers/site-build.js';
import { tempDir } from '../helpers/temp.js';

function tree(): string {
  const root = tempDir('bre-site-inputs-');
  const files: Record<string, string> = {
    'README.md': '# bre-batch\n',
    'docs/guide.md': '# Guide\n',
    'docs/picture.png': 'png',
    '.vitepress/config.mts': 'export default {}\n',
    'scripts/docs/build.ts': '// build\n',
    'package-lock.json': '{}\n',
    'test/notes.md': '# not a page\n',
    'packages/sandbox/README.md': '# sandbox\n',
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('the kept documentation site', () => {
  it.each([
    ['a page of docs/', 'docs/guide.md'],
    ['the README (the home page)', 'README.md'],
    ["a package's README", 'packages/sandbox/README.md'],
    ['a picture', 'docs/picture.png'],
    ["VitePress's config", '.vitepress/config.mts'],
    ["the build's script", 'scripts/docs/build.ts'],
    ['the lockfile', 'package-lock.json'],
  ])('is built again when %s changes', (_what, path) => {
    const root = tree();
    const before = siteInputsHash(root);
    expect(siteInputsHash(root)).toBe(before);
    writeFileSync(join(root, path), 'changed\n');
    expect(siteInputsHash(root)).not.toBe(before);
  });

  it('is built again when a page is added, and kept when a file outside the site changes', () => {
    const root = tree();
    const before = siteInputsHash(root);
    writeFileSync(join(root, 'test', 'notes.md'), '# still not a page\n');
    expect(siteInputsHash(root)).toBe(before);
    writeFileSync(join(root, 'docs', 'new.md'), '# New\n');
    expect(siteInputsHash(root)).not.toBe(before);
  });
});
