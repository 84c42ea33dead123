/**
 * The files root (src/input/files-root.ts): where a row's path lands by its text alone (table-driven, no
 * disk), then on a real folder tree with symbolic links, counting every look at the disk; the root from the
 * option or the input; and the header check of file columns where there is none.
 */
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BreError } from '@bre-batch/core/errors';
import {
  checkFileColumns,
  folderRoot,
  isInside,
  locateRowFile,
  placeInRoot,
  resolveFilesRoot,
  type FilesRoot,
} from '../../src/input/files-root.js';
import { tempDir } from '../helpers/temp.js';

/** A root whose path goes through a link (/link/in), its real path elsewhere (/real/in). */
const ROOT: FilesRoot = { kind: 'folder', path: '/link/in', real: '/real/in', given: true };
const NONE: FilesRoot = { kind: 'none', why: 'the input is stdin' };

describe('isInside', () => {
  it.each([
    ['/a/b', '/a/b', true],
    ['/a/b', '/a/b/c.json', true],
    ['/a/b', '/a/b/c/d/e.json', true],
    ['/a/b', '/a/b/..c.json', true], // a name that starts with two dots is not a step up
    ['/a/b', '/a/bc/d.json', false], // a sibling sharing a prefix
    ['/a/b', '/a', false],
    ['/a/b', '/a/c.json', false],
    ['/a/b', '/', false],
    ['/', '/etc/passwd', true],
  ])('%s holds %s: %s', (folder, path, inside) => {
    expect(isInside(folder, path)).toBe(inside);
  });
});

describe('placeInRoot: by the text alone', () => {
  it.each<[string, FilesRoot, string, ReturnType<typeof placeInRoot>]>([
    ['a relative path', ROOT, 'reports/a.json', { ok: true, path: '/link/in/reports/a.json' }],
    ['a relative path starting ./', ROOT, './a.json', { ok: true, path: '/link/in/a.json' }],
    ['.. that comes back in', ROOT, 'reports/../bank/b.json', { ok: true, path: '/link/in/bank/b.json' }],
    ['.. out of the root and back in by name', ROOT, '../in/a.json', { ok: true, path: '/link/in/a.json' }],
    [
      'an absolute path inside the root',
      ROOT,
      '/link/in/reports/a.json',
      { ok: true, path: '/link/in/reports/a.json' },
    ],
    ["an absolute path inside the root's real path", ROOT, '/real/in/a.json', { ok: true, path: '/real/in/a.json' }],
    ['an absolute path with .. that stays inside', ROOT, '/link/in/x/../a.json', { ok: true, path: '/link/in/a.json' }],
    ['.. out of the root', ROOT, '../outside/private.json', { ok: false, problem: 'outside' }],
    ['.. deep out of the root', ROOT, 'reports/../../../etc/passwd', { ok: false, problem: 'outside' }],
    ['an absolute path elsewhere', ROOT, '/somewhere/private.json', { ok: false, problem: 'outside' }],
    ['an absolute path through .. out', ROOT, '/link/in/../secret.json', { ok: false, problem: 'outside' }],
    ['a sibling folder sharing the prefix', ROOT, '/link/input2/a.json', { ok: false, problem: 'outside' }],
    ['no root, a relative path', NONE, 'reports/a.json', { ok: false, problem: 'no-root' }],
    ['no root, an absolute path', NONE, '/data/a.json', { ok: false, problem: 'no-root' }],
  ])('%s', (_name, root, given, expected) => {
    expect(placeInRoot(root, given)).toEqual(expected);
  });
});

