/**
 * Bundles the compiled CLI (dist/) into dist/bundle/: the entry the bin runs and the worker threads' scripts, with
 * the modules they share in chunks that load when a command first needs them; then the sandbox package on its own
 * into packages/sandbox/dist/ (its bin `bre-sandbox` and its API, with what it takes from @bre-batch/core, so that
 * its packed tarball installs and runs alone). Run by `npm run build` after tsc.
 *
 * Why: a command's start-up was mostly module loading. `bre-batch pipelines` loaded about 280 modules (zod's 95
 * files, yaml's 72, yargs' 38, ...) and a one-row run about 640; each one is a file resolved, read and linked. Bundled,
 * the same code is a few dozen files (docs/performance.md, "Start-up").
 *
 * Layout, which the code relies on: every output file sits directly in dist/bundle/, two levels under the package
 * root like dist/<layer>/<module>.js, so paths taken from `import.meta.url` (src/config/paths.ts, the package.json the
 * CLI reads its version from) hold in both; the worker scripts are named `<name>-worker.js`, which
 * src/output/worker-thread.ts looks for first.
 */
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile, type Plugin } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Entry points: output name -> compiled module. */
export const ENTRIES = {
  main: 'dist/cli/main.js',
  'spool-worker': 'dist/output/spool/spool-worker.js',
  'rebuild-worker': 'dist/output/spool/rebuild-worker.js',
  'sink-worker': 'dist/output/sink/sink-worker.js',
};

/**
 * Left to node_modules: the database drivers, loaded at a run's first connection, whose optional native parts
 * (pg-native, ...) cannot be resolved at build time. Packages loaded through createRequire (pino, cli-progress) are
 * not seen by the bundler at all.
 */
/** The bundle's esbuild metafile, beside it. */
export const META = 'meta.json';

export const EXTERNAL = ['pg', 'pg-copy-streams', 'mysql2', 'ioredis'];

/**
 * CommonJS packages bundled into ES modules call `require` for Node's built-ins: this gives every output file a
 * real one (esbuild's own shim would throw "Dynamic require of ... is not supported").
 */
const REQUIRE_BANNER =
  "import { createRequire as __bundleRequire } from 'node:module';\nconst require = __bundleRequire(import.meta.url);";

/**
 * zod re-exports its ~60 message locales (`z.locales`, and `z.core.locales` from its core's index),
 * a third of its code (300 kB of the chunk every command loads), which nothing here uses: its default locale (en)
 * is imported on its own, so the index of the others is replaced by an empty module for both importers.
 */
const zodLocalesUnused: Plugin = {
  name: 'zod-locales-unused',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/](classic|core)[\\/]/.test(args.importer)
        ? { path: 'zod-locales', namespace: 'empty' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'empty' }, () => ({ contents: 'export {};', loader: 'js' }));
  },
};

/**
 * undici's index loads all of undici (fetch, WebSocket, the cache stores, the mocks: parsed and run
 * at every run's start) for the three names src/http/transport.ts takes from it: the bundle gets those from their
 * own modules instead, with the request methods undici's index puts on every dispatcher (a ProxyAgent's CONNECT
 * uses them). A name imported from 'undici' that is not exported here fails the build (esbuild: "No matching
 * export"): add its module below.
 */
const UNDICI_PARTS = `
import Dispatcher from 'undici/lib/dispatcher/dispatcher.js';
import api from 'undici/lib/api/index.js';
import Pool from 'undici/lib/dispatcher/pool.js';
import ProxyAgent from 'undici/lib/dispatcher/proxy-agent.js';
import errors from 'undici/lib/core/errors.js';
Object.assign(Dispatcher.prototype, api);
export { Pool, ProxyAgent, errors };
`;

const undiciParts: Plugin = {
  name: 'undici-parts',
  setup(b) {
    b.onResolve({ filter: /^undici$/ }, (args) => ({
      path: 'undici',
      namespace: 'undici-parts',
      pluginData: args.resolveDir,
    }));
    b.onLoad({ filter: /.*/, namespace: 'undici-parts' }, (args) => ({
      contents: UNDICI_PARTS,
      loader: 'js',
      resolveDir: args.pluginData as string,
    }));
  },
};

/**
 * hyparquet-writer takes two functions from hyparquet's index (`parquetSchema`, `toJson`), which loads all of the
 * Parquet reader (its pages, codecs, query planning: 60 kB) with every writer, in every run and in the spool's and
 * the rebuild's threads: the writer gets them from their own modules instead. A name the writer imports from
 * 'hyparquet' that is not exported here fails the build (esbuild: "No matching export"): add its module below.
 */
const HYPARQUET_PARTS = `
export { parquetSchema } from 'hyparquet/src/metadata.js';
export { toJson } from 'hyparquet/src/utils.js';
`;

