/**
 * Sampled output folders for the tests: the shipped champion_challenger sample run whole through the built CLI
 * (in the test's process) against the built-in sandbox (once per test file), then sampled from with the product's own selection
 * (src/pipeline/sample.ts, through bench/sample-folder.ts): 20% of each application month, seed `bre-batch`.
 */
import { join } from 'node:path';
import { drawFromInput } from '../../../bench/sample-folder.js';
import type { DrawnSample } from '../../../src/pipeline/sample.js';
import type { SampleOptions } from '../../../src/sample/design.js';
import { ROOT, runArgs } from '../../../test/helpers/cli.js';
import { runInProcess } from '../../../test/helpers/cli-in-process.js';

export { writeSampledFolder } from '../../../bench/sample-folder.js';

export const INPUT = join(ROOT, 'samples', 'champion_challenger.csv');
/** `--sample-share 0.2 --stratify-by application_date:month --seed bre-batch`. */
export const BY_MONTH: SampleOptions = { sampleShare: '0.2', stratifyBy: 'application_date:month', seed: 'bre-batch' };

/** Runs the whole sample (1,500 rows, both stages) into `dir`; fails with the CLI's stderr. */
export async function fullRun(dir: string): Promise<string> {
  const run = await runInProcess(runArgs('champion_challenger', INPUT, dir, '--rate', 'off'));
  if (run.code !== 0) throw new Error(`the full run failed (${run.code}):\n${run.stderr}`);
  return dir;
}

/** The sample `run champion_challenger --input samples/champion_challenger.csv` draws with these options. */
export function selection(options: SampleOptions = BY_MONTH): Promise<DrawnSample> {
  return drawFromInput(INPUT, options);
}

/** The chosen rows of one stratum, smallest hash first. */
export function rowsOf(sample: DrawnSample, stratum: string): number[] {
  return [...sample.chosen.keys()].filter((row) => sample.of(row)?.stratum === stratum);
}
