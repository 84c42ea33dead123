import { defineConfig } from 'vitest/config';
import SuiteSequencer from './test/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Builds dist/ once before the tests (the e2e tests spawn the built CLI): see test/global-setup.ts.
    globalSetup: ['test/global-setup.ts'],
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
