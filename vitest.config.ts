import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import SuiteSequencer from './test/sequencer.js';

const ROOT = fileURLToPath(new URL('.', import.meta.url));
const PACKAGES = join(ROOT, 'packages/');

// The runner's tests, and each package's (packages/*/test/): one `npm test` runs them all.
const ALL = ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'];
// In a child process each (vitest's `forks`): the folders whose files spawn processes (the CLI, Chromium and
// VitePress, podman), which cost less CPU there than from a thread of vitest's own process, and a file named
// *.process.test.ts, which changes what a worker thread cannot or must not (the working directory, the umask:
// runInProcess). The rest run on worker threads (`threads`), which start for less CPU than a process.
// docs/development.md says which goes where, and the figures.
const OWN_PROCESS = [
  'test/{e2e,docs,container}/**/*.test.ts',
  ...ALL.map((glob) => glob.replace('*.test.ts', '*.process.test.ts')),
];

// On threads, the files share their modules (`isolate: false`): each thread imports src/ once for all the files it
// runs, not once a file (a third of the threads' CPU). Not a file that replaces a module for its tests (vi.mock,
// vi.doMock: the module may be in the cache already, or its replacement would stay there for the next file), nor
// one that adds to a registry (a test stage kind would be in every later file's list of kinds). Those run
// isolated, each on a thread with fresh modules (`isolated`), found by reading the files.
const CHANGES_A_MODULE = /\bvi\.(?:mock|doMock)\(|\bregisterStageKind\(/;
const ISOLATED = ['test', ...readdirSync(PACKAGES).map((p) => `packages/${p}/test`)]
  .filter((dir) => existsSync(join(ROOT, dir)))
  .flatMap((dir) =>
    readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' }).map((f) => `${dir}/${f.replaceAll('\\', '/')}`),
  )
  .filter((f) => f.endsWith('.test.ts') && CHANGES_A_MODULE.test(readFileSync(join(ROOT, f), 'utf8')));

/** What every kind of file runs with: a project without `extends` takes nothing from the root's config (vitest 4). */
function project(name: string, pool: 'forks' | 'threads', include: string[], exclude: string[] = [], isolate = true) {
  return {
    plugins: [
      {
        // `--exclude` on the command line reaches the root's config only, not a project's (vitest 4.1): each
        // project takes the root's exclusions too (the defaults and the command line's).
        name: 'bre-batch:root-exclude',
        configureVitest({ vitest, project }) {
          project.config.exclude.push(...vitest.config.exclude);
        },
      },
    ],
    resolve: {
      // A package imported by its name is read from its sources, as tsconfig.json's `paths` say for tsc and tsx:
      // `@bre-batch/formats` is packages/formats/src/index.ts, `@bre-batch/core/errors` packages/core/src/errors.ts.
      alias: [
        { find: /^@bre-batch\/([a-z]+)$/, replacement: `${PACKAGES}$1/src/index.ts` },
        { find: /^@bre-batch\/([a-z]+)\/(.+)$/, replacement: `${PACKAGES}$1/src/$2` },
      ],
    },
    test: {
      name,
      pool,
      isolate,
      include,
      exclude: [...configDefaults.exclude, ...exclude],
      // The build is imported as Node imports it, untransformed (test/helpers/cli-in-process.ts runs the CLI's
      // code from it): vitest's transform of its modules made a run's rows cost more CPU than a spawned CLI's.
      server: { deps: { external: [/\/dist\//] } },
      // With BRE_TEST_CPU=FILE, each file's CPU seconds (its own and its children's) go to FILE: test/cpu-probe.ts.
      setupFiles: ['test/cpu-probe.ts'],
      testTimeout: 60_000,
      hookTimeout: 60_000,
    },
  } satisfies TestProjectInlineConfiguration;
}

export default defineConfig({
  test: {
    projects: [
      project('process', 'forks', OWN_PROCESS),
      project('threads', 'threads', ALL, [...OWN_PROCESS, ...ISOLATED], false),
      project('isolated', 'threads', ISOLATED, OWN_PROCESS),
    ],
    // Builds dist/ once before the tests (the e2e tests spawn the built CLI): see test/global-setup.ts.
    globalSetup: ['test/global-setup.ts'],
    // One pool serves every project: two files a core, at most four. The end-to-end files wait (rows paced at a
    // documented rate, leases, storms; their cases side by side) more than they compute, so more files than
    // cores keep both busy. Four on two cores once starved two timing tests; one was a stale MariaDB view
    // (test/helpers/innodb.ts), the other had a third more CPU beside it than now: docs/development.md.
    maxWorkers: Math.min(4, availableParallelism() * 2),
    // The longest first across the projects, by an earlier run's durations; a file without one by its weight,
    // the cases kept beside it counted (test/sequencer.ts).
    sequence: { sequencer: SuiteSequencer },
  },
});
