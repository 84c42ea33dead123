/**
 * One measurement of bench/rebuild.ts, alone in its process so that its peak RSS is its own:
 *
 *   node --import tsx bench/rebuild-child.ts <spooled|resumed|journal> <folder> <rows> [<session start>]
 *
 * What it measures is the shipped build's (dist/), the code the runner runs.
 */
import { createReadStream, statSync } from 'node:fs';
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
const { readLineBatches } = (await import(shippedModule('input/lines.js'))) as typeof import('../src/input/lines.js');
const { rebuildOutputs } = (await import(
  shippedModule('output/spool/rebuild.js')
)) as typeof import('../src/output/spool/rebuild.js');
const { ResultSpool } = (await import(
  shippedModule('output/spool/spool.js')
)) as typeof import('../src/output/spool/spool.js');

const [mode, dir, count, sessionStartArg] = process.argv.slice(2);
if (mode !== 'spooled' && mode !== 'resumed' && mode !== 'journal')
  throw new Error(`Expected the mode spooled, resumed or journal, got ${mode}`);
// Resumed: where this session's lines start in results.ndjson (those before are an earlier session's).
const sessionStart = mode === 'resumed' ? Number(sessionStartArg) : 0;
const stages = [{ id: 'location', known: workflowResultColumns() }];
const resultsPath = join(dir, 'results.ndjson');
const formats = new Set(['csv', 'parquet'] as const);
let feedSeconds: number | undefined;
const retainedMb: number[] = [];
let t0: number;
// CPU time of the timed part too: on the shared machine, wall clock says more about the load than the code.
let cpu0: NodeJS.CpuUsage;
if (mode === 'spooled' || mode === 'resumed') {
  const union = new ColumnUnion();
  let offset = 0;
  // The spool as its thread in a run drives it (src/output/spool/worker.ts), here on this thread.
  const spool = new ResultSpool({ stateDir: join(dir, '.state'), csv: true, parquet: true, stages, union });
  let feed = 0;
  let n = 0;
  const total = Number(count ?? 0) - (mode === 'resumed' ? Number(count ?? 0) >> 1 : 0);
  // Heap left after a full collection at each quarter: flat means the spool holds nothing per row.
  const gc = (globalThis as { gc?: () => void }).gc;
  for await (const batch of readNdjsonBatches<ResultLine>(resultsPath)) {
    for (const l of batch) {
      if (!l) continue;
      // The journal line's length: what the run's results file would have grown by.
      const bytes = Buffer.byteLength(
        `{"row":${l.row},"key":${JSON.stringify(l.key)},"stages":${JSON.stringify(l.stages)}}\n`,
      );
      if (offset < sessionStart) {
        // An earlier session's line: in the union the run reads from .state/columns.ndjson, not spooled.
        union.observe(l.stages);
        offset += bytes;
        continue;
      }
      n += 1;
      if (gc && total > 0 && n % Math.ceil(total / 4) === 0) {
        gc();
        retainedMb.push(Math.round(process.memoryUsage().heapUsed / 1e5) / 10);
      }
      const t = performance.now();
      spool.add(l, offset, offset + bytes);
      feed += performance.now() - t;
      offset += bytes;
    }
  }
  feedSeconds = feed / 1000;
  t0 = performance.now();
  cpu0 = process.cpuUsage();
  // As the run's end calls it (src/output/run-output.ts rebuild): the earlier sessions' lines are visited.
  let earlier = 0;
  await rebuildOutputs({
    dir,
    stages,
    union,
    spool: spool.finish(statSync(resultsPath).size),
    formats,
    visitResult: () => (earlier += 1),
    visitResultsBefore: sessionStart,
  });
  if (mode === 'resumed' && earlier !== Number(count) >> 1)
    throw new Error(`Expected ${Number(count) >> 1} rows of the earlier session visited, got ${earlier}`);
} else {
  // A resume reads the union from .state/columns.ndjson: known before the pass, as here (not timed).
  const union = new ColumnUnion();
  for await (const batch of readNdjsonBatches<ResultLine>(resultsPath))
    for (const l of batch) if (l) union.observe(l.stages);
  t0 = performance.now();
  cpu0 = process.cpuUsage();
  await rebuildOutputs({ dir, stages, union, formats });
}
const seconds = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
const cpuSeconds = (cpu.user + cpu.system) / 1e6;
// Not timed: results.csv holds every row once, in row order, whatever the mode.
let expected = 1;
for await (const lines of readLineBatches(createReadStream(join(dir, 'results.csv')), 1 << 20))
  for (const l of lines) {
    if (l.text === '' || l.text.startsWith('row,')) continue;
    const row = Number(l.text.slice(0, l.text.indexOf(',')));
    if (row !== expected) throw new Error(`results.csv (${mode}): expected row ${expected}, got ${row}`);
    expected += 1;
  }
if (expected - 1 !== Number(count)) throw new Error(`results.csv (${mode}): ${expected - 1} rows of ${count}`);
process.stdout.write(
  JSON.stringify({ seconds, cpuSeconds, feedSeconds, maxRssKb: process.resourceUsage().maxRSS, retainedMb }),
);
