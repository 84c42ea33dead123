/**
 * The counting pass of a sampled run (`run --sample`, `--plan`, `--dry-run`): before any call, the input is
 * read locally, with the same reader and reading options as the run (./input.ts: the header check included),
 * twice: once to count the rows of each stratum (N_h), once to keep each stratum's n_h rows of smallest
 * sha256(seed, key) (src/sample/draw.ts says why twice; memory: the strata and the sample, never the input).
 * Up to --limit: the sample is drawn from the first N rows.
 *
 * Every session draws again, and every --shard worker draws the whole input's sample and then runs its shard
 * of it. The draw is a function of the input's bytes, the reading options, the key column and the sample
 * options, all of which the manifest holds and a resume must match (the input's sha256 included), so a
 * resume chooses the keys the first session chose without keeping them: nothing under .state/ can be lost
 * or go stale, and a folder copied elsewhere resumes as well. The cost is one local read of the input per
 * session, small beside the calls at the documented limits (docs/backtesting.md: the counting pass).
 */
import { BreError, isBreError } from '@bre-batch/core/errors';
import { getField } from '@bre-batch/formats/input/fields';
import { rowKey } from '../input/shard.js';
import type { SampleDesign } from '@bre-batch/formats/manifest';
import { SampleDraw, StrataCount, weightOf } from '../sample/draw.js';
import type { SampleSpec } from '../sample/design.js';
import { stratumValues } from '../sample/strata.js';
import type { InputRow } from '@bre-batch/core/types';
import { openInput, type InputSettings } from './input.js';
import type { RunSettings } from './settings.js';

/** What drawing a sample reads of a run's settings: the input and how it is read, up to --limit. */
export type DrawSettings = InputSettings & Pick<RunSettings, 'limit'>;

/** What a sampled row carries in results and errors (interface: the sample design in an output folder). */
export interface SampleMembership {
  readonly stratum: string;
  /** N_h / n_h. */
  readonly weight: number;
}

export interface DrawnSample {
  readonly design: SampleDesign;
  /** Row number -> index of its stratum in `design.strata`: the rows the run sends. */
  readonly chosen: ReadonlyMap<number, number>;
  /** Rows that have no key (errors of the run, SAMPLE_NO_KEY) and rows that cannot be read (MALFORMED_ROW). */
  readonly withoutKey: number;
  readonly unreadable: number;
  /** Stratum and weight of a chosen row; undefined for any other. */
  of(row: number): SampleMembership | undefined;
}

/**
 * Each row of the input up to --limit, a batch at a time, through the run's own reader. A failure to read
 * (or an input that changed between the reads) is INPUT_UNREADABLE: nothing has been called or written.
 */
async function eachRow(s: DrawSettings, visit: (row: InputRow) => void): Promise<void> {
  const { reader, first, db } = await openInput(s, () => undefined);
  try {
    for (let next = first; !next.done; next = await reader.next()) {
      for (const row of next.value) {
        if (s.limit !== undefined && row.row > s.limit) return;
        visit(row);
      }
    }
  } catch (err) {
    if (isBreError(err)) throw err;
    throw new BreError('INPUT_UNREADABLE', `cannot draw the sample from ${s.input}: ${(err as Error).message}`, {
      cause: err,
    });
  } finally {
    await reader.return(undefined);
    // A database input's connection is the caller's to close (./input.ts).
    await db?.source.close();
  }
}

/**
 * Draws the sample `spec` asks for from the run's input. USAGE (exit 2) for stdin (it cannot be read before
 * the run), and for an NDJSON input in which no row has a --stratify-by column (a CSV or Parquet header
 * without it fails the header check first, INPUT_HEADER).
 */
export async function drawSample(s: DrawSettings, spec: SampleSpec): Promise<DrawnSample> {
  if (s.input === '-')
    throw new BreError(
      'USAGE',
      'Expected --input to be a file with --sample or --sample-share, got - (stdin): the sample is drawn by reading the input before the run, which stdin allows only once',
      { field: 'input' },
    );
  const key = s.pipeline.key;
  const count = new StrataCount();
  const seen = spec.stratifyBy.map(() => false);
  let withoutKey = 0;
  let unreadable = 0;
  let rows = 0;
  await eachRow(s, (row) => {
    rows += 1;
    if (row.readError) {
      unreadable += 1;
      return;
    }
    spec.stratifyBy.forEach((c, i) => {
      if (!seen[i] && (Object.hasOwn(row.data, c.column) || getField(row.data, c.column) !== undefined)) seen[i] = true;
    });
    if (rowKey(row, key) === null) withoutKey += 1;
    else count.add(stratumValues(row.data, spec.stratifyBy));
  });
  const never = spec.stratifyBy.filter((_, i) => !seen[i]).map((c) => c.column);
  if (never.length > 0 && rows > 0) {
    throw new BreError(
      'USAGE',
      `Expected every --stratify-by column in the input's rows, got ${never.map((c) => `'${c}'`).join(' and ')} in none of its ${rows} rows: check the spelling (names are matched as written)`,
      { field: 'stratify-by' },
    );
  }
  const design = count.design(spec);
  const draw = new SampleDraw(design);
  await eachRow(s, (row) => {
    if (row.readError) return;
    const k = rowKey(row, key);
    if (k !== null) draw.offer(stratumValues(row.data, spec.stratifyBy), k, row.row);
  });
  const chosen = draw.chosen();
  const members = design.strata.map((st): SampleMembership => ({ stratum: st.name, weight: weightOf(st) }));
  return {
    design,
    chosen,
    withoutKey,
    unreadable,
    of: (row) => {
      const i = chosen.get(row);
      return i === undefined ? undefined : members[i];
    },
  };
}
