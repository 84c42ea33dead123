/**
 * One measurement of bench/rebuild.ts, alone in its process so that its peak RSS is its own:
 *
 *   node --import tsx bench/rebuild-child.ts <spooled|resumed|journal> <folder> <rows> [<session start>]
 *
 * What it measures is the shipped build's (dist/), the code the runner runs. As in a run, the spool is fed on
 * a thread of its own, with the heap limits the run gives its spool's thread (src/output/spool/thread.ts), and
 * the end runs on the main thread: the peak RSS is the two threads', as a run's is.
 */
import { once } from 'node:events';
import { createReadStream, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { ColumnChange } from '../src/output/journal/columns.js';
import type { ResultLine, SpoolContents } from '../src/output/spool/spool.js';
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

type Mode = 'spooled' | 'resumed' | 'journal';
const stages = [{ id: 'location', known: workflowResultColumns() }];

interface Fed {
  readonly contents: SpoolContents;
  /** The union after the feed (the run's own union has seen the same lines). */
  readonly union: readonly ColumnChange[];
  readonly feedSeconds: number;
  readonly retainedMb: readonly number[];
}

/**
 * The spool fed as its thread in a run feeds it (src/output/spool/worker.ts), with each journal line's byte
 * range; for a resumed run, the earlier session's lines only observed by the union (in a run, the union read
 * from .state/columns.ndjson), not spooled.
 */
async function feed(mode: Mode, dir: string, count: number, sessionStart: number): Promise<Fed> {
  const { ResultSpool } = (await import(
    shippedModule('output/spool/spool.js')
  )) as typeof import('../src/output/spool/spool.js');
  const resultsPath = join(dir, 'results.ndjson');
  const union = new ColumnUnion();
  let offset = 0;
  const spool = new ResultSpool({ stateDir: join(dir, '.state'), csv: true, parquet: true, stages, union });
  let fed = 0;
  let n = 0;
  const retainedMb: number[] = [];
  const total = count - (mode === 'resumed' ? count >> 1 : 0);
  // Heap of this thread left after a full collection at each quarter: flat means the spool holds nothing per row.
  const gc = (globalThis as { gc?: () => void }).gc;
  for await (const batch of readNdjsonBatches<ResultLine>(resultsPath)) {
    for (const l of batch) {
      if (!l) continue;
      // The journal line's length: what the run's results file would have grown by.
      const bytes = Buffer.byteLength(
        `{"row":${l.row},"key":${JSON.stringify(l.key)},"stages":${JSON.stringify(l.stages)}}\n`,
      );
      if (offset < sessionStart) {
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
      fed += performance.now() - t;
      offset += bytes;
    }
  }
  const contents = spool.finish(statSync(resultsPath).size);
  return { contents, union: [...union.entries()], feedSeconds: fed / 1000, retainedMb };
}

/** The feed on a thread with the spool's thread's heap limits, as in a run. */
async function feedOnThread(mode: Mode, dir: string, count: number, sessionStart: number): Promise<Fed> {
  const { SPOOL_RESOURCE_LIMITS } = (await import(
    shippedModule('output/spool/thread.js')
  )) as typeof import('../src/output/spool/thread.js');
  // A thread does not inherit tsx's loader: it registers it first (as src/output/worker-thread.ts does).
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api')).href.replace(/\.cjs$/, '.mjs');
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(import.meta.url)}); });`;
  const worker = new Worker(boot, {
    eval: true,
    workerData: { mode, dir, count, sessionStart },
    resourceLimits: SPOOL_RESOURCE_LIMITS,
  });
  let fed: Fed | undefined;
  worker.once('message', (m: Fed) => (fed = m));
  // Its exit awaited too: the end's CPU time is the process's, and the thread is gone by then.
  const [code] = (await once(worker, 'exit')) as [number];
  if (!fed) throw new Error(`the feed's thread exited (${code}) before it was done`);
  return fed;
}

async function main(): Promise<void> {
  const { rebuildOutputs } = (await import(
    shippedModule('output/spool/rebuild.js')
  )) as typeof import('../src/output/spool/rebuild.js');
  const [mode, dir, count, sessionStartArg] = process.argv.slice(2);
  if (mode !== 'spooled' && mode !== 'resumed' && mode !== 'journal')
    throw new Error(`Expected the mode spooled, resumed or journal, got ${mode}`);
  // Resumed: where this session's lines start in results.ndjson (those before are an earlier session's).
  const sessionStart = mode === 'resumed' ? Number(sessionStartArg) : 0;
  const resultsPath = join(dir, 'results.ndjson');
  const formats = new Set(['csv', 'parquet'] as const);
  let feedSeconds: number | undefined;
  let retainedMb: readonly number[] = [];
  let t0: number;
  // CPU time of the timed part too: on the shared machine, wall clock says more about the load than the code.
  let cpu0: NodeJS.CpuUsage;
  if (mode === 'spooled' || mode === 'resumed') {
    const fed = await feedOnThread(mode, dir, Number(count), sessionStart);
    feedSeconds = fed.feedSeconds;
    retainedMb = fed.retainedMb;
    const union = new ColumnUnion();
    for (const c of fed.union) union.add(c.stage, c.field, c.types);
    t0 = performance.now();
    cpu0 = process.cpuUsage();
    // As the run's end calls it (src/output/run-output.ts rebuild): the earlier sessions' lines are visited.
    let earlier = 0;
    await rebuildOutputs({
      dir,
      stages,
      union,
      spool: fed.contents,
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
  const { readLineBatches } = (await import(shippedModule('input/lines.js'))) as typeof import('../src/input/lines.js');
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
}

if (isMainThread) await main();
else {
  const d = workerData as { mode: Mode; dir: string; count: number; sessionStart: number };
  parentPort!.postMessage(await feed(d.mode, d.dir, d.count, d.sessionStart));
}
