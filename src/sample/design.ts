/**
 * The options of a stratified sample (`run --sample N | --sample-share P --stratify-by ... --seed S
 * --sample-allocation ...`), as the user gives them, resolved into one complete form (`SampleSpec`) or
 * refused with "Expected X, got Y" (USAGE, exit 2) before anything is read.
 */
import { BreError } from '@bre-batch/core/errors';
import { PERIOD_UNITS, type PeriodUnit } from '@bre-batch/formats/input/period';
import type { StratifyColumn } from '@bre-batch/formats/manifest';
import { ALLOCATIONS, type Allocation } from '@bre-batch/formats/allocation';

/** The seed when --seed is not given: fixed, so that the same command draws the same sample (and recorded). */
export const DEFAULT_SEED = 'bre-batch';

/** The method, as manifest.json records it (interface: the sample design in an output folder). */
export const SAMPLE_METHOD =
  'stratified simple random sample without replacement; bottom-k of sha256(seed, key) per stratum';

/** The options as given on the command line (text as typed; undefined when absent). */
export interface SampleOptions {
  /** --sample N: rows in total. */
  readonly sample?: string | number;
  /** --sample-share P: the share of every stratum, 0 < P <= 1. */
  readonly sampleShare?: string | number;
  /** --stratify-by COL[:month|week|quarter][,COL...]; repeatable. */
  readonly stratifyBy?: string | readonly string[];
  /** --seed S (default DEFAULT_SEED). */
  readonly seed?: string | number;
  /** --sample-allocation proportional|equal (default proportional; only with --sample N). */
  readonly allocation?: string;
}

/** A resolved design: exactly one of `size` and `share` is set. */
export interface SampleSpec {
  readonly seed: string;
  /** Empty: one stratum, the whole input. */
  readonly stratifyBy: readonly StratifyColumn[];
  readonly allocation: Allocation;
  readonly size: number | null;
  readonly share: number | null;
}

const usage = (message: string, field: string) => new BreError('USAGE', message, { field });

/** A number as typed: a plain decimal (yargs may have turned it into a number already). */
function numberOf(v: string | number): number {
  if (typeof v === 'number') return v;
  return /^\s*(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$/.test(v) ? Number(v) : NaN;
}

/** `application_date:month,hist_decision` -> its columns; each column once. */
export function parseStratifyBy(given: string | readonly string[]): StratifyColumn[] {
  const parts = (typeof given === 'string' ? [given] : given).flatMap((t) => t.split(','));
  const out: StratifyColumn[] = [];
  for (const raw of parts) {
    const part = raw.trim();
    const colon = part.lastIndexOf(':');
    const column = (colon === -1 ? part : part.slice(0, colon)).trim();
    const unit =
      colon === -1
        ? null
        : part
            .slice(colon + 1)
            .trim()
            .toLowerCase();
    if (column === '')
      throw usage(
        `Expected --stratify-by to name input columns, COL[:month|week|quarter][,COL...] (e.g. application_date:month,hist_decision), got '${typeof given === 'string' ? given : given.join(',')}'`,
        'stratify-by',
      );
    if (unit !== null && !(PERIOD_UNITS as readonly string[]).includes(unit)) {
      throw usage(
        `Expected a date grouping of ${PERIOD_UNITS.join(', ')} after '${column}:' in --stratify-by, got '${part.slice(colon + 1)}'`,
        'stratify-by',
      );
    }
    if (out.some((c) => c.column === column))
      throw usage(`Expected each column once in --stratify-by, got '${column}' twice`, 'stratify-by');
    out.push({ column, group: unit as PeriodUnit | null });
  }
  return out;
}

/**
 * The design the options ask for; undefined when no sample option is given. Throws USAGE when a sample
 * option comes without --sample or --sample-share, when both are given, or a value is out of range.
 */
export function resolveSampleOptions(o: SampleOptions): SampleSpec | undefined {
  const given = (v: unknown) => v !== undefined && !(Array.isArray(v) && v.length === 0);
  const hasSize = given(o.sample);
  const hasShare = given(o.sampleShare);
  if (!hasSize && !hasShare) {
    const stray = [
      ['--stratify-by', o.stratifyBy],
      ['--seed', o.seed],
      ['--sample-allocation', o.allocation],
    ]
      .filter(([, v]) => given(v))
      .map(([n]) => n);
    if (stray.length > 0)
      throw usage(`Expected --sample N or --sample-share P with ${stray.join(' and ')}, got neither`, 'sample');
    return undefined;
  }
  if (hasSize && hasShare)
    throw usage(
      `Expected one of --sample N and --sample-share P, got both (--sample ${o.sample}, --sample-share ${o.sampleShare})`,
      'sample',
    );
  let size: number | null = null;
  let share: number | null = null;
  if (hasSize) {
    size = numberOf(o.sample!);
    if (!Number.isSafeInteger(size) || size < 1)
      throw usage(`Expected --sample to be a whole number of rows >= 1, got '${o.sample}'`, 'sample');
  } else {
    share = numberOf(o.sampleShare!);
    if (!(share > 0 && share <= 1))
      throw usage(
        `Expected --sample-share to be a share above 0 and at most 1 (0.2 = 20% of every stratum), got '${o.sampleShare}'`,
        'sample-share',
      );
  }
  const allocation = o.allocation === undefined ? 'proportional' : o.allocation.trim().toLowerCase();
  if (!(ALLOCATIONS as readonly string[]).includes(allocation))
    throw usage(
      `Expected --sample-allocation to be ${ALLOCATIONS.join(' or ')}, got '${o.allocation}'`,
      'sample-allocation',
    );
  if (allocation === 'equal' && share !== null) {
    throw usage(
      `Expected --sample-allocation equal only with --sample N, got it with --sample-share ${o.sampleShare} (a share takes the same share of every stratum: proportional by definition)`,
      'sample-allocation',
    );
  }
  const seed = o.seed === undefined ? DEFAULT_SEED : String(o.seed);
  if (seed === '') throw usage("Expected --seed to be some text (e.g. 2026-11), got ''", 'seed');
  return {
    seed,
    stratifyBy: o.stratifyBy === undefined ? [] : parseStratifyBy(o.stratifyBy),
    allocation: allocation as Allocation,
    size,
    share,
  };
}

/** The options that give this design, as a person types them (for messages). */
export function describeSampleOptions(
  spec: Pick<SampleSpec, 'seed' | 'stratifyBy' | 'allocation' | 'size' | 'share'>,
): string {
  const parts = [spec.size !== null ? `--sample ${spec.size}` : `--sample-share ${spec.share}`];
  if (spec.stratifyBy.length > 0) parts.push(`--stratify-by ${spec.stratifyBy.map(stratifyLabel).join(',')}`);
  parts.push(`--seed ${shellWord(spec.seed)}`);
  if (spec.size !== null) parts.push(`--sample-allocation ${spec.allocation}`);
  return parts.join(' ');
}

/** A word as a shell reads it back: quoted when it holds anything but plain characters. */
function shellWord(text: string): string {
  return /^[\w.:/@+-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}

/** `application_date:month` or `hist_decision`. */
export function stratifyLabel(c: StratifyColumn): string {
  return c.group ? `${c.column}:${c.group}` : c.column;
}
