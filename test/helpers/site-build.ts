/**
 * The documentation site built by `npm run docs:build`, kept by what it was built from: the site's pages
 * (scripts/docs/site.ts), every other file of docs/ and .vitepress/ (pictures, the config), the build's
 * scripts and the lockfile (VitePress's version). A second `npm test` with none of them changed opens the same
 * site instead of building it again (tens of CPU seconds); any change builds it again. Only a build that
 * passed (exit 0: no dead link or anchor) is kept.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { sitePages } from '../../scripts/docs/site.js';

const ROOT = join(import.meta.dirname, '..', '..');
const CACHE = join(ROOT, 'node_modules', '.cache', 'bre-batch', 'docs-site');

function filesUnder(dir: string, skip: readonly string[] = []): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .filter((p) => !skip.some((s) => p.startsWith(join(dir, s))));
}

/** The sha256 of the build's inputs: their paths and contents, in a fixed order. */
export function siteInputsHash(root = ROOT): string {
  const files = new Set([
    ...sitePages(root).map((p) => join(root, p)),
    ...filesUnder(join(root, 'docs')),
    ...filesUnder(join(root, '.vitepress'), ['cache', 'dist']),
    ...filesUnder(join(root, 'scripts', 'docs')),
    join(root, 'package-lock.json'),
  ]);
  const h = createHash('sha256');
  for (const f of [...files].sort())
    h.update(`${relative(root, f)}\0`)
      .update(readFileSync(f))
      .update('\0');
  return h.digest('hex');
}

/** The built site's folder: the one kept for these inputs, or a new build (which fails the caller if it fails). */
export async function builtSite(): Promise<string> {
  const dir = join(CACHE, siteInputsHash());
  if (existsSync(join(dir, 'built'))) return join(dir, 'site');
  // Built beside, then moved in: a build stopped half-way is never taken for a whole one.
  const building = `${CACHE}-building.${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  await promisify(execFile)('npm', ['run', '-s', 'docs:build', '--', '--out', join(building, 'site')], { cwd: ROOT });
  writeFileSync(join(building, 'built'), `${new Date().toISOString()}\n`);
  // Earlier inputs' sites go: one site is kept.
  rmSync(CACHE, { recursive: true, force: true });
  mkdirSync(CACHE, { recursive: true });
  renameSync(building, dir);
  return join(dir, 'site');
}
