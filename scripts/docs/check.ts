/**
 * The documentation's links, checked twice around the site's build (scripts/docs/build.ts):
 *
 * - in the Markdown, as a code host reads it: every relative link of every page leads to a file that exists,
 *   an anchor to a heading of it (GitHub's slugs), and a link leads to a page of the site or a picture, not to
 *   a folder or a source file (the site serves neither: name those in code);
 * - in the built HTML: every link between pages leads to a page that was built, and its `#anchor` to an id the
 *   page has. VitePress's own dead-link check ignores anchors (vuejs/vitepress#646).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import { brokenLinks, type MdCache } from './links.js';
import { readMarkdown } from './markdown.js';
import { sitePages } from './site.js';

const EXTERNAL = /^[a-z][a-z0-9+.-]*:|^\/\//i;
const PICTURE = /\.(png|svg|jpe?g|gif|webp)$/i;

/** Problems of one page's Markdown links: `file:line: url: why`. */
function pageProblems(root: string, page: string, pages: ReadonlySet<string>, cache: MdCache = new Map()): string[] {
  const file = join(root, page);
  const out = brokenLinks(file, root, cache);
  let md = cache.get(file);
  if (!md) cache.set(file, (md = readMarkdown(file)));
  for (const link of md.links) {
    if (EXTERNAL.test(link.url) || link.url.startsWith('#')) continue;
    const path = decodeURIComponent(link.url.split('#')[0]);
    if (path.startsWith('/')) continue; // brokenLinks says why
    const target = relative(root, resolve(dirname(file), path));
    if (!existsSync(join(root, target))) continue; // brokenLinks says why
    if (!pages.has(target) && !PICTURE.test(target)) {
      out.push(
        `${page}:${link.line}: ${link.url}: Expected a link to a page of the site or a picture, got ${target}, which the site does not serve (name a source file or a folder in code instead)`,
      );
    }
  }
  return out;
}

/** Problems of the Markdown of every page of the site. */
export function markdownProblems(root: string): string[] {
  const pages = sitePages(root);
  const set = new Set(pages);
  const cache: MdCache = new Map();
  return pages.flatMap((p) => pageProblems(root, p, set, cache));
}

function htmlFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.html'))
    .map((e) => join(e.parentPath, e.name));
}

const decodeEntities = (s: string): string =>
  s
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');

/** Problems of the built site: links between its pages to a page not built, or to an id the page lacks. */
export function htmlProblems(outDir: string): string[] {
  const ids = new Map<string, Set<string>>();
  const idsOf = (file: string): Set<string> | undefined => {
    if (!ids.has(file)) {
      if (!existsSync(file)) return undefined;
      const html = readFileSync(file, 'utf8');
      ids.set(file, new Set([...html.matchAll(/\sid="([^"]*)"/g)].map((m) => decodeEntities(m[1]))));
    }
    return ids.get(file);
  };
  const out: string[] = [];
  for (const file of htmlFiles(outDir)) {
    const html = readFileSync(file, 'utf8');
    // Links of the page's own content and navigation; the 404 page's "take me home" is a link too.
    for (const m of html.matchAll(/<a\s[^>]*?href="([^"]*)"/g)) {
      const href = decodeEntities(m[1]);
      if (EXTERNAL.test(href) || href === '' || href.startsWith('/assets/')) continue;
      const [pathPart, anchor] = href.split('#', 2) as [string, string | undefined];
      let target: string;
      if (pathPart === '') target = file;
      else {
        const path = decodeURIComponent(pathPart.split('?')[0]);
        target = path.startsWith('/') ? join(outDir, path) : resolve(dirname(file), path);
        if (path.endsWith('/')) target = join(target, 'index.html');
        else if (extname(target) === '') target += '.html';
      }
      if (!target.startsWith(outDir + sep) && target !== outDir) continue;
      const where = relative(outDir, file);
      if (!target.endsWith('.html')) {
        if (!existsSync(target))
          out.push(`${where}: ${href}: Expected ${relative(outDir, target)} in the site, got none`);
        continue;
      }
      const targetIds = idsOf(target);
      if (!targetIds) {
        out.push(`${where}: ${href}: Expected the page ${relative(outDir, target)} to be built, got none`);
        continue;
      }
      if (anchor && !targetIds.has(decodeURIComponent(anchor))) {
        out.push(`${where}: ${href}: Expected an element with id '${anchor}' in ${relative(outDir, target)}, got none`);
      }
    }
  }
  return [...new Set(out)];
}
