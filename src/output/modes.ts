/**
 * Who may read an output folder. Results, journals and transactions hold applicants' decisions,
 * incomes and bank lines keyed by application, so every folder and file a command creates is its owner's
 * only (0700 / 0600) unless `--output-mode` opens it to a group. The mode is set once for the process as its
 * umask, before any command writes: then every file (the journals, the spool's and the sink's threads,
 * temporary files, lock files, files of libraries) gets it without each writer having to say so, and the
 * user's own umask (often 022 or 002) cannot open them wider.
 */
import { BreError } from '@bre-batch/core/errors';

/** The default: owner only. */
const DEFAULT_OUTPUT_MODE = 0o700;

/** Files that hold no personal data (report.html, the metrics file) and may be read by anyone the folder lets in. */
export const READABLE_FILE_MODE = 0o644;

let fileMode = DEFAULT_OUTPUT_MODE & 0o666;

/** `--output-mode 0750`: a folder's mode in octal; the owner keeps rwx (the run must write and list it). */
export function parseOutputMode(text: unknown): number {
  if (text === undefined) return DEFAULT_OUTPUT_MODE;
  const s = String(text).trim();
  if (!/^0?[0-7]{3}$/.test(s))
    throw new BreError('USAGE', `Expected --output-mode to be a folder mode in octal such as 0700 or 0750, got '${s}'`);
  const mode = Number.parseInt(s, 8);
  if ((mode & 0o700) !== 0o700)
    throw new BreError(
      'USAGE',
      `Expected --output-mode to keep the owner's rwx (07xx, the run writes the folder), got '${s}'`,
    );
  return mode;
}

/** The mode of a folder `mode` gives to its files: the folder's bits without execute. */
function fileModeOf(mode: number): number {
  return mode & 0o666;
}

/** Sets the process's umask so that new folders get `mode` and new files `fileModeOf(mode)`. */
export function applyOutputMode(mode: number): void {
  process.umask(~mode & 0o777);
  fileMode = fileModeOf(mode);
}

/** The mode new files get (for a file replaced by one whose mode is set explicitly). */
export function outputFileMode(): number {
  return fileMode;
}
