/**
 * patches/hyparquet-writer+<version>.patch (applied by patch-package in `postinstall`) repairs how
 * hyparquet-writer encodes an empty Thrift list: without it, a Parquet file with no row group (errors.parquet
 * of a run without errors, results.parquet of a run where nothing succeeded) has a footer that arrow-rs
 * (parquet-wasm, Polars, DataFusion) refuses. The patch targets one file of one release, so package.json pins
 * that release exactly; these checks fail, saying what to do, if the pin, the installed version or the
 * patched behaviour is missing (an install with --ignore-scripts skips postinstall).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeErrorFiles } from '../../src/output/spool/rebuild.js';
import { ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { readParquet } from './parquet-reader.js';

const PATCHES = readdirSync(join(ROOT, 'patches')).filter((f) => f.startsWith('hyparquet-writer+'));

describe('the hyparquet-writer patch', () => {
  it('exists once, for the exact version package.json pins and npm installed', () => {
    expect(PATCHES, 'one patch file for hyparquet-writer under patches/').toHaveLength(1);
    const patched = /^hyparquet-writer\+(.+)\.patch$/.exec(PATCHES[0])?.[1];
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(
      pkg.dependencies['hyparquet-writer'],
      'a range would let npm install a release the patch was not written against',
    ).toBe(patched);
    const installed = (
      JSON.parse(readFileSync(join(ROOT, 'node_modules', 'hyparquet-writer', 'package.json'), 'utf8')) as {
        version: string;
      }
    ).version;
    expect(
      installed,
      `installed hyparquet-writer ${installed}, patch written for ${patched}: re-check the patch against it`,
    ).toBe(patched);
  });

  it('is applied: errors.parquet of a run without errors (no row group) reads back in arrow-rs', async () => {
    const dir = tempDir('bre-pq-patch-');
    writeFileSync(join(dir, 'errors.ndjson'), '');
    expect(await writeErrorFiles(join(dir, 'errors.ndjson'), join(dir, 'errors.parquet'))).toBe(0);
    const read = await readParquet(join(dir, 'errors.parquet')).catch((err: Error) => {
      throw new Error(
        `an empty errors.parquet is unreadable by arrow-rs (${err.message}): patches/${PATCHES[0]} is not applied; ` +
          'run npm ci (its postinstall runs patch-package; --ignore-scripts skips it)',
      );
    });
    expect(read.rows).toEqual([]);
    expect(read.columns).toEqual([
      'row',
      'line',
      'key',
      'stage',
      'status',
      'code',
      'message',
      'field',
      'expected',
      'errors',
      'attempts',
      'input',
      'run_id',
      'run_session',
    ]);
  });
});
