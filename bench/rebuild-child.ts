/**
 * One measurement of bench/rebuild.ts, alone in its process so that its peak RSS is its own:
 *
 *   node --import tsx bench/rebuild-child.ts <spooled|resumed|killed|journal|earlier> <folder> <rows> [<session start>]
 *
 * (`earlier`: the end of a resumed run's earlier session, which `resumed` then measures the next end after.)
 *
 * What it measures is the shipped build's (dist/), the code the runner runs. As in a run, the spool is fed on
 * a thread of its own, with the heap limits the run gives its spool's thread (src/output/spool/spool-thread.ts), and
 * the end runs on the main thread: the peak RSS is the two threads', as a run's is.
 */
import { once } from 'node:events';
import { closeSync, createReadStream, openSync, readSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
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
  shippedModule('ndjson-file.js', 'formats')
)) as typeof import('@bre-batch/formats/ndjson-file');

type Mode = 'spooled' | 'resumed' | 'killed' | 'journal';
/** summary.json's decisions as a run keeps them (src/stages/decisions.ts), here of the one workflow stage. */
const DECISION_STAGES = [{ id: 'location', kind: 'workflow' }];
/** The spools' ids in their files' names: this session's, and the killed earlier session's. */
const SESSION_ID = 'session';
const KILLED_ID = 'killed';
const stages = [{ id: 'location', known: workflowResultColumns().map((f) => f.name) }];

interface Fed {
  readonly contents: SpoolContents;
  /** The union after the feed (the run's own union has seen the same lines). */
  readonly union: readonly ColumnChange[];
  readonly feedSeconds: number;
  readonly retainedMb: readonly number[];
}

/**
 * The spool fed as its thread in a run feeds it (src/output/spool/spool-worker.ts), with each journal line's byte
 * range; for a resumed run, the earlier session's lines only observed by the union (in a run, the union read
 * from .state/columns.ndjson), not spooled.
 */
async function feed(mode: Mode, dir: string, count: number, sessionStart: number): Promise<Fed> {
  const { ResultSpool } = (await import(
    shippedModule('output/spool/spool.js')
  )) as typeof import('../src/output/spool/spool.js');
  const { SpoolRecorder } = (await import(
    shippedModule('output/spool/records.js')
  )) as typeof import('../src/output/spool/records.js');
  const { DecisionCounter } = (await import(
    shippedModule('stages/index.js')
  )) as typeof import('../src/stages/index.js');
  const resultsPath = join(dir, 'results.ndjson');
  const stateDir = join(dir, '.state');
  const union = new ColumnUnion();
  let offset = 0;
  // Killed: the earlier session's spool, with its records, as its thread left it at the kill (never finished).
  const killed =
    mode === 'killed'
      ? new ResultSpool({
          stateDir,
          csv: true,
          parquet: true,
          stages,
          union: new ColumnUnion(),
          id: KILLED_ID,
          recorder: new SpoolRecorder(stateDir, KILLED_ID, resultsPath, 0),
          tally: () => new DecisionCounter(DECISION_STAGES),
        })
      : undefined;
  const spool = new ResultSpool({ stateDir, csv: true, parquet: true, stages, union, id: SESSION_ID }, sessionStart);
  let fed = 0;
  let n = 0;
  const retainedMb: number[] = [];
  const total = count - (mode === 'resumed' || mode === 'killed' ? count >> 1 : 0);
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
        killed?.add(l, offset, offset + bytes);
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
    shippedModule('output/spool/spool-thread.js')
  )) as typeof import('../src/output/spool/spool-thread.js');
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

/** Bytes [from, to) of `src` appended to `dest` (a new file when `from` is 0). */
function copyBytes(src: string, dest: string, from: number, to: number): void {
  const a = openSync(src, 'r');
  const b = openSync(dest, from === 0 ? 'w' : 'a');
  const buf = Buffer.allocUnsafe(1 << 20);
  for (let at = from; at < to; ) {
    const n = readSync(a, buf, 0, Math.min(buf.length, to - at), at);
    for (let off = 0; off < n; ) off += writeSync(b, buf, off, n - off);
    at += n;
  }
  closeSync(a);
  closeSync(b);
}

/**
 * The end of the earlier session of a run stopped half-way (not timed): results.ndjson as it was then
 * (its first `sessionStart` bytes), its results files and their index written as the run's end writes them.
 */
async function earlierEnd(dir: string, sessionStart: number): Promise<void> {
  const { rebuildOutputs } = (await import(
    shippedModule('output/spool/rebuild.js')
  )) as typeof import('../src/output/spool/rebuild.js');
  const resultsPath = join(dir, 'results.ndjson');
  const whole = join(dir, 'results.whole.ndjson');
  renameSync(resultsPath, whole);
  copyBytes(whole, resultsPath, 0, sessionStart);
  const union = new ColumnUnion();
  for await (const batch of readNdjsonBatches<ResultLine>(resultsPath))
    for (const l of batch) if (l) union.observe(l.stages);
  const { DecisionCounter } = (await import(
    shippedModule('stages/index.js')
  )) as typeof import('../src/stages/index.js');
  const tally = new DecisionCounter(DECISION_STAGES);
  await rebuildOutputs({
    dir,
    stages,
    union,
    formats: new Set(['csv', 'parquet'] as const),
    visitResult: (line) => tally.add(line.stages),
    tally,
  });
  copyBytes(whole, resultsPath, sessionStart, statSync(whole).size);
  rmSync(whole);
}

