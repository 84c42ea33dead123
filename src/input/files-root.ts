/**
 * The files root: the one folder whose files a row may name in its file columns (`bureau_report_path`,
 * `bank_data_path`). Rows often come from systems other than the batch host, so a path in a row must not
 * reach beyond the folder the user handed over: not by an absolute path elsewhere, not through `..`, not
 * through a symbolic link (real paths are compared). The user names the root once: the input file's folder
 * by default, or `--files-root DIR`, against which relative paths then resolve.
 *
 * An input without a folder (stdin; a database) has no root unless `--files-root` gives one. "No root" is a
 * state of its own, not a folder chosen for it (the working directory is not one the user handed over):
 * such a run's file columns are refused, by the header check (pipeline/input.ts) or row by row.
 *
 * `placeInRoot` is pure (where a given path lands, by its text alone, so a path leading outside costs no
 * look at the disk); `locateRowFile` adds the one look the symbolic-link check needs (realpath) and never
 * opens the file; `resolveFilesRoot` turns the option into a root when the run starts.
 */
import { realpathSync, statSync } from 'node:fs';
import { realpath as realpathAsync } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { BreError } from '@bre-batch/core/errors';

export type FilesRoot =
  | {
      readonly kind: 'folder';
      /** Absolute, as given (relative paths in rows resolve against it). */
      readonly path: string;
      /** Its real path (symbolic links resolved): what a file's real path must lie inside. */
      readonly real: string;
      /** Named by --files-root, or the input file's folder. */
      readonly given: boolean;
    }
  | {
      readonly kind: 'none';
      /** Why there is none, for messages: "the input is stdin". */
      readonly why: string;
    };

/**
 * What a run reads its rows from, as far as a files root cares: a file (its folder is the default root), stdin
 * or a database (neither has a folder).
 */
export type InputPlace = string | { readonly database: string };

/** The folder an input's files are taken from by default; null for an input that has none (stdin, a database). */
function inputFolder(input: InputPlace): string | null {
  return typeof input !== 'string' || input === '-' ? null : dirname(resolve(input));
}

/** Why an input has no folder, for messages. */
function noFolderWhy(input: InputPlace): string {
  if (typeof input !== 'string') return `the input is the database ${input.database}`;
  return input === '-' ? 'the input is stdin' : `the input ${input} has no folder`;
}

/**
 * The run's root: `--files-root` when given (USAGE, exit 2, unless it is a folder), else the input's folder,
 * else none.
 */
export function resolveFilesRoot(option: string | undefined, input: InputPlace): FilesRoot {
  if (option !== undefined) {
    const expected = (got: string) =>
      new BreError('USAGE', `Expected --files-root to be a folder, got ${got}`, {
        field: 'files-root',
        expected: 'a folder',
      });
    if (option.trim() === '') throw expected('an empty value');
    const path = resolve(option);
    let isFolder: boolean;
    try {
      isFolder = statSync(path).isDirectory();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw expected(
        `'${option}' (${code === 'ENOENT' || code === 'ENOTDIR' ? 'no such folder' : code === 'EACCES' ? 'permission denied' : (code ?? 'cannot be read')})`,
      );
    }
    if (!isFolder) throw expected(`'${option}' (a file, not a folder)`);
    return folderRoot(path, true);
  }
  const folder = inputFolder(input);
  return folder === null ? { kind: 'none', why: noFolderWhy(input) } : folderRoot(folder, false);
}

/** The root at folder `path` (made absolute; its real path looked up once). */
export function folderRoot(path: string, given: boolean): FilesRoot {
  const abs = resolve(path);
  let real = abs;
  try {
    real = realpathSync(abs);
  } catch {
    // a folder that cannot be read (the input's, gone): opening the input or a file says so in its own words
  }
  return { kind: 'folder', path: abs, real, given };
}

/** Whether `path` is `folder` or lies inside it (both absolute and normalised). */
export function isInside(folder: string, path: string): boolean {
  const rel = relative(folder, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

export type Placement =
  | { readonly ok: true; readonly path: string }
  | { readonly ok: false; readonly problem: 'no-root' | 'outside' };

/**
 * Where `given` (a row's cell) lands, by its text alone: relative paths resolve against the root; the result
 * must lie inside the root as given or as its real path (an absolute path may name the root either way).
 */
export function placeInRoot(root: FilesRoot, given: string): Placement {
  if (root.kind === 'none') return { ok: false, problem: 'no-root' };
  const path = isAbsolute(given) ? resolve(given) : resolve(root.path, given);
  return isInside(root.path, path) || isInside(root.real, path)
    ? { ok: true, path }
    : { ok: false, problem: 'outside' };
}

export type RowFileLocation =
  | { readonly ok: true; readonly path: string }
  | { readonly ok: false; readonly problem: 'no-root' | 'outside' | 'link-outside' }
  | { readonly ok: false; readonly problem: 'unreadable'; readonly errno: string };

/**
 * The real path of the file `given` names, when it lies inside the root; the file itself is not opened.
 * `realpath` is the one look at the disk (a test may count it).
 */
export async function locateRowFile(
  root: FilesRoot,
  given: string,
  realpath: (p: string) => Promise<string> = realpathAsync,
): Promise<RowFileLocation> {
  if (root.kind === 'none') return { ok: false, problem: 'no-root' };
  const placed = placeInRoot(root, given);
  if (!placed.ok) return placed;
  let real: string;
  try {
    real = await realpath(placed.path);
  } catch (err) {
    return { ok: false, problem: 'unreadable', errno: (err as NodeJS.ErrnoException).code ?? 'EINVAL' };
  }
  return isInside(root.real, real) ? { ok: true, path: real } : { ok: false, problem: 'link-outside' };
}

/** The root in words, for messages: "/data/in (the input file's folder)". */
export function describeFilesRoot(root: FilesRoot): string {
  return root.kind === 'none'
    ? `none (${root.why})`
    : `${root.path} (${root.given ? '--files-root' : "the input file's folder"})`;
}

/**
 * The header check of file columns: an input with no root whose header (CSV, Parquet) names a column of
 * file paths stops before anything is called (exit 2), rather than failing every row that uses it.
 */
export function checkFileColumns(
  names: readonly string[],
  fileColumns: readonly string[],
  root: FilesRoot,
  where: string,
): void {
  if (root.kind !== 'none') return;
  const found = fileColumns.filter((c) => names.includes(c));
  if (found.length === 0) return;
  const list = found.join(' and ');
  throw new BreError(
    'FILES_ROOT_NEEDED',
    `the input's header (${where}) names ${list}, ${found.length === 1 ? 'a column' : 'columns'} of file paths, and ${root.why}: there is no folder to read those files in. ` +
      'Pass --files-root DIR, the folder the files are in (relative paths resolve against it; no path may lead outside it)',
    { field: found[0], expected: 'a files root (--files-root DIR)' },
  );
}
