import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import SuiteSequencer from './test/sequencer.js';

const PACKAGES = fileURLToPath(new URL('./packages/', import.meta.url));

export default defineConfig({
  resolve: {
    // A package imported by its name is read from its sources, as tsconfig.json's `paths` say for tsc and tsx:
    // `@bre-batch/formats` is packages/formats/src/index.ts, `@bre-batch/core/errors` packages/core/src/errors.ts.
    alias: [
      { find: /^@bre-batch\/([a-z]+)$/, replacement: `${PACKAGES}$1/src/index.ts` },
      { find: /^@bre-batch\/([a-z]+)\/(.+)$/, replacement: `${PACKAGES}$1/src/$2` },
    ],
  },
  test: {
    // The runner's tests, and each package's (packages/*/test/): one `npm test` runs them all.
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    // Builds dist/ once before the tests (the e2e tests spawn the built CLI): see test/global-setup.ts.
    globalSetup: ['test/global-setup.ts'],
    // The build is imported as Node imports it, untransformed (test/helpers/cli-in-process.ts runs the CLI's
    // code from it): vitest's transform of its modules made a run's rows cost more CPU than a spawned CLI's.
    server: { deps: { external: [/\/dist\//] } },
    // With BRE_TEST_CPU=FILE, each file's CPU seconds (its own and its children's) go to FILE: test/cpu-probe.ts.
    setupFiles: ['test/cpu-probe.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // e2e tests spawn the CLI and sandboxes; two cores, so keep parallelism modest.
    maxWorkers: 2,
    // Without earlier durations, the heaviest files first, cases kept beside a file counted (test/sequencer.ts).
    sequence: { sequencer: SuiteSequencer },
  },
});
