/** Relative links of Markdown files that do not resolve: a missing file, or an anchor no heading of the target has. */
import { existsSync, statSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { readMarkdown, type MdFile } from './markdown.js';

/** A scheme (`https:`, `mailto:`) means the link leaves the repository: not checked here. */
const EXTERNAL = /^[a-z][a-z0-9+.-]*:/i;

/** The pages read so far, by path: one parse of each when many pages are checked. */
export type MdCache = Map<string, MdFile>;

export function brokenLinks(file: string, root: string, cache: MdCache = new Map()): string[] {
  const md = (path: string): MdFile => {
    let m = cache.get(path);
    if (!m) cache.set(path, (m = readMarkdown(path)));
    return m;
  };
  const broken: string[] = [];
  const at = (line: number, url: string, why: string) => broken.push(`${relative(root, file)}:${line}: ${url}: ${why}`);
  for (const link of md(file).links) {
    if (EXTERNAL.test(link.url) || link.url.startsWith('//')) continue;
    const hash = link.url.indexOf('#');
    const pathPart = decodeURIComponent(hash === -1 ? link.url : link.url.slice(0, hash));
    const anchor = hash === -1 ? undefined : decodeURIComponent(link.url.slice(hash + 1));
    if (pathPart.startsWith('/')) {
      at(link.line, link.url, 'Expected a path relative to the file (a leading / means the site root on GitHub)');
      continue;
    }
    const target = pathPart === '' ? file : resolve(dirname(file), pathPart);
    if (!existsSync(target)) {
      at(link.line, link.url, `Expected ${relative(root, target)} to exist, got no such file`);
      continue;
    }
    if (anchor === undefined || anchor === '') continue;
    // Anchors are checked where they are headings; GitHub's line anchors of source files (#L10) are not.
    if (!statSync(target).isFile() || !target.endsWith('.md')) continue;
    if (!md(target).anchors.has(anchor)) {
      at(link.line, link.url, `Expected a heading whose anchor is '${anchor}' in ${relative(root, target)}, got none`);
    }
  }
  return broken;
}
