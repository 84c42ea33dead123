#!/usr/bin/env node
/**
 * What dist/ was built from, so that `npm start` builds only when dist/ is stale (it rebuilt every time: 8 s of
 * tsc and esbuild before a 3 s run). A plain script, run by `node` before anything is built.
 *
 * The inputs' fingerprint is a SHA-256 of every input file's path and bytes, not of times: a file edited,
 * added, removed or renamed changes it, whichever way the clock went (a checkout, an archive's old times).
 * `npm run build` begins by forgetting the recorded fingerprint and noting the inputs' as it reads them, and
 * ends by recording that one: a build that failed or was killed records none (the next start builds again),
 * and an edit made while a build ran is not taken as built.
 *
 *   node scripts/build-input.mjs begin   first step of `npm run build`
 *   node scripts/build-input.mjs end     its last step
 *   node scripts/build-input.mjs fresh   exit 0 when dist/ was built from the inputs as they are now, else 1
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** What the build reads: the sources, the build's own steps, its configuration, the locked dependencies. */
export const INPUTS = [
  'src',
  'scripts/build-input.mjs',
  'scripts/prune-dist.ts',
  'scripts/bundle.ts',
  'tsconfig.json',
  'tsconfig.build.json',
  'package.json',
  'package-lock.json',
];

/** And of each workspace package (packages/NAME/): its sources and what says how they are built. */
const PACKAGE_INPUTS = ['src', 'package.json', 'tsconfig.json'];

/** Folders under an input folder that are outputs or installs, not sources. */
const SKIPPED = new Set(['node_modules', 'dist']);

/** The recorded fingerprint, and the one a build under way noted at its start. */
const RECORDED = join('dist', '.build-input');
const PENDING = join('dist', '.build-input.pending');

/** Every input file under `root`, as a path relative to it with `/`, sorted. */
function inputFiles(root) {
  const files = [];
  const walk = (path) => {
    if (!existsSync(path)) return;
    const entries = readdirSync(path, { withFileTypes: true });
    for (const e of entries) {
      if (e.name.startsWith('.') || SKIPPED.has(e.name)) continue;
      const p = join(path, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) files.push(relative(root, p).split(sep).join('/'));
    }
  };
  const packages = join(root, 'packages');
  const workspace = existsSync(packages)
    ? readdirSync(packages, { withFileTypes: true })
        .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
        .flatMap((e) => PACKAGE_INPUTS.map((f) => `packages/${e.name}/${f}`))
    : [];
  for (const input of [...INPUTS, ...workspace]) {
    const path = join(root, input);
    if (!existsSync(path)) continue;
    if (statSync(path).isDirectory()) walk(path);
    else files.push(input);
  }
  return files.sort();
}

/** The inputs' fingerprint: their paths and bytes. */
export function fingerprint(root = ROOT) {
  const h = createHash('sha256');
  for (const f of inputFiles(root)) {
    const bytes = readFileSync(join(root, f));
    h.update(`${f}\0${bytes.length}\0`);
    h.update(bytes);
  }
  return h.digest('hex');
}

/** The build begins: dist/ is no longer known to be built from anything until it ends. */
export function begin(root = ROOT) {
  rmSync(join(root, RECORDED), { force: true });
  mkdirSync(join(root, 'dist'), { recursive: true });
  writeFileSync(join(root, PENDING), `${fingerprint(root)}\n`);
}

/** The build ended well: dist/ is built from the inputs as they were at its start. */
export function end(root = ROOT) {
  renameSync(join(root, PENDING), join(root, RECORDED));
}

/** Whether dist/ was built from the inputs as they are now (and its bundle is there). */
export function fresh(root = ROOT) {
  if (!existsSync(join(root, 'dist', 'bundle', 'main.js'))) return false;
  let recorded;
  try {
    recorded = readFileSync(join(root, RECORDED), 'utf8').trim();
  } catch {
    return false;
  }
  return recorded === fingerprint(root);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const step = process.argv[2];
  if (step === 'begin') begin();
  else if (step === 'end') end();
  else if (step === 'fresh') process.exitCode = fresh() ? 0 : 1;
  else {
    process.stderr.write('usage: node scripts/build-input.mjs begin|end|fresh\n');
    process.exitCode = 2;
  }
}
