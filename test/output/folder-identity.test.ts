/**
 * A resume and the files root (src/output/folder-identity.ts): which changes of root are refused, table-driven, and
 * through RunOutput.open: a root given to a folder made without one is kept from then on.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { filesRootChange } from '../../src/output/folder-identity.js';
import { RunOutput } from '../../src/output/run-output.js';
import type { Manifest } from '@bre-batch/formats';
import { tempDir } from '../helpers/temp.js';

type Root = NonNullable<Manifest['input']['files_root']>;

const manifest = (root: Root | undefined): Manifest => ({
  version: 1,
  tool: 'bre-batch',
  pipeline: { name: 'p', path: '/p.yaml', sha256: 'aaa' },
  input: { path: '/in/in.csv', format: 'csv', size: 10, sha256: 'bbb', ...(root ? { files_root: root } : {}) },
  key: 'reference_id',
  shard: null,
  limit: null,
  created_at: '2026-01-01T00:00:00Z',
});

const input = (path: string): Root => ({ path, given: false });
const option = (path: string): Root => ({ path, given: true });
const none: Root = { path: null, given: false };

describe('filesRootChange', () => {
  it.each<[string, Root | undefined, Root | undefined, RegExp | null]>([
    ['the same --files-root', option('/data/files'), option('/data/files'), null],
    [
      'another --files-root',
      option('/data/files'),
      option('/data/other'),
      /read inside \/data\/files \(--files-root\), now inside \/data\/other \(--files-root\) .*give --files-root \/data\/files/,
    ],
    [
      "--files-root dropped: the input's folder",
      option('/data/files'),
      input('/in'),
      /read inside \/data\/files \(--files-root\), now inside \/in \(the input file's folder\)/,
    ],
    ['--files-root dropped: stdin', option('/data/files'), none, /now there is no files root/],
    ["the input's folder both times (the input moved with its files)", input('/in'), input('/moved'), null],
    ["the input's folder, then --files-root naming it", input('/in'), option('/in'), null],
    [
      "the input's folder, then --files-root elsewhere",
      input('/in'),
      option('/data/files'),
      /read inside \/in \(the input file's folder\), now inside \/data\/files/,
    ],
    ['no root before (nothing was read): any root', none, option('/data/files'), null],
    ['no root both times', none, none, null],
    ['a folder from before the record', undefined, option('/data/files'), null],
  ])('%s', (_name, before, now, refused) => {
    const why = filesRootChange(manifest(before), manifest(now));
    if (refused === null) expect(why).toBeUndefined();
    else expect(why).toMatch(refused);
  });
});

describe('RunOutput.open and the files root', () => {
  const open = (dir: string, root: Root) =>
    RunOutput.open(dir, manifest(root), { retryErrors: false, withTransactions: false });

  it('refuses another root; a root given to a folder made without one is kept from then on', async () => {
    const dir = tempDir('bre-out-root-');
    (await open(dir, option('/data/files'))).close();
    await expect(open(dir, option('/data/other'))).rejects.toThrow(
      /^refusing to resume into .*: its rows' files were read inside \/data\/files/,
    );
    (await open(dir, option('/data/files'))).close();

    const stdin = tempDir('bre-out-root-');
    (await open(stdin, none)).close();
    (await open(stdin, option('/data/files'))).close();
    expect(JSON.parse(readFileSync(join(stdin, 'manifest.json'), 'utf8')).input.files_root).toEqual(
      option('/data/files'),
    );
    await expect(open(stdin, option('/data/other'))).rejects.toThrow(/read inside \/data\/files/);
  });
});
