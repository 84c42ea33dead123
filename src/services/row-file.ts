/**
 * A file a row names (a bureau report by `bureau_report_path`, bank data by `bank_data_path`), read the one
 * way both columns share: the path is placed inside the run's files root first (../input/files-root.ts), so a
 * path leading outside it is that row's error and the file is never opened; then the file is read once per
 * run (./bureau/file-cache.ts, by its real path) and analysed by `transform`. Both the look-up and the read
 * are kept in the cache: many rows name one file.
 */
import type { FieldError } from '../input/validation.js';
import { describeValue } from '../input/coerce.js';
import type { FieldValue } from '@bre-batch/formats/input/fields';
import { describeFilesRoot, locateRowFile, type FilesRoot } from '../input/files-root.js';
import { sharedFileCache, type FileCache } from './bureau/file-cache.js';

export interface RowFileOptions {
  readonly filesRoot: FilesRoot;
  readonly cache?: FileCache;
}

export interface RowFileRequest<T> {
  /** What the file is, for messages: "bureau report", "bank data". */
  readonly what: string;
  /** What the column holds, in words: "the path of a readable bureau report file". */
  readonly expected: string;
  /** The cache's entry kind (a report and bank data of one file are analysed differently). */
  readonly kind: string;
  readonly transform: (bytes: Buffer) => T;
}

export type RowFileResult<T> =
  | { readonly ok: true; readonly value: T; readonly given: string }
  | { readonly ok: false; readonly error: FieldError };

function readFailure(code: string | undefined): string {
  switch (code) {
    case 'ENOENT':
      return 'no such file';
    case 'ENOTDIR':
      return 'no such file (a part of the path is a file)';
    case 'EISDIR':
      return 'it is a folder';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ELOOP':
      return 'too many symbolic links';
    case 'ERR_INVALID_ARG_VALUE':
    case 'ERR_INVALID_ARG_TYPE':
      return 'not a file path';
    default:
      return code ?? 'read failed';
  }
}

/** The file `field` names, inside the root, analysed; or the row's one error about it. */
export async function readRowFile<T>(
  field: FieldValue,
  req: RowFileRequest<T>,
  opts: RowFileOptions,
): Promise<RowFileResult<T>> {
  const column = field.column;
  const root = opts.filesRoot;
  const expected = req.expected;
  if (typeof field.value !== 'string') {
    return {
      ok: false,
      error: {
        field: column,
        expected,
        message: `${column}: Expected ${expected}, got ${describeValue(field.value)}`,
        code: 'REPORT_UNREADABLE',
      },
    };
  }
  const given = field.value.trim();
  const unreadable = (errno: string | undefined) => ({
    ok: false as const,
    error: {
      field: column,
      expected,
      code: 'REPORT_UNREADABLE' as const,
      message: `${column}: cannot read ${req.what} file '${given}' (${readFailure(errno)})`,
    },
  });
  const cache = opts.cache ?? sharedFileCache;
  const where =
    root.kind === 'none'
      ? await locateRowFile(root, given)
      : await cache.locate(`${root.path}\0${root.real}\0${given}`, () => locateRowFile(root, given));
  if (!where.ok) {
    switch (where.problem) {
      case 'no-root':
        return {
          ok: false,
          error: {
            field: column,
            expected: 'a files root (--files-root DIR)',
            code: 'FILES_ROOT_NEEDED',
            message: `${column}: '${given}' was not read: a file column needs a files root and ${root.kind === 'none' ? root.why : 'there is none'}; pass --files-root DIR, the folder the files are in`,
          },
        };
      case 'outside':
      case 'link-outside':
        return {
          ok: false,
          error: {
            field: column,
            expected: `a path inside the files root ${describeFilesRoot(root)}`,
            code: 'FILE_OUTSIDE_ROOT',
            message: `${column}: '${given}' leads outside the files root ${describeFilesRoot(root)}${where.problem === 'link-outside' ? ' through a symbolic link' : ''}; the file was not read. Put the file inside the root, or name the folder that holds the files with --files-root`,
          },
        };
      case 'unreadable':
        return unreadable(where.errno);
    }
  }
  try {
    const value = await cache.get(where.path, req.kind, req.transform);
    return { ok: true, value, given };
  } catch (err) {
    return unreadable((err as NodeJS.ErrnoException).code);
  }
}
