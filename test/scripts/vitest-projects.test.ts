/**
 * vitest.config.ts's projects: threads share their modules, so a file that changes a module for its tests must
 * be in `isolated` (the config finds them by reading the files), and no file is in two projects.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import config from '../../vitest.config.js';

const ROOT = join(import.meta.dirname, '..', '..');

type Project = { test: { name: string; isolate: boolean; pool: string; include: string[]; exclude: string[] } };
const projects = (config.test?.projects ?? []) as unknown as Project[];
const byName = (name: string) => projects.find((p) => p.test.name === name)!.test;

describe('vitest projects', () => {
  it('threads share modules; the isolated and process files do not', () => {
    expect(projects.map((p) => [p.test.name, p.test.pool, p.test.isolate])).toEqual([
      ['process', 'forks', true],
      ['threads', 'threads', false],
      ['isolated', 'threads', true],
    ]);
  });

  it('every file that mocks a module or registers a stage kind runs isolated, and only there', () => {
    const isolated = byName('isolated').include;
    // The files known today to change a module: two mock node:fs, two register test stage kinds.
    for (const f of [
      'test/output/ndjson-file.test.ts',
      'test/pipeline/monitor.test.ts',
      'test/pipeline/row.test.ts',
      'test/pipeline/unexpected.test.ts',
    ])
      expect(isolated).toContain(f);
    for (const f of isolated) {
      expect(readFileSync(join(ROOT, f), 'utf8')).toMatch(/\bvi\.(?:mock|doMock)\(|\bregisterStageKind\(/);
      expect(byName('threads').exclude).toContain(f);
    }
  });
});
