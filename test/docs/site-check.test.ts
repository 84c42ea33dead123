/**
 * `npm run docs:build` refuses a dead link or a dead anchor (scripts/docs/check.ts): planted in the Markdown of a
 * copy of the site's pages, the build fails naming it before VitePress starts; planted in built HTML, the check
 * of the built site names it. The site itself builds clean in test/docs/site.test.ts.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { htmlProblems, markdownProblems } from '../../scripts/docs/check.js';
import { sitePages } from '../../scripts/docs/site.js';
import { tempDir } from '../helpers/temp.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** The site's pages and pictures copied into a fresh folder, as the repository holds them. */
function copyOfTheSite(): string {
  const dir = tempDir('bre-docs-site-');
  for (const page of sitePages(ROOT)) {
    mkdirSync(dirname(join(dir, page)), { recursive: true });
    copyFileSync(join(ROOT, page), join(dir, page));
    for (const m of readFileSync(join(ROOT, page), 'utf8').matchAll(/\]\(([^)#\s]+\.png)\)/g)) {
      const picture = join(dirname(page), m[1]);
      copyFileSync(join(ROOT, picture), join(dir, picture));
    }
  }
  return dir;
}

function plant(dir: string, page: string, line: string): void {
  writeFileSync(join(dir, page), `${readFileSync(join(dir, page), 'utf8')}\n${line}\n`);
}

/** `npm run docs:build` over another root (BRE_DOCS_ROOT): its exit code and stderr. */
async function docsBuild(root: string): Promise<{ code: number; stderr: string }> {
  try {
    await promisify(execFile)('npm', ['run', '-s', 'docs:build', '--', '--out', join(root, 'site')], {
      cwd: ROOT,
      env: { ...process.env, BRE_DOCS_ROOT: root },
    });
    return { code: 0, stderr: '' };
  } catch (err) {
    const e = err as { code?: number; stderr?: string };
    return { code: e.code ?? -1, stderr: e.stderr ?? '' };
  }
}

describe('the Markdown check of the site', () => {
  it('finds nothing in the repository as it is', () => {
    expect(markdownProblems(ROOT)).toEqual([]);
  });

  it('covers the README, the guide, ARCHITECTURE.md and the packages own pages, and nothing of the code or data', () => {
    const pages = sitePages(ROOT);
    for (const page of [
      'README.md',
      'ARCHITECTURE.md',
      'docs/index.md',
      'docs/operations/index.md',
      'packages/sandbox/README.md',
    ])
      expect(pages).toContain(page);
    expect(pages.filter((p) => /^(test|output|node_modules|samples|bench)\//.test(p))).toEqual([]);
  });

  it('names a dead anchor, a missing page, a link to a source file and one to a folder', () => {
    const dir = copyOfTheSite();
    plant(dir, 'docs/getting-started.md', '[a](troubleshooting.md#exit-code-42) [b](nowhere.md)');
    mkdirSync(join(dir, 'scripts'));
    writeFileSync(join(dir, 'scripts', 'tool.ts'), 'export {};\n');
    plant(dir, 'docs/input.md', '[c](../scripts/tool.ts) [d](operations/) [e](#no-such-heading)');
    expect(markdownProblems(dir).map((p) => p.replace(/: Expected.*$/, ''))).toEqual([
      expect.stringMatching(/^docs\/getting-started\.md:\d+: troubleshooting\.md#exit-code-42$/),
      expect.stringMatching(/^docs\/getting-started\.md:\d+: nowhere\.md$/),
      expect.stringMatching(/^docs\/input\.md:\d+: #no-such-heading$/),
      expect.stringMatching(/^docs\/input\.md:\d+: \.\.\/scripts\/tool\.ts$/),
      expect.stringMatching(/^docs\/input\.md:\d+: operations\/$/),
    ]);
  });

  it('`npm run docs:build` fails on a dead anchor, naming it, before the site is built', async () => {
    const dir = copyOfTheSite();
    plant(dir, 'docs/operations/cron.md', '[the exit codes](../troubleshooting.md#by-exit-codes)');
    const { code, stderr } = await docsBuild(dir);
    expect(code).toBe(1);
    expect(stderr).toContain('docs/operations/cron.md:');
    expect(stderr).toContain("Expected a heading whose anchor is 'by-exit-codes' in docs/troubleshooting.md");
  }, 120_000);
});

describe('the check of the built site', () => {
  it('names a link to a page not built and an anchor the page lacks; leaves alone what is fine', () => {
    const out = tempDir('bre-docs-html-');
    mkdirSync(join(out, 'docs'));
    writeFileSync(join(out, 'docs', 'b.html'), '<main><h2 id="here">Here</h2><a href="#here">self</a></main>');
    writeFileSync(
      join(out, 'index.html'),
      [
        '<a href="/docs/b.html#here">ok</a> <a href="./docs/b.html">ok</a> <a href="https://example.com/#x">ok</a>',
        '<a href="/docs/b.html#gone">bad anchor</a> <a href="/docs/c.html">bad page</a> <a href="#top">bad here</a>',
        '<a href="/assets/app.js">asset</a>',
      ].join('\n'),
    );
    expect(htmlProblems(out).map((p) => p.replace(/: Expected.*$/, ''))).toEqual([
      'index.html: /docs/b.html#gone',
      'index.html: /docs/c.html',
      'index.html: #top',
    ]);
  });
});
