/**
 * One build per vitest run, when dist/ is stale. The e2e tests spawn the CLI from dist/ while the unit tests
 * import src/: building here, before any test file runs, means `npx vitest run test/e2e/x.test.ts` after an
 * edit of src/ tests the edit, never a stale build. Whether dist/ is stale is the build's own record
 * (`scripts/build-input.mjs fresh`: a SHA-256 of what it was built from), so a second run after no edit skips
 * the build. In watch mode the check runs again before each re-run.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function buildIfStale(): void {
  const fresh = spawnSync(process.execPath, ['scripts/build-input.mjs', 'fresh'], { cwd: ROOT, stdio: 'ignore' });
  if (fresh.status === 0) return;
  // `npm run build` is the one definition of the build (tsc, prune-dist, the bundle, the record of its inputs).
  execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
}

export default function setup(project: TestProject): void {
  buildIfStale();
  project.onTestsRerun(() => buildIfStale());
}
