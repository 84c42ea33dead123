/**
 * A sampled output folder made from a full run's folder, as `bre-batch run --sample ...` would write it (the format
 * both halves of issue 25 share: manifest.json `sample`, `stratum` and `weight` on every results and errors line
 * of a sampled row), with the rows the product's own selection chooses (src/pipeline/sample.ts: the counting pass
 * over the input, bottom-k of sha256(seed, key) per stratum, src/sample/).
 *
 * A sampled run's lines are the full run's lines of its rows: the sandbox answers a row from the row alone
 * (packages/sandbox/src/logic/), so sending it among all the rows or among a fifth of them changes nothing but request
 * ids. The coverage benchmark (bench/coverage.ts) uses this to let one full run stand for hundreds of sampled
 * runs, and proves it on a few seeds by running `run --sample-share` for real; the compare tests
 * (packages/backtest/test/sampled-folders.ts) use it to make sampled folders, failed and unfinished ones included.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { loadPipeline } from '../src/config/pipeline.js';
import { resolveFilesRoot } from '../src/input/files-root.js';
import { drawSample, type DrawnSample } from '../src/pipeline/sample.js';
import { resolveSampleOptions, type SampleOptions } from '../src/sample/design.js';
import { gzPathOf, journalForm } from '@bre-batch/formats/journal-file';

/** What a sampled folder is written from: the design (manifest.json's `sample`) and each row's stratum and weight. */
export type SampleOfRows = Pick<DrawnSample, 'design' | 'of'>;

/**
 * The sample `run <pipeline> --input <input>` draws with these options (as typed: `{ sampleShare: '0.2',
 * stratifyBy: 'application_date:month', seed: 'bre-batch' }`), by the product's own code.
 */
export async function drawFromInput(
  input: string,
  options: SampleOptions,
  pipeline = 'champion_challenger',
): Promise<DrawnSample> {
  const spec = resolveSampleOptions(options);
  if (!spec) throw new Error('Expected --sample or --sample-share among the options, got neither');
  const settings = {
    pipeline: loadPipeline(pipeline),
    input,
    inputFormat: 'csv' as const,
    filesRoot: resolveFilesRoot(undefined, input),
    log: () => undefined,
    sample: spec,
  };
  return drawSample(settings, spec);
}

export interface SampledFolderOptions {
  /** Sampled rows (row numbers) whose results line goes to errors.ndjson instead: a row that failed in the challenger. */
  readonly fail?: ReadonlySet<number>;
  /** Sampled rows left out of both files: a run that has not finished. */
  readonly unprocessed?: ReadonlySet<number>;
}

/** The NDJSON lines of one of the full run's files, plain or compacted (none when it has no such file). */
function linesOf(full: string, file: string): Record<string, unknown>[] {
  const path = join(full, file);
  const form = journalForm(path);
  if (form === undefined) return [];
  const text =
    form === 'plain' ? readFileSync(path, 'utf8') : gunzipSync(readFileSync(gzPathOf(path))).toString('utf8');
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/**
 * Writes the sampled folder `out` from the full run's folder `full`: the results and errors lines of the sampled
 * rows with their stratum and weight (after `row` and `key`, as a sampled run writes them), and the full run's
 * manifest with the design as `sample`. Returns `out`.
 */
export function writeSampledFolder(
  full: string,
  out: string,
  sample: SampleOfRows,
  o: SampledFolderOptions = {},
): string {
  mkdirSync(out, { recursive: true });
  const results: string[] = [];
  const errors: string[] = [];
  const tag = (line: Record<string, unknown>): string | undefined => {
    const { row, key, ...rest } = line;
    const m = typeof row === 'number' && !o.unprocessed?.has(row) ? sample.of(row) : undefined;
    return m && JSON.stringify({ row, key, stratum: m.stratum, weight: m.weight, ...rest });
  };
  for (const line of linesOf(full, 'results.ndjson')) {
    const failed = o.fail?.has(line.row as number)
      ? {
          row: line.row,
          key: line.key,
          line: (line.row as number) + 1,
          stage: 'challenger',
          status: 503,
          code: 'SERVER_UNAVAILABLE',
          message: 'the server was unavailable after 5 attempts',
          attempts: 5,
          input: null,
        }
      : undefined;
    const text = tag(failed ?? line);
    if (text) (failed ? errors : results).push(text);
  }
  for (const line of linesOf(full, 'errors.ndjson')) {
    const text = tag(line);
    if (text) errors.push(text);
  }
  writeFileSync(join(out, 'results.ndjson'), results.map((l) => `${l}\n`).join(''));
  writeFileSync(join(out, 'errors.ndjson'), errors.map((l) => `${l}\n`).join(''));
  const manifest = JSON.parse(readFileSync(join(full, 'manifest.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(out, 'manifest.json'), `${JSON.stringify({ ...manifest, sample: sample.design }, null, 2)}\n`);
  return out;
}
