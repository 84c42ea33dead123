/** Temporary folders for tests, removed when the test file is done. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const tempDirs: string[] = [];

// Each test file gets its own copy of this module: its folders go when its tests are done.
afterAll(() => {
  if (process.env.BRE_KEEP_TEST_OUTPUT) return;
  for (const d of tempDirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A fresh folder under the system temp dir, removed after the test file (BRE_KEEP_TEST_OUTPUT=1 keeps it). */
export function tempDir(prefix = 'bre-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}
