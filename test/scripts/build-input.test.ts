/**
 * What dist/ was built from (scripts/build-input.mjs), in a tree of its own: `npm start` builds only when the
 * inputs changed since the last build that ended well; an edit, an added, removed or renamed source, a build that
 * failed half-way or an edit made while a build ran all leave dist/ stale; a file's time alone does not.
 */
import { mkdirSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { begin, end, fingerprint, fresh } from '../../scripts/build-input.mjs';
import { tempDir } from '../helpers/temp.js';

/** A project as the build reads it, with a built bundle. */
function tree(): string {
  const root = tempDir('bre-build-input-');
  mkdirSync(join(root, 'src', 'cli'), { recursive: true });
  mkdirSync(join(root, 'scripts'));
  writeFileSync(join(root, 'src', 'cli', 'main.ts'), 'export const a = 1;\n');
  writeFileSync(join(root, 'src', 'types.ts'), 'export type T = string;\n');
  writeFileSync(join(root, 'package.json'), '{"name":"x"}\n');
  writeFileSync(join(root, 'scripts', 'bundle.ts'), '// bundle\n');
  // Outputs and installs are not inputs.
  mkdirSync(join(root, 'dist', 'bundle'), { recursive: true });
  writeFileSync(join(root, 'dist', 'bundle', 'main.js'), '// built\n');
  mkdirSync(join(root, 'node_modules', 'x'), { recursive: true });
  return root;
}

/** A build that ends well. */
function build(root: string): void {
  begin(root);
  end(root);
}

describe('the build inputs', () => {
  it('a built tree is fresh; a build never made, or one that did not end, is not', () => {
    const root = tree();
    expect(fresh(root)).toBe(false);
    build(root);
    expect(fresh(root)).toBe(true);
    begin(root);
    expect(fresh(root), 'a build begun and not ended (failed, killed)').toBe(false);
    end(root);
    expect(fresh(root)).toBe(true);
    rmSync(join(root, 'dist', 'bundle', 'main.js'));
    expect(fresh(root), 'the bundle removed').toBe(false);
  });

  it('stale after an edit, an added, removed or renamed source, a changed package.json or build step', () => {
    const root = tree();
    const changes: [string, () => void][] = [
      ['an edit', () => writeFileSync(join(root, 'src', 'cli', 'main.ts'), 'export const a = 2;\n')],
      ['a source added', () => writeFileSync(join(root, 'src', 'new.ts'), '')],
      ['a source removed', () => rmSync(join(root, 'src', 'new.ts'))],
      ['a source renamed', () => renameSync(join(root, 'src', 'types.ts'), join(root, 'src', 'kinds.ts'))],
      ['package.json', () => writeFileSync(join(root, 'package.json'), '{"name":"y"}\n')],
      ['a build step', () => writeFileSync(join(root, 'scripts', 'bundle.ts'), '// bundle, changed\n')],
      [
        "a workspace package's source",
        () => {
          mkdirSync(join(root, 'packages', 'p', 'src'), { recursive: true });
          writeFileSync(join(root, 'packages', 'p', 'src', 'index.ts'), '');
        },
      ],
    ];
    for (const [what, change] of changes) {
      build(root);
      change();
      expect(fresh(root), what).toBe(false);
    }
  });

  it('an edit made while a build ran is not taken as built', () => {
    const root = tree();
    begin(root);
    writeFileSync(join(root, 'src', 'cli', 'main.ts'), 'export const a = 3;\n');
    end(root);
    expect(fresh(root)).toBe(false);
  });

  it('by contents, not by time; outputs, installs and hidden files are not inputs', () => {
    const root = tree();
    mkdirSync(join(root, 'packages', 'p', 'src'), { recursive: true });
    writeFileSync(join(root, 'packages', 'p', 'src', 'index.ts'), '');
    build(root);
    const before = fingerprint(root);
    utimesSync(join(root, 'src', 'cli', 'main.ts'), new Date(2000, 0, 1), new Date(2000, 0, 1));
    writeFileSync(join(root, 'dist', 'cli.js'), '');
    writeFileSync(join(root, 'node_modules', 'x', 'index.js'), '');
    writeFileSync(join(root, 'src', '.DS_Store'), '');
    // A package's build output and what is beside its sources (its README, its tests).
    mkdirSync(join(root, 'packages', 'p', 'build'));
    writeFileSync(join(root, 'packages', 'p', 'build', 'index.d.ts'), '');
    writeFileSync(join(root, 'packages', 'p', 'README.md'), '');
    expect(fingerprint(root)).toBe(before);
    expect(fresh(root)).toBe(true);
  });
});
