/**
 * `run --plan [--window HOURS]`: how long the input needs at the configured limits, said before anything is
 * called, and how many egress IPs (each allow-listed, each with its own per-IP limit: decision spec section 8)
 * a given window would need. The issue's own example: 2,000,000 rescoring rows at 500 workflow calls a
 * minute need 2.8 days from one IP.
 *
 * Model: rows stream through all stages at once (src/pipeline/runner.ts), so the wall time is that of the
 * busiest service: calls(service) / rate(service), the rate being the limiter's actual spacing (the limit
 * less its safety margin). Calls per row are the nominal count each stage kind declares (StageKind.callsPerRow); the estimate assumes
 * every conditional stage runs and no retries, so it is an upper bound for `when:` stages and a lower bound
 * under heavy 429/5xx traffic. It also says how much room the output will take on its folder's disk, and warns
 * when the disk has less free (../output/room.ts). With k IPs, each with its own limit, the wall time divides by k: k addresses
 * on one host (`--local-address`, one process) or k hosts each taking 1/k of the rows (`--shard K/k`).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { BreError } from '@bre-batch/core/errors';
import { preflight } from '../http/preflight.js';
import { startIntervalMs } from '../limits/pacer.js';
import { describeRate, type Rate } from '@bre-batch/core/rates';
import { countText } from '@bre-batch/core/units';
import { RowSet } from '../output/journal/bitset.js';
import { readNdjson } from '@bre-batch/formats/ndjson-file';
import { FILES } from '@bre-batch/formats';
import {
  assumedRowBytes,
  estimateRoom,
  existingFolder,
  formatBytes,
  freeBytes,
  journalBytesIn,
  roomWarning,
  type RoomEstimate,
} from '../output/room.js';
import { openInput } from './input.js';
import { planSpend } from './spend.js';
import type { RunSettings } from './settings.js';
import { lineKey, shardOf } from '../input/shard.js';
import { kindOf } from '../stages/index.js';
import { describeSampleOptions } from '../sample/design.js';
import type { SampleDesign } from '@bre-batch/formats/manifest';
import { specOf } from '../sample/draw.js';
import type { StageConfig } from '../stages/types.js';
import { SERVICES, type ServiceName } from '@bre-batch/core/types';

export interface PlanOptions {
  /** Length of the window the run must fit in, in hours (e.g. a nightly 6 h window). */
  readonly windowHours?: number;
  /** Source addresses of this host the run will use (--local-address; default 1). */
  readonly addresses?: number;
  /** --keep-journal: the finished run's journal stays uncompressed (what is left on the disk). */
  readonly keepJournal?: boolean;
}

/** Nominal calls a stage makes for one row, as its kind declares (see the header for what is not counted). */
export function callsPerRow(stage: StageConfig): number {
  return kindOf(stage).callsPerRow?.(stage) ?? 1;
}

interface ServicePlan {
  readonly service: ServiceName;
  readonly calls: number;
  readonly rate: Rate | null;
  /** null when the service is not rate-limited. */
  readonly ms: number | null;
}

export interface Plan {
  readonly rows: number;
  readonly services: readonly ServicePlan[];
  /** Wall time from one egress IP; null when no used service is limited. */
  readonly wallMs: number | null;
  readonly windowHours?: number;
  /** Egress IPs needed to finish inside the window. */
  readonly ipsNeeded?: number;
  /** Source addresses this host will use (1 without --local-address). */
  readonly addresses: number;
}