async function main(): Promise<void> {
  const { rebuildOnThread } = (await import(
    shippedModule('output/spool/rebuild-thread.js')
  )) as typeof import('../src/output/spool/rebuild-thread.js');
  const { DecisionCounter } = (await import(
    shippedModule('stages/index.js')
  )) as typeof import('../src/stages/index.js');
  const [mode, dir, count, sessionStartArg] = process.argv.slice(2);
  if (mode === 'earlier') return earlierEnd(dir, Number(sessionStartArg));
  if (mode !== 'spooled' && mode !== 'resumed' && mode !== 'killed' && mode !== 'journal')
    throw new Error(`Expected the mode spooled, resumed, killed or journal, got ${mode}`);
  // Resumed, killed: where this session's lines start in results.ndjson (those before are an earlier session's,
  // which ended with its results files written, or was killed before its end).
  const sessionStart = mode === 'resumed' || mode === 'killed' ? Number(sessionStartArg) : 0;
  const resultsPath = join(dir, 'results.ndjson');
  const formats = new Set(['csv', 'parquet'] as const);
  let feedSeconds: number | undefined;
  let retainedMb: readonly number[] = [];
  let t0: number;
  // CPU time of the timed part too: on the shared machine, wall clock says more about the load than the code.
  let cpu0: NodeJS.CpuUsage;
  // Peak RSS before the timed end (the feed's thread, the union): what the end adds is the rest.
  let rssBeforeEnd = 0;
  // Rows the end used as they were written (spooled, an earlier end's, a killed session's recorded chunks).
  let copied = 0;
  if (mode !== 'journal') {
    const fed = await feedOnThread(mode, dir, Number(count), sessionStart);
    feedSeconds = fed.feedSeconds;
    retainedMb = fed.retainedMb;
    const union = new ColumnUnion();
    for (const c of fed.union) union.add(c.stage, c.field, c.types);
    rssBeforeEnd = process.resourceUsage().maxRSS;
    t0 = performance.now();
    cpu0 = process.cpuUsage();
    // As the run's end calls it (src/output/run-output.ts rebuild), on the rebuild's thread: the earlier sessions'
    // lines are visited (their decisions counted), or their counts taken from the index of the results files
    // their end wrote.
    const decisions = new DecisionCounter(DECISION_STAGES);
    const done = await rebuildOnThread({
      dir,
      stages,
      union,
      spool: fed.contents,
      formats,
      visitResultsBefore: sessionStart,
      decisions,
      recorded: { except: SESSION_ID },
    });
    copied = done.copied;
    const counted = Object.values(decisions.counts.location ?? {}).reduce((a, b) => a + b, 0);
    if (mode !== 'spooled' && counted !== Number(count) >> 1)
      throw new Error(`Expected ${Number(count) >> 1} rows of the earlier session counted, got ${counted}`);
  } else {
    // A resume reads the union from .state/columns.ndjson: known before the pass, as here (not timed).
    const union = new ColumnUnion();
    for await (const batch of readNdjsonBatches<ResultLine>(resultsPath))
      for (const l of batch) if (l) union.observe(l.stages);
    rssBeforeEnd = process.resourceUsage().maxRSS;
    t0 = performance.now();
    cpu0 = process.cpuUsage();
    copied = (await rebuildOnThread({ dir, stages, union, formats })).copied;
  }
  const seconds = (performance.now() - t0) / 1000;
  const { ResultSpool } = (await import(
    shippedModule('output/spool/spool.js')
  )) as typeof import('../src/output/spool/spool.js');
  // As the run's end does, after it (not timed): every session's spool files removed.
  ResultSpool.clean(join(dir, '.state'));
  const beforeEndRssKb = rssBeforeEnd;
  const cpu = process.cpuUsage(cpu0);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  // Not timed: results.csv holds every row once, in row order, whatever the mode.
  const { readLineBatches } = (await import(
    shippedModule('input/lines.js', 'formats')
  )) as typeof import('@bre-batch/formats/input/lines');
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
    JSON.stringify({
      seconds,
      cpuSeconds,
      feedSeconds,
      maxRssKb: process.resourceUsage().maxRSS,
      beforeEndRssKb,
      retainedMb,
      copied,
    }),
  );
}

if (isMainThread) await main();
else {
  const d = workerData as { mode: Mode; dir: string; count: number; sessionStart: number };
  parentPort!.postMessage(await feed(d.mode, d.dir, d.count, d.sessionStart));
}
