/**
 * One measurement of bench/rebuild.ts, alone in its process so that its peak RSS is its own:
 *
 *   node --import tsx bench/rebuild-child.ts <spooled|journal> <folder> <rows>
 *
 * What it measures is the shipped build's (dist/), the code the runner runs.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { ResultLine } from '../src/output/spool/spool.js';
import { shippedModule } from './harness.js';

const { workflowResultColumns } = (await import(
  shippedModule('normalise/workflow.js')
)) as typeof import('../src/normalise/workflow.js');
const { ColumnUnion } = (await import(
  shippedModule('output/journal/columns.js')
)) as typeof import('../src/output/journal/columns.js');
const { readNdjsonBatches } = (await import(
  shippedModule('output/ndjson-file.js')
)) as typeof import('../src/output/ndjson-file.js');
const { rebuildOutputs } = (await import(
  shippedModule('output/spool/rebuild.js')
)) as typeof import('../src/output/spool/rebuild.js');
const { ResultSpool } = (await import(
  shippedModule('output/spool/spool.js')
)) as typeof import('../src/output/spool/spool.js');

const [mode, dir, count] = process.argv.slice(2);
if (mode !== 'spooled' && mode !== 'journal') throw new Error(`Expected the mode spooled or journal, got ${mode}`);
const stages = [{ id: 'location', known: workflowResultColumns() }];
const resultsPath = join(dir, 'results.ndjson');
const formats = new Set(['csv', 'parquet'] as const);
let feedSeconds: number | undefined;
const retainedMb: number[] = [];
let t0: number;
if (mode === 'spooled') {
  const union = new ColumnUnion();
  let offset = 0;
  // The spool as its thread in a run drives it (src/output/spool/worker.ts), here on this thread.
  const spool = new ResultSpool({ stateDir: join(dir, '.state'), csv: true, parquet: true, stages, union });
  let feed = 0;
  let n = 0;
  const total = Number(count ?? 0);
  // Heap left after a full collection at each quarter: flat means the spool holds nothing per row.
  const gc = (globalThis as { gc?: () => void }).gc;
  for await (const batch of readNdjsonBatches<ResultLine>(resultsPath)) {
    for (const l of batch) {
      if (!l) continue;
      n += 1;
      if (gc && total > 0 && n % Math.ceil(total / 4) === 0) {
        gc();
        retainedMb.push(Math.round(process.memoryUsage().heapUsed / 1e5) / 10);
      }
      // The journal line's length: what the run's results file would have grown by.
      const bytes = Buffer.byteLength(
        `{"row":${l.row},"key":${JSON.stringify(l.key)},"stages":${JSON.stringify(l.stages)}}\n`,
      );
      const t = performance.now();
      spool.add(l, offset, offset + bytes);
      feed += performance.now() - t;
      offset += bytes;
    }
  }
  feedSeconds = feed / 1000;
  t0 = performance.now();
  await rebuildOutputs({ dir, stages, union, spool: spool.finish(statSync(resultsPath).size), formats });
} else {
  // A resume reads the union from .state/columns.ndjson: known before the pass, as here (not timed).
  const union = new ColumnUnion();
  for await (const batch of readNdjsonBatches<ResultLine>(resultsPath))
    for (const l of batch) if (l) union.observe(l.stages);
  t0 = performance.now();
  await rebuildOutputs({ dir, stages, union, formats });
}
const seconds = (performance.now() - t0) / 1000;
process.stdout.write(JSON.stringify({ seconds, feedSeconds, maxRssKb: process.resourceUsage().maxRSS, retainedMb }));
