/**
 * What every family of `run`'s options shares: the ports its resolution may read through (so that it stays
 * pure and is tested option by option, test/cli/options/), and the whole-number check that quotes a value as
 * the user typed it.
 */
import type { Options } from 'yargs';
import { BreError } from '@bre-batch/core/errors';
import type { Pipeline } from '../../config/pipeline.js';
import type { FilesRoot, InputPlace } from '../../input/files-root.js';

/** Everything outside the arguments that resolving them may consult: the environment and a few reads. */
export interface OptionsContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** A shipped pipeline by name, or a pipeline file by path (src/config/pipeline.ts). */
  readonly loadPipeline: (ref: string) => Pipeline;
  /** --files-root, else the input's folder (src/input/files-root.ts: it looks the folder up on the disk). */
  readonly filesRoot: (given: string | undefined, input: InputPlace) => FilesRoot;
  /** This process's name among a job's workers (run --job: src/job/). */
  readonly workerId: () => string;
  /** A secret kept in a file only its owner may read (BRE_AUTH_TOKEN_FILE, `file:PATH` URLs). */
  readonly readSecretFile: (path: string, what: string) => string;
}

/** One group of `run --help`: its title, and its options as yargs takes them. */
export interface OptionFamily {
  readonly title: string;
  readonly options: Readonly<Record<string, Options>>;
}

/**
 * A whole number option. Declared without `type: 'number'` (yargs would turn `abc` into NaN before we see
 * it), so yargs hands over a number when the text reads as one and the text itself otherwise.
 */
export function wholeNumber(flag: string, value: unknown, range: { min: number; max?: number }): number {
  const n = typeof value === 'number' ? value : Number.NaN;
  if (Number.isInteger(n) && n >= range.min && (range.max === undefined || n <= range.max)) return n;
  const expected =
    range.max === undefined ? `a whole number >= ${range.min}` : `a whole number from ${range.min} to ${range.max}`;
  throw new BreError('USAGE', `Expected --${flag} to be ${expected}, got '${String(value)}'`, { field: flag });
}

/** A number option that need not be whole, checked by `ok`; `expected` says what it takes. */
export function numberIn(flag: string, value: unknown, expected: string, ok: (n: number) => boolean): number {
  const n = typeof value === 'number' ? value : Number.NaN;
  if (!Number.isNaN(n) && ok(n)) return n;
  throw new BreError('USAGE', `Expected --${flag} to be ${expected}, got '${String(value)}'`, { field: flag });
}