/** Pure: the plan for `rows` rows. */
export function computePlan(
  rows: number,
  stages: readonly StageConfig[],
  rates: Readonly<Record<ServiceName, Rate | null>>,
  opts: PlanOptions = {},
): Plan {
  const calls = new Map<ServiceName, number>();
  for (const st of stages) {
    const kind = kindOf(st);
    calls.set(kind.service, (calls.get(kind.service) ?? 0) + rows * callsPerRow(st));
  }
  const services: ServicePlan[] = SERVICES.filter((s) => calls.has(s)).map((service) => {
    const rate = rates[service];
    const n = calls.get(service)!;
    return { service, calls: n, rate, ms: rate ? n * startIntervalMs(rate) : null };
  });
  const limited = services.filter((s) => s.ms !== null).map((s) => s.ms as number);
  const wallMs = limited.length > 0 ? Math.max(...limited) : null;
  const plan: Plan = { rows, services, wallMs, addresses: Math.max(1, opts.addresses ?? 1) };
  if (opts.windowHours === undefined) return plan;
  if (!(opts.windowHours > 0))
    throw new BreError('USAGE', `Expected --window-hours to be a number of hours above 0, got '${opts.windowHours}'`, {
      field: 'window-hours',
    });
  const windowMs = opts.windowHours * 3_600_000;
  return {
    ...plan,
    windowHours: opts.windowHours,
    ipsNeeded: wallMs === null ? 1 : Math.max(1, Math.ceil(wallMs / windowMs)),
  };
}

/** 4 d 2 h 5 min / 3 h 20 min / 42 s: the largest two units a person reads. */
export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const min = Math.round(s / 60);
  const d = Math.floor(min / 1440);
  const h = Math.floor((min % 1440) / 60);
  const m = min % 60;
  if (d > 0) return `${d} d ${h} h${m && d < 10 ? ` ${m} min` : ''}`;
  if (h > 0) return `${h} h${m ? ` ${m} min` : ''}`;
  return `${m} min`;
}

const n = countText;

/** A sampled run's plan: its design, and the plan of the whole input at the same limits, for comparison. */
export interface SamplePlan {
  readonly design: SampleDesign;
  readonly whole: Plan;
}

/** What the plan says of the output's size and the room on its disk (../output/room.ts). */
export interface PlanRoom {
  readonly estimate: RoomEstimate;
  /** The output folder, or the folder it would be made in when it is not made yet (`notMade`). */
  readonly dir: string;
  readonly notMade?: boolean;
  /** Bytes free on the folder's disk; undefined when unknown. */
  readonly free?: number;
}

function roomLines(r: PlanRoom): string[] {
  const e = r.estimate;
  const perRow = `${formatBytes(e.bytesPerRow)} a row ${e.measured ? 'as written so far' : 'assumed'}`;
  const lines = [
    `  output: about ${formatBytes(e.totalBytes)} (${formatBytes(e.journalBytes)} of journal at ${perRow}, then ${formatBytes(e.endBytes)} for the end files)${r.free === undefined ? '' : `; ${formatBytes(r.free)} free on the disk of ${r.dir}${r.notMade ? ', where the run would make its folder' : ''}`}`,
  ];
  const warning = r.free === undefined ? undefined : roomWarning(e, r.free, r.dir);
  if (warning) lines.push(`  ${warning}`);
  // The above is the peak (the journal grows plain while the run goes); this is what stays on the disk.
  if (e.leftBytes !== undefined && e.leftJournalBytes !== undefined)
    lines.push(
      `  left once finished: about ${formatBytes(e.leftBytes)} (${formatBytes(e.leftJournalBytes)} of journal, ${e.keepJournal ? 'kept uncompressed: --keep-journal' : "gzip'ed at the end"}; the end files without their spool)`,
    );
  return lines;
}

