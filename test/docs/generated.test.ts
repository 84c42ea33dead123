/**
 * The generated pages of the documentation (scripts/docs/pages.ts: the reference, the decision records' index)
 * are what the code and the repository give today: a page edited by hand, or code changed without
 * `npm run docs:generate`, fails here.
 */
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generatedPages, stalePages } from '../../scripts/docs/pages.js';
import { tempDir } from '../helpers/temp.js';

const ROOT = join(import.meta.dirname, '..', '..');

describe('the generated pages', () => {
  it('are up to date (else: npm run docs:generate)', async () => {
    expect((await stalePages(ROOT)).map((p) => p.path)).toEqual([]);
  });

  it('each says at its top that it is generated, and how to write it again', async () => {
    for (const page of await generatedPages(ROOT))
      expect(page.text.split('\n')[0], page.path).toContain('npm run docs:generate');
  });

  it('a page that no longer matches what it is generated from is found stale', async () => {
    const root = tempDir('bre-docs-gen-');
    mkdirSync(join(root, 'docs'), { recursive: true });
    cpSync(join(ROOT, 'docs', 'decisions'), join(root, 'docs', 'decisions'), { recursive: true });
    expect((await stalePages(root)).map((p) => p.path)).not.toContain('docs/decisions/index.md');
    writeFileSync(join(root, 'docs', 'decisions', 'zz-new.md'), '# A decision taken since (2026-11-29)\n');
    expect((await stalePages(root)).map((p) => p.path)).toContain('docs/decisions/index.md');
  });
});
