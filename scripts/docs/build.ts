/**
 * `npm run docs:build [-- --out DIR]`: the documentation site, built from the repository's Markdown by VitePress
 * (.vitepress/config.mts), and refused when a link or an anchor is dead: the Markdown is checked first (as a
 * code host reads it), then the built HTML (what VitePress made of it). Exit 0 built, 1 a dead link or anchor
 * (each listed), 2 the build itself failed. The site goes to .vitepress/dist unless --out names a folder.
 */
import { resolve } from 'node:path';
import { build } from 'vitepress';
import { htmlProblems, markdownProblems } from './check.js';

const ROOT = resolve(import.meta.dirname, '..', '..');

function outDir(argv: readonly string[]): string {
  const i = argv.indexOf('--out');
  return resolve(i === -1 ? resolve(ROOT, '.vitepress', 'dist') : argv[i + 1]);
}

function fail(what: string, problems: readonly string[]): never {
  console.error(`docs: ${problems.length} dead link(s) or anchor(s) ${what}:`);
  for (const p of problems) console.error(`  ${p}`);
  process.exit(1);
}

const root = process.env.BRE_DOCS_ROOT ? resolve(process.env.BRE_DOCS_ROOT) : ROOT;
const out = outDir(process.argv.slice(2));
const inMarkdown = markdownProblems(root);
if (inMarkdown.length > 0) fail('in the Markdown', inMarkdown);
try {
  await build(root, { outDir: out });
} catch (err) {
  console.error(`docs: the site's build failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(2);
}
const inHtml = htmlProblems(out);
if (inHtml.length > 0) fail('in the built site', inHtml);
console.log(`docs: the site is in ${out}`);