const hyparquetParts: Plugin = {
  name: 'hyparquet-parts',
  setup(b) {
    b.onResolve({ filter: /^hyparquet$/ }, (args) =>
      /[\\/]hyparquet-writer[\\/]/.test(args.importer)
        ? { path: 'hyparquet', namespace: 'hyparquet-parts', pluginData: args.resolveDir }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'hyparquet-parts' }, (args) => ({
      contents: HYPARQUET_PARTS,
      loader: 'js',
      resolveDir: args.pluginData as string,
    }));
  },
};

/**
 * The workspace's packages (`@bre-batch/...`) are bundled from their sources, through the `paths` of the
 * repository's tsconfig.json, whatever `root` is: one copy of each module (BreError above all) in a bundle.
 */
const TSCONFIG = join(ROOT, 'tsconfig.json');

/** Options both bundles share: ES modules for Node 20, split into chunks, mapped back to the sources. */
const COMMON = {
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: '[name]-[hash]',
  tsconfig: TSCONFIG,
  banner: { js: REQUIRE_BANNER },
  sourcemap: 'linked',
  sourcesContent: false,
  metafile: true,
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
} as const;

/**
 * Writes the metafile beside the output and removes the files of an earlier build that this one did not write
 * (chunks are named by their content's hash); folders (the sandbox's declarations) are left alone. Returns
 * what it removed, relative to `root`.
 */
function tidy(root: string, outdir: string, outputs: Metafile['outputs']): string[] {
  // What went where (`npx esbuild --analyze` reads it; test/scripts/bundle.test.ts checks what is left out).
  const meta = join(outdir, META);
  const written = new Set([meta, ...Object.keys(outputs).map((p) => join(root, p))]);
  const stale = readdirSync(outdir, { withFileTypes: true })
    .filter((e) => e.isFile() && /\.js(\.map)?$/.test(e.name))
    .map((e) => join(outdir, e.name))
    .filter((p) => !written.has(p));
  for (const p of stale) rmSync(p, { force: true });
  return stale.map((p) => relative(root, p));
}

export async function bundle(root = ROOT): Promise<string[]> {
  const outdir = join(root, 'dist', 'bundle');
  const result = await build({
    ...COMMON,
    absWorkingDir: root,
    entryPoints: ENTRIES,
    outdir,
    external: EXTERNAL,
    plugins: [zodLocalesUnused, undiciParts, hyparquetParts],
  });
  writeFileSync(join(outdir, META), JSON.stringify(result.metafile));
  return tidy(root, outdir, result.metafile.outputs);
}

/** The sandbox package's entries (packages/sandbox/package.json `exports` and `bin`): output name -> source. */
export const SANDBOX_ENTRIES = {
  index: 'packages/sandbox/src/index.ts',
  command: 'packages/sandbox/src/command.ts',
  cli: 'packages/sandbox/src/cli.ts',
};

/** The sandbox on its own in packages/sandbox/dist/: nothing left out, so the package needs no other to run. */
export async function bundleSandbox(root = ROOT): Promise<string[]> {
  const outdir = join(root, 'packages', 'sandbox', 'dist');
  const result = await build({ ...COMMON, absWorkingDir: root, entryPoints: SANDBOX_ENTRIES, outdir });
  writeFileSync(join(outdir, META), JSON.stringify(result.metafile));
  sandboxDeclarations(root);
  return tidy(root, outdir, result.metafile.outputs);
}

/**
 * The sandbox's declarations as its users get them (packages/sandbox/dist/types/): tsc's (packages/sandbox/build/),
 * with core's beside them in core/ and every `@bre-batch/core/X` they name made `./core/X.js` from where it is
 * named, so that they name no package the tarball does not hold. Written whole each build.
 */
function sandboxDeclarations(root: string): void {
  const pkg = join(root, 'packages');
  const out = join(pkg, 'sandbox', 'dist', 'types');
  rmSync(out, { recursive: true, force: true });
  const declarations = (p: string) => !/\.(ts|tsbuildinfo)$/.test(p) || p.endsWith('.d.ts');
  cpSync(join(pkg, 'sandbox', 'build'), out, { recursive: true, filter: declarations });
  cpSync(join(pkg, 'core', 'dist'), join(out, 'core'), {
    recursive: true,
    filter: (p) => !/\.js(\.map)?$|\.tsbuildinfo$/.test(p),
  });
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.d.ts') ? [join(dir, e.name)] : [],
    );
  for (const file of walk(out)) {
    const text = readFileSync(file, 'utf8');
    const local = text.replace(/(['"])@bre-batch\/core\/([\w-]+)\1/g, (_m, q: string, name: string) => {
      const path = relative(dirname(file), join(out, 'core', `${name}.js`));
      return `${q}${path.startsWith('.') ? path : `./${path}`}${q}`;
    });
    if (local !== text) writeFileSync(file, local);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await bundle();
  await bundleSandbox();
}
