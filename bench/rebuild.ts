/**
 * The end of a run (issue 13: bounded memory; issue 16: the wait after the last answer). In a child process
 * per size, over a results.ndjson of `location` results:
 * - `spooled`: what an uninterrupted run does. The journal's lines are fed to the spool with their byte
 *   ranges as its thread does in a run (src/output/spool/spool-worker.ts; here on a thread of the child's with the
 *   heap limits of the run's spool thread, the parse not timed), then the end is timed as the run does it, on the
 *   rebuild's thread (src/output/spool/rebuild-thread.ts): results.csv and results.parquet assembled, errors.parquet written;
 * - `resumed`: the end of a run stopped half-way and resumed: the first half of the journal's lines are an
 *   earlier session's, whose end (not timed) wrote results.csv, results.parquet and their index, used by this
 *   end where no row of this session falls in their chunks; the second half this session's, fed to its
 *   spool as in `spooled`; the rows a stop left in flight (up to `jitter` places late) are among this
 *   session's, so the two halves' rows interleave where they meet;
 * - `killed`: the same, but the earlier session was killed before its end (no results files, no index): its
 *   spool's files are left with its records (src/output/spool/records.ts), the chunks it wrote before the kill,
 *   which the end copies; the rows its reorder buffer still held are read from the journal and encoded;
 * - `journal`: the same end with no spool at all (a folder whose spool was lost with its process): both files
 *   rebuilt from results.ndjson alone (the column union known from .state/columns.ndjson, so one pass).
 * Peak RSS is the child's (getrusage maxRSS: both its threads, as a run's is), and the spooled run also says
 * the heap of the spool's thread left after a full collection at each quarter of its feed (flat: the spool
 * keeps nothing per row; RSS above that is how much garbage V8 lets pile up). The figures that matter: seconds per million rows of the spooled end,
 * and peak RSS of the larger size over the smaller (flat: about 1).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { benchScriptArgs, ratio } from './harness.js';

type RebuildMode = 'spooled' | 'resumed' | 'killed' | 'journal';

export interface RebuildRun {
  readonly rows: number;
  readonly mode: RebuildMode;
  /** The timed part: the end of the run (spooled, resumed), or the whole rebuild (journal). */
  readonly seconds: number;
  readonly secondsPerMillion: number;
  /** CPU time (user + system, every thread of the process) of the timed part, per million rows. */
  readonly cpuSecondsPerMillion: number;
  /**
   * Spooled and resumed: the time spent feeding the spool, per million rows of the session (spread over the
   * run, on the spool's own thread).
   */
  readonly feedSecondsPerMillion?: number;
  readonly peakRssMb: number;
  /** Peak RSS before the timed end began (the feed's thread, the union): the end's own is the rest. */
  readonly peakRssBeforeEndMb: number;
  /** Rows of the results files the end used as they were written, not encoded. */
  readonly rowsCopied: number;
  /** Spooled only: heap in use after a full garbage collection at each quarter of the feed (MB). */
  readonly retainedHeapMb?: readonly number[];
}

/**
 * A results.ndjson as `run location` writes it: one workflow stage, 21 fields, a few kinds of value, its rows
 * in the order they finish in a run (`jitter`: each row up to that many places late, as with rows in flight;
 * seeded), which the results files put back in row order. Returns the byte offset of the line half-way
 * through the journal: where the second session of a run resumed half-way starts.
 */
