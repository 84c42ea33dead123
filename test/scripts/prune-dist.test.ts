import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pruneDist } from '../../scripts/prune-dist.js';
import { tempDir } from '../helpers/temp.js';

const root = tempDir('bre-prune-');

function touch(path: string): void {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), '');
}

describe('pruneDist', () => {
  it('removes compiled files whose source is gone, and the folders left empty; keeps the rest', () => {
    for (const f of [
      'src/a.ts',
      'src/sub/b.ts',
      'dist/a.js',
      'dist/a.js.map',
      'dist/sub/b.js',
      'dist/sub/b.js.map',
      'dist/gone.js',
      'dist/gone.js.map',
      'dist/moved/c.js',
      'dist/moved/c.js.map',
      'dist/notes.txt',
    ])
      touch(f);
    expect(pruneDist(root).sort()).toEqual([
      'dist/gone.js',
      'dist/gone.js.map',
      'dist/moved/c.js',
      'dist/moved/c.js.map',
      'dist/notes.txt',
    ]);
    for (const kept of ['dist/a.js', 'dist/a.js.map', 'dist/sub/b.js', 'dist/sub/b.js.map'])
      expect(existsSync(join(root, kept)), kept).toBe(true);
    expect(existsSync(join(root, 'dist', 'moved'))).toBe(false);
    expect(pruneDist(root)).toEqual([]);
  });
});
