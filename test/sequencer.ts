/**
 * The order test files start in. With durations from an earlier run (vitest's cache), vitest's own: the
 * longest first (the failed before them), whichever project a file is in. Without (a fresh clone, CI), vitest orders by the test file's size, which puts a file that
 * only runs cases kept beside it (`./db-source/cases.js`, `./job-cases.js`: one file per database, so that both
 * run at once) last, where it keeps one worker busy after the other has finished. Here a file weighs what it
 * imports from beside it too.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const LOCAL_IMPORT = /from '(\.\/[^']+)\.js'/g;

/** The file's size and that of the modules it imports from its own folder or below. */
export function weight(path: string): number {
  const text = readFileSync(path, 'utf8');
  let bytes = statSync(path).size;
  for (const [, spec] of text.matchAll(LOCAL_IMPORT)) {
    const ts = resolve(dirname(path), `${spec}.ts`);
    if (existsSync(ts)) bytes += statSync(ts).size;
  }
  return bytes;
}

export default class SuiteSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const cache = this.ctx.cache;
    const results = new Map(
      files.map((f) => [
        f,
        cache.getFileTestResults(`${f.project.name}:${relative(this.ctx.config.root, f.moduleId)}`),
      ]),
    );
    const known = [...results.values()].every((r) => r !== undefined);
    // vitest's own order, failed first then the longest, but across the projects (vitest.config.ts): its own
    // sort puts one project's files before the other's, which would leave a long thread file to the end.
    if (known)
      return [...files].sort((a, b) => {
        const [ra, rb] = [results.get(a), results.get(b)];
        if (!ra || !rb) return 0;
        if (ra.failed !== rb.failed) return ra.failed ? -1 : 1;
        return rb.duration - ra.duration;
      });
    const weights = new Map(files.map((f) => [f.moduleId, weight(f.moduleId)]));
    return [...files].sort((a, b) => (weights.get(b.moduleId) ?? 0) - (weights.get(a.moduleId) ?? 0));
  }
}
