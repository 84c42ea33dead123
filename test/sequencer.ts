/**
 * The order test files start in: the longest first (the failed before them), whichever project a file is in, by
 * the durations of an earlier run (vitest's cache). Without (a fresh clone, CI), by weight: vitest's own order by
 * the test file's size would put a file that
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

/** A test file as the order sees it: its weight and, when an earlier run left them, its duration and outcome. */
export interface Weighed<T> {
  readonly file: T;
  readonly weight: number;
  readonly earlier?: { readonly duration: number; readonly failed: boolean };
}

/**
 * The failed first, then the longest first. A file without a duration (new, renamed, or every file in a fresh
 * clone) is given one from its weight at the rate of the files that have one, so that one new file does not
 * send the whole suite back to the order by weight (it did: the long end-to-end files then started late and
 * ended the run alone); with none known, the order is by weight.
 */
export function longestFirst<T>(files: readonly Weighed<T>[]): T[] {
  let ms = 0;
  let bytes = 0;
  for (const f of files)
    if (f.earlier) {
      ms += f.earlier.duration;
      bytes += f.weight;
    }
  const perByte = bytes > 0 ? ms / bytes : 1;
  const duration = (f: Weighed<T>) => f.earlier?.duration ?? f.weight * perByte;
  return [...files]
    .sort((a, b) => {
      const [fa, fb] = [a.earlier?.failed ?? false, b.earlier?.failed ?? false];
      if (fa !== fb) return fa ? -1 : 1;
      return duration(b) - duration(a);
    })
    .map((f) => f.file);
}

export default class SuiteSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const cache = this.ctx.cache;
    // Across the projects (vitest.config.ts): vitest's own sort puts one project's files before the other's,
    // which would leave a long thread file to the end.
    return longestFirst(
      files.map((file) => {
        const earlier = cache.getFileTestResults(
          `${file.project.name}:${relative(this.ctx.config.root, file.moduleId)}`,
        );
        return {
          file,
          weight: weight(file.moduleId),
          ...(earlier ? { earlier: { duration: earlier.duration ?? 0, failed: earlier.failed ?? false } } : {}),
        };
      }),
    );
  }
}
