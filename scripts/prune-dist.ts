/**
 * Removes from dist/ every compiled file whose source in src/ is gone (moved or deleted): tsc only ever
 * adds and overwrites, so without this a test or a user could still run a module that no longer exists.
 * Run by `npm run build` after tsc. Deletes only what has no source, so a build running beside a test run
 * never takes away a file the tests use. dist/bundle/ is scripts/bundle.ts' output, which tidies itself.
 */
import { existsSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** dist/.build-input and dist/.build-input.pending (./build-input.mjs). */
const BUILD_INPUT = '.build-input';

/** `dist/a/b.js` and `dist/a/b.js.map` come from `src/a/b.ts`. */
function sourceOf(distFile: string, dist: string, src: string): string | undefined {
  const m = /^(.*)\.js(\.map)?$/.exec(relative(dist, distFile));
  return m ? join(src, `${m[1]}.ts`) : undefined;
}

/** Returns the removed paths, relative to `root`. */
export function pruneDist(root = ROOT): string[] {
  const dist = join(root, 'dist');
  const src = join(root, 'src');
  const removed: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (path === join(dist, 'bundle')) continue;
      // What dist/ is built from (./build-input.mjs): the build's own record, not a compiled file.
      if (dir === dist && entry.name.startsWith(BUILD_INPUT)) continue;
      if (entry.isDirectory()) {
        walk(path);
        if (readdirSync(path).length === 0) rmdirSync(path);
        continue;
      }
      const source = sourceOf(path, dist, src);
      if (source === undefined || !existsSync(source)) {
        rmSync(path, { force: true });
        removed.push(relative(root, path));
      }
    }
  };
  if (existsSync(dist)) walk(dist);
  return removed;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const removed = pruneDist();
  if (removed.length > 0)
    process.stderr.write(`prune-dist: removed ${removed.length} file(s) with no source: ${removed.join(', ')}\n`);
}