async function writeLocationResults(path: string, rows: number, jitter = 64): Promise<number> {
  const out = createWriteStream(path);
  const cities = [
    ['Maharashtra', '400070', 'Mumbai'],
    ['Delhi', '110011', 'Central Delhi'],
    ['Karnataka', '560001', 'Bengaluru'],
    ['Tamil Nadu', '600001', 'Chennai'],
  ];
  let seed = 12345;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const at = new Float64Array(rows);
  for (let i = 0; i < rows; i += 1) at[i] = i + rnd() * jitter;
  const order = Int32Array.from({ length: rows }, (_, i) => i).sort((a, b) => at[a] - at[b]);
  let bytes = 0;
  let half = 0;
  for (const [n, o] of order.entries()) {
    if (n === rows >> 1) half = bytes;
    const i = o + 1;
    const [state, pincode, city] = cities[i % cities.length];
    const approve = i % 5 !== 0;
    const stages = {
      location: {
        decision: approve ? 'Approve' : 'Reject',
        decision_reason: 'geocoding bre checked',
        loan_amount: approve ? 50_000 + (i % 7) * 1000 : null,
        repayment_date: null,
        emi_decision: null,
        loan_offers: [],
        offers_count: 0,
        'best_offer.product_code': null,
        'best_offer.tenure_months': null,
        'best_offer.pf_percent': null,
        'best_offer.interest_rate': null,
        'best_offer.emi_amount': null,
        'best_offer.loan_amount': null,
        rule_engine_name: 'geocoding',
        rules_version: 'v1',
        rules_failed: approve ? [] : ['R_GEO'],
        workflow: 'location',
        workflow_version: 'v1',
        request_id: `aa98f857c81c649415d2${String(i).padStart(12, '0')}`,
        'geocoding.state': state,
        'geocoding.pincode': pincode,
        'geocoding.city': city,
      },
    };
    const line = `{"row":${i},"key":"B-${i}","stages":${JSON.stringify(stages)}}\n`;
    bytes += Buffer.byteLength(line);
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return half;
}

/** What bench/rebuild-child.ts prints. */
interface ChildFigures {
  seconds: number;
  cpuSeconds: number;
  feedSeconds?: number;
  maxRssKb: number;
  beforeEndRssKb: number;
  retainedMb: number[];
  copied: number;
}

async function child(
  mode: RebuildMode | 'earlier',
  dir: string,
  rows: number,
  sessionStart: number,
): Promise<ChildFigures> {
  const c = spawn(
    process.execPath,
    ['--expose-gc', ...benchScriptArgs('rebuild-child.ts', [mode, dir, String(rows), String(sessionStart)])],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  c.stdout.on('data', (d) => (out += d));
  const [code] = (await once(c, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`rebuild child (${mode}) exited ${code}: ${out}`);
  return JSON.parse(out || '{}') as ChildFigures;
}

export const REBUILD_MODES = ['spooled', 'resumed', 'killed', 'journal'] as const;

export async function benchRebuild(opts: {
  rows: readonly number[];
  dir: string;
  /** Some of the modes only (default: all). */
  modes?: readonly RebuildMode[];
}): Promise<{ runs: RebuildRun[]; rssRatio: Record<string, number>; target: string }> {
  const modes = REBUILD_MODES.filter((m) => !opts.modes || opts.modes.includes(m));
  const runs: RebuildRun[] = [];
  for (const rows of opts.rows) {
    const dir = join(opts.dir, `rebuild-${rows}`);
    mkdirSync(join(dir, '.state'), { recursive: true });
    const half = await writeLocationResults(join(dir, 'results.ndjson'), rows);
    for (const mode of modes) {
      // Each mode's end replaces the files and index the one before left (a resumed run's earlier end
      // writes its own).
      for (const f of ['results.csv', 'results.parquet', '.state/results-index.bin'])
        rmSync(join(dir, f), { force: true });
      // The earlier session's end in a process of its own: its peak RSS is not the measured end's.
      if (mode === 'resumed') await child('earlier', dir, rows, half);
      const r = await child(mode, dir, rows, mode === 'resumed' || mode === 'killed' ? half : 0);
      runs.push({
        rows,
        mode,
        seconds: Math.round(r.seconds * 100) / 100,
        secondsPerMillion: Math.round(((r.seconds * 1e6) / rows) * 100) / 100,
        cpuSecondsPerMillion: Math.round(((r.cpuSeconds * 1e6) / rows) * 100) / 100,
        ...(r.feedSeconds !== undefined
          ? {
              feedSecondsPerMillion:
                Math.round(((r.feedSeconds * 1e6) / (mode === 'spooled' ? rows : rows - (rows >> 1))) * 10) / 10,
            }
          : {}),
        peakRssMb: Math.round(r.maxRssKb / 1024),
        peakRssBeforeEndMb: Math.round(r.beforeEndRssKb / 1024),
        rowsCopied: r.copied,
        ...(r.retainedMb.length > 0 ? { retainedHeapMb: r.retainedMb } : {}),
      });
    }
    rmSync(dir, { recursive: true, force: true });
  }
  const rss = (mode: RebuildMode) => {
    const of = runs.filter((r) => r.mode === mode).sort((a, b) => a.rows - b.rows);
    return ratio(of.at(-1)!.peakRssMb, of[0].peakRssMb);
  };
  return {
    runs,
    rssRatio: Object.fromEntries(modes.map((m) => [m, rss(m)])),
    target:
      'the end of a run, in one session and resumed, <= 5 s per million rows (CSV and Parquet); peak RSS of the larger size <= 1.25x the smaller',
  };
}