export function formatPlan(
  p: Plan,
  what: { pipeline: string; input: string; shard?: string; done?: number; sample?: SamplePlan; room?: PlanRoom },
): string {
  const lines = [
    `Plan for pipeline '${what.pipeline}' over ${what.input}${what.shard ? ` (shard ${what.shard})` : ''}`,
  ];
  const sample = what.sample;
  if (sample) {
    const d = sample.design;
    lines.push(
      `  a sample of ${n(d.sampled)} of ${n(d.population)} rows, ${n(d.strata.length)} strat${d.strata.length === 1 ? 'um' : 'a'} (${describeSampleOptions(specOf(d))})`,
    );
  }
  lines.push(`  rows to do: ${n(p.rows)}${what.done ? ` (${n(what.done)} already done in the output folder)` : ''}`);
  for (const s of p.services) {
    lines.push(
      `  ${s.service}: ${n(s.calls)} calls at ${describeRate(s.rate)}${s.ms === null ? ' (not limited: as fast as the service answers)' : ` -> ${formatDuration(s.ms)}`}`,
    );
  }
  if (p.wallMs === null) lines.push('  time: not limited by any rate (--rate off)');
  else
    lines.push(
      `  time from one egress IP: about ${formatDuration(p.wallMs)} (the busiest service; stages overlap across rows; no retries counted)`,
    );
  const k = p.addresses;
  if (k > 1 && p.wallMs !== null)
    lines.push(`  ${k} addresses on this host (--local-address): about ${formatDuration(p.wallMs / k)}`);
  if (p.windowHours !== undefined && p.ipsNeeded !== undefined && p.wallMs !== null) {
    const ips = p.ipsNeeded;
    if (ips <= k)
      lines.push(
        k === 1
          ? `  fits a ${p.windowHours} h window from one egress IP`
          : `  fits a ${p.windowHours} h window from the ${k} addresses on this host`,
      );
    else {
      lines.push(
        `  a ${p.windowHours} h window needs ${ips} egress IPs, each allow-listed with its own limit${k > 1 ? ` (this host has ${k})` : ''}:`,
      );
      lines.push(
        `    one host with ${ips} addresses: --local-address ADDR1,...,ADDR${ips} (one process, one output folder; about ${formatDuration(p.wallMs / ips)})`,
      );
      lines.push(
        `    or ${ips} hosts: run --shard K/${ips} behind each (about ${formatDuration(p.wallMs / ips)} each), then merge`,
      );
    }
  }
  if (sample) {
    const w = sample.whole;
    const time = (x: Plan) =>
      x.wallMs === null ? 'not limited (--rate off)' : `about ${formatDuration(x.wallMs / k)}`;
    const faster =
      p.wallMs !== null && w.wallMs !== null && p.wallMs > 0 ? ` (${(w.wallMs / p.wallMs).toFixed(1)}x as long)` : '';
    lines.push(
      `  beside it, the whole input: ${n(w.rows)} rows, ${time(w)}${faster}; the sample: ${n(p.rows)} rows, ${time(p)}${k > 1 ? ` (${k} addresses)` : ' (one egress IP)'}`,
    );
  }
  if (what.room) lines.push(...roomLines(what.room));
  return lines.join('\n');
}

/** Rows already in results or errors of the output folder (a resumed run does not send them again). */
async function doneRows(outDir: string): Promise<RowSet> {
  const done = new RowSet();
  if (!existsSync(join(outDir, FILES.manifest))) return done;
  for (const name of [FILES.results, FILES.errors]) {
    for await (const line of readNdjson<{ row?: number }>(join(outDir, name)))
      if (typeof line?.row === 'number') done.add(line.row);
  }
  return done;
}

/**
 * Counts the data rows of the input (this shard's, not yet done in --out, up to --limit) and returns the
 * plan as text. Reads the input once; calls nothing.
 */
