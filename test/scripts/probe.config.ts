// The CPU probe alone, without the suite's build: test/scripts/test-durations.test.ts runs one file with it.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: { testTimeout: 60_000, setupFiles: ['test/cpu-probe.ts'], include: ['test/scripts/.probe-*.test.ts'] },
});
