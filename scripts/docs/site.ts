/**
 * Which files are the documentation site's pages: every Markdown file of the repository but those of the folders
 * below, which hold code, data and what runs write. One list for VitePress (`.vitepress/config.mts`'s
 * `srcExclude`) and for the checks of scripts/docs/check.ts, so they read the same pages.
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Top-level folders that are not documentation (node_modules and hidden folders are skipped everywhere). */
const NOT_DOCS = ['output', 'dist', 'test', 'bench', 'samples', 'pipelines', 'patches'] as const;

/** The same in each workspace package (packages/NAME/): its tests, its fixtures and its build are not pages. */
const NOT_PACKAGE_DOCS = ['dist', 'test'] as const;

/** The same as VitePress globs to leave out. */
export const SITE_EXCLUDE = [
  '**/node_modules/**',
  ...NOT_DOCS.map((d) => `${d}/**`),
  ...NOT_PACKAGE_DOCS.map((d) => `packages/*/${d}/**`),
];

/** The site's pages, as paths from the root, sorted. */
export function sitePages(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name.startsWith('.') || e.name === 'node_modules') continue;
      const path = join(dir, e.name);
      const rel = relative(root, path);
      if (e.isDirectory()) {
        if (dir === root && (NOT_DOCS as readonly string[]).includes(e.name)) continue;
        if (
          /^packages[\\/][^\\/]+$/.test(relative(root, dir)) &&
          (NOT_PACKAGE_DOCS as readonly string[]).includes(e.name)
        )
          continue;
        walk(path);
      } else if (e.isFile() && e.name.endsWith('.md')) out.push(rel);
    }
  };
  walk(root);
  return out.sort();
}