export async function planRun(settings: RunSettings, opts: PlanOptions = {}): Promise<string> {
  const s = settings;
  if (s.input === '-' && !s.source)
    throw new BreError('USAGE', 'Expected --plan with an input file, got --input - (stdin can be read only once)');
  // The same check as a run's, when the user's base URLs are set: a plan for services that cannot be reached is no plan.
  if (s.network)
    await preflight([...new Set(s.pipeline.stages.map((st) => kindOf(st).service))], s.baseUrls, s.network);
  const done = await doneRows(s.outDir);
  // Loaded for a sampled plan only: finish.ts loads this module with every run for remainingEstimate.
  const drawn = s.sample ? await (await import('./sample.js')).drawSample(s, s.sample) : undefined;
  // A sampled run sends the sample's rows (and writes the rows without a key or unreadable to errors); the
  // whole input is planned beside it.
  let rows = 0;
  let sampleRows = 0;
  let doneCount = 0;
  const { reader, first, db, empty } = await openInput(s);
  try {
    if (db && !s.shard && !drawn) {
      // A database counts its own rows (the same query); the folder's done rows are those in the count.
      const total = Math.min(await db.source.count(), s.limit ?? Infinity);
      if (s.limit === undefined) doneCount = done.size;
      else for (let r = 1; r <= total; r += 1) if (done.has(r)) doneCount += 1;
      rows = Math.max(0, total - doneCount);
    } else {
      batches: for (let next = first; !next.done; next = await reader.next())
        for (const row of next.value) {
          if (s.limit !== undefined && row.row > s.limit) break batches;
          const key = lineKey(row, s.pipeline.key);
          if (s.shard && shardOf(key, row.row, s.shard.count) !== s.shard.index) continue;
          if (done.has(row.row)) {
            doneCount += 1;
            continue;
          }
          rows += 1;
          if (drawn && (key === null || row.readError || drawn.chosen.has(row.row))) sampleRows += 1;
        }
    }
  } finally {
    await reader.return(undefined);
    await db?.source.close();
  }
  const planOf = (n: number) =>
    computePlan(n, s.pipeline.stages, s.rates, { ...opts, addresses: s.localAddresses?.length });
  const plan = planOf(drawn ? sampleRows : rows);
  const text = formatPlan(plan, {
    pipeline: s.pipeline.name,
    input: s.input,
    shard: s.shard ? `${s.shard.index}/${s.shard.count}` : undefined,
    done: doneCount,
    ...(drawn ? { sample: { design: drawn.design, whole: planOf(rows) } } : {}),
    room: await planRoom(s, drawn ? sampleRows : rows, done.size, opts.keepJournal === true),
  });
  const spend = planSpend(s, drawn ? sampleRows : rows, s.outDir);
  const withSpend = spend.length > 0 ? `${text}\n${spend.join('\n')}` : text;
  return empty
    ? `${withSpend}\n  input: no data rows, it held ${empty} (--allow-empty: an empty night, nothing to do)`
    : withSpend;
}

/**
 * The output's size: at the bytes a row the folder's journals hold when it has rows (a resume), else at the
 * sandbox's typical bytes a row for the pipeline's stages.
 */
async function planRoom(s: RunSettings, rows: number, doneRows: number, keepJournal: boolean): Promise<PlanRoom> {
  const journal = doneRows > 0 ? journalBytesIn(s.outDir) : 0;
  const measured = journal > 0;
  const bytesPerRow = measured
    ? journal / doneRows
    : assumedRowBytes(s.pipeline.stages.map((st) => kindOf(st).service));
  // A folder --plan would make is not made: the room is that of the folder it would be made in.
  const made = existsSync(s.outDir);
  return {
    estimate: estimateRoom({ rows, doneRows, bytesPerRow, measured, formats: s.outputFormats, keepJournal }),
    dir: made ? s.outDir : existingFolder(s.outDir),
    ...(made ? {} : { notMade: true }),
    free: await freeBytes(s.outDir),
  };
}

/**
 * For summaries and progress lines of a run that stopped or is under way: how long `rows` more rows need at
 * the run's limits, e.g. `{ ms: 7_200_000, text: '2 h' }`; text 'unknown (no rate limit)' when unlimited.
 */
export function remainingEstimate(
  rows: number,
  s: Pick<RunSettings, 'pipeline' | 'rates' | 'localAddresses'>,
): { ms: number | null; text: string } {
  const p = computePlan(rows, s.pipeline.stages, s.rates);
  const ms = p.wallMs === null ? null : p.wallMs / Math.max(1, s.localAddresses?.length ?? 1);
  return {
    ms: ms === null ? null : Math.round(ms),
    text: ms === null ? 'unknown (no rate limit)' : formatDuration(ms),
  };
}
