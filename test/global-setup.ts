/**
 * One build per vitest run. The e2e tests spawn the CLI from dist/ while the unit tests import src/: building
 * here, before any test file runs, means `npx vitest run test/e2e/x.test.ts` after an edit of src/ tests
 * the edit, never a stale build. In watch mode the build runs again before each re-run.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function build(): void {
  // `npm run build` is the one definition of the build (tsc -p tsconfig.build.json, then prune-dist).
  execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
}

export default function setup(project: TestProject): void {
  build();
  project.onTestsRerun(() => build());
}