describe('locateRowFile: on a real tree', () => {
  // base/in is the root; base/outside holds a file the rows must not reach.
  const base = realpathSync(tempDir('bre-files-root-'));
  const root = join(base, 'in');
  mkdirSync(join(root, 'reports'), { recursive: true });
  mkdirSync(join(base, 'outside'));
  writeFileSync(join(root, 'reports', 'a.json'), '{}');
  writeFileSync(join(base, 'outside', 'private.json'), '{"secret":1}');
  symlinkSync(join(base, 'outside', 'private.json'), join(root, 'link-to-private.json'));
  symlinkSync(join(base, 'outside'), join(root, 'linked-folder'));
  symlinkSync(join(root, 'reports', 'a.json'), join(root, 'link-inside.json'));
  symlinkSync(join(base, 'outside', 'gone.json'), join(root, 'dangling.json'));
  const r = folderRoot(root, false);

  const counted = () => {
    const looked: string[] = [];
    return {
      looked,
      realpath: async (p: string) => {
        looked.push(p);
        return realpathSync(p);
      },
    };
  };

  it.each<[string, string, unknown, number]>([
    ['a file inside', 'reports/a.json', { ok: true, path: join(root, 'reports', 'a.json') }, 1],
    [
      'an absolute path inside',
      join(root, 'reports', 'a.json'),
      { ok: true, path: join(root, 'reports', 'a.json') },
      1,
    ],
    ['a link to a file inside', 'link-inside.json', { ok: true, path: join(root, 'reports', 'a.json') }, 1],
    ['a link to a file outside', 'link-to-private.json', { ok: false, problem: 'link-outside' }, 1],
    ['a file in a linked folder outside', 'linked-folder/private.json', { ok: false, problem: 'link-outside' }, 1],
    ['.. out: no look at the disk', '../outside/private.json', { ok: false, problem: 'outside' }, 0],
    [
      'absolute elsewhere: no look at the disk',
      join(base, 'outside', 'private.json'),
      { ok: false, problem: 'outside' },
      0,
    ],
    ['a missing file', 'reports/none.json', { ok: false, problem: 'unreadable', errno: 'ENOENT' }, 1],
    ['a link to nothing', 'dangling.json', { ok: false, problem: 'unreadable', errno: 'ENOENT' }, 1],
  ])('%s', async (_name, given, expected, looks) => {
    const c = counted();
    expect(await locateRowFile(r, given, c.realpath)).toEqual(expected);
    expect(c.looked).toHaveLength(looks);
  });

  it('a root named through a link holds the files of its real folder', async () => {
    const viaLink = join(base, 'root-link');
    symlinkSync(root, viaLink);
    const linked = folderRoot(viaLink, true);
    expect(linked).toEqual({ kind: 'folder', path: viaLink, real: root, given: true });
    expect(await locateRowFile(linked, 'reports/a.json')).toEqual({ ok: true, path: join(root, 'reports', 'a.json') });
    expect(await locateRowFile(linked, join(root, 'reports', 'a.json'))).toEqual({
      ok: true,
      path: join(root, 'reports', 'a.json'),
    });
    expect(await locateRowFile(linked, 'link-to-private.json')).toEqual({ ok: false, problem: 'link-outside' });
  });

  it('no root: refused without a look at the disk', async () => {
    const c = counted();
    expect(await locateRowFile(NONE, join(root, 'reports', 'a.json'), c.realpath)).toEqual({
      ok: false,
      problem: 'no-root',
    });
    expect(c.looked).toEqual([]);
  });
});

describe('resolveFilesRoot', () => {
  const dir = realpathSync(tempDir('bre-files-root-opt-'));
  writeFileSync(join(dir, 'in.csv'), 'x\n');

  it("the input file's folder by default; none for stdin; --files-root when given", () => {
    expect(resolveFilesRoot(undefined, join(dir, 'in.csv'))).toEqual({
      kind: 'folder',
      path: dir,
      real: dir,
      given: false,
    });
    expect(resolveFilesRoot(undefined, '-')).toEqual({ kind: 'none', why: 'the input is stdin' });
    expect(resolveFilesRoot(dir, '-')).toEqual({ kind: 'folder', path: dir, real: dir, given: true });
    expect(resolveFilesRoot(dir, join(dir, 'in.csv'))).toMatchObject({ given: true });
  });

  it.each([
    ['a missing folder', 'nope', /^Expected --files-root to be a folder, got '.*nope' \(no such folder\)$/],
    ['a file', 'in.csv', /^Expected --files-root to be a folder, got '.*in\.csv' \(a file, not a folder\)$/],
    ['an empty value', '', /^Expected --files-root to be a folder, got an empty value$/],
  ])('refuses %s (USAGE, exit 2)', (_name, option, message) => {
    const given = option === '' ? '' : join(dir, option);
    let err: unknown;
    try {
      resolveFilesRoot(given, '-');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(BreError);
    expect((err as BreError).code).toBe('USAGE');
    expect((err as BreError).message).toMatch(message);
  });
});

describe('checkFileColumns: the header check where there is no root', () => {
  const files = ['bureau_report_path', 'bank_data_path'];
  it.each<[string, string[], FilesRoot, string | null]>([
    ['no root, a file column', ['reference_id', 'bureau_report_path'], NONE, 'bureau_report_path'],
    ['no root, both file columns', ['bank_data_path', 'bureau_report_path'], NONE, 'bureau_report_path'],
    ['no root, no file column', ['reference_id', 'bureau_raw_json'], NONE, null],
    ['a root, a file column', ['reference_id', 'bureau_report_path'], ROOT, null],
  ])('%s', (_name, names, root, field) => {
    let err: BreError | undefined;
    try {
      checkFileColumns(names, files, root, 'line 1');
    } catch (e) {
      err = e as BreError;
    }
    if (field === null) {
      expect(err).toBeUndefined();
      return;
    }
    expect(err?.code).toBe('FILES_ROOT_NEEDED');
    expect(err?.field).toBe(field);
    expect(err?.message).toMatch(
      /^the input's header \(line 1\) names .*bureau_report_path.* and the input is stdin: .* Pass --files-root DIR/,
    );
  });
});
