/**
 * Sampled output folders for the tests: the shipped champion_challenger sample run whole through the built CLI
 * against the built-in sandbox (once per test file), then sampled from by the selection rule the sample-run
 * branch implements (bench/sample-folder.ts): 20% of each application month, seed `bre-batch`.
 */
import { join } from 'node:path';
import { readInputKeys, selectSample, writeSampledFolder, type SampledFolderOptions, type SampleDesignSpec, type Selection } from '../../bench/sample-folder.js';
import { ROOT, runArgs, spawnCli } from '../helpers/cli.js';

export const INPUT = join(ROOT, 'samples', 'champion_challenger.csv');
export const BY_MONTH: SampleDesignSpec = { seed: 'bre-batch', share: 0.2, stratifyBy: [{ column: 'application_date', group: 'month' }] };

/** Runs the whole sample (1,500 rows, both stages) into `dir`; fails with the CLI's stderr. */
export async function fullRun(dir: string): Promise<string> {
  const run = await spawnCli(runArgs('champion_challenger', INPUT, dir, '--rate', 'off'));
  if (run.code !== 0) throw new Error(`the full run failed (${run.code}):\n${run.stderr}`);
  return dir;
}

export async function selection(spec: SampleDesignSpec = BY_MONTH): Promise<Selection> {
  const keys = await readInputKeys(INPUT, 'reference_id', spec.stratifyBy);
  return selectSample(keys, spec);
}

export function sampledFolder(full: string, out: string, sel: Selection, o: SampledFolderOptions = {}): string {
  return writeSampledFolder(full, out, sel, o);
}
