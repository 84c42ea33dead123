/**
 * Every relative link of the user's guide and the developer pages resolves: the file exists, and an anchor
 * names a heading of the target, slugged as GitHub does (issue 24).
 */
import { mkdtempSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { brokenLinks } from '../../scripts/docs/links.js';

const ROOT = join(import.meta.dirname, '..', '..');

function markdownUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.md'))
    .map((e) => join(e.parentPath, e.name));
}

/**
 * docs/pending/ holds drafts written to be folded into the README (their links are the README's, written from
 * its folder); once folded they are removed, and the README's links are checked here.
 */
const PENDING = join(ROOT, 'docs', 'pending');

const DOCS = [
  join(ROOT, 'README.md'),
  join(ROOT, 'ARCHITECTURE.md'),
  ...markdownUnder(join(ROOT, 'docs')).filter((f) => !f.startsWith(PENDING + sep)),
  ...markdownUnder(join(ROOT, 'src')),
  // The packages' READMEs and pages (their build output and installed dependencies aside).
  ...markdownUnder(join(ROOT, 'packages')).filter((f) => !/[\\/](node_modules|dist)[\\/]/.test(f)),
];

describe('links in the documentation', () => {
  it("covers the README, every page under docs/ and the packages' READMEs", () => {
    expect(DOCS).toContain(join(ROOT, 'README.md'));
    for (const name of ['sandbox', 'backtest']) expect(DOCS).toContain(join(ROOT, 'packages', name, 'README.md'));
    for (const page of ['limiter.md', 'performance.md', 'development.md'])
      expect(DOCS).toContain(join(ROOT, 'docs', page));
  });

  it.each(DOCS.map((f) => [f.slice(ROOT.length + 1), f]))('%s: every relative link resolves', (_name, file) => {
    expect(brokenLinks(file, ROOT)).toEqual([]);
  });
});

describe('the link check itself', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bre-links-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('finds missing files and anchors, and leaves alone what is fine', () => {
    mkdirSync(join(dir, 'docs'));
    writeFileSync(
      join(dir, 'docs', 'other.md'),
      '# Other page\n\n## Several IPs: `--shard K/N` and `merge`\n\n## Repeat\n\n## Repeat\n',
    );
    writeFileSync(
      join(dir, 'guide.md'),
      [
        '# Guide',
        '',
        '## What is left at 5,000/s',
        '',
        '[ok: same page](#what-is-left-at-5000s) [ok: other page](docs/other.md#several-ips---shard-kn-and-merge)',
        '[ok: second of two](docs/other.md#repeat-1) [ok: a folder](docs) [ok: outside](https://example.com/x#y)',
        '[bad: no file](docs/nothing.md) [bad: no heading](docs/other.md#several-ips) [bad: no heading here](#nowhere)',
        '[bad: third of two](docs/other.md#repeat-2) [bad: site root](/docs/other.md)',
        '![bad: picture](docs/missing.png)',
        '',
        '`[not a link](nowhere.md)`',
        '',
        '    [not a link either](nowhere.md)',
        '',
        '[ref]: docs/gone.md',
        '',
      ].join('\n'),
    );
    const broken = brokenLinks(join(dir, 'guide.md'), dir);
    expect(broken.map((b) => b.replace(/: Expected.*$/, ''))).toEqual([
      'guide.md:7: docs/nothing.md',
      'guide.md:7: docs/other.md#several-ips',
      'guide.md:7: #nowhere',
      'guide.md:8: docs/other.md#repeat-2',
      'guide.md:8: /docs/other.md',
      'guide.md:9: docs/missing.png',
      'guide.md:15: docs/gone.md',
    ]);
  });
});
