import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // e2e tests spawn the CLI and sandboxes; two cores, so keep parallelism modest.
    maxWorkers: 2,
  },
});
