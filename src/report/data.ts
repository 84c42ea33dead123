/**
 * What report.html shows, gathered from an output folder alone (so `bre-batch report OUT` can rebuild it
 * at any time, for a merged folder too): manifest.json, summary.json, the time series
 * (.state/timeline.ndjson) and the error codes of errors.ndjson. Whatever a folder lacks (one written by an
 * older build has no time series) is listed in `missing` with what it means, and the rest is shown.
 */
import { spendFiguresOf, type SpendFigures } from './spend.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Timeline } from '../metrics/timeline-lines.js';
import { readTimeline } from '../output/timeline-store.js';
import { FILES, sampleDesignSchema, versionsSummarySchema, type VersionsSummary } from '@bre-batch/formats';
import { describeSampleOptions } from '../sample/design.js';
import { specOf, weightOf } from '../sample/draw.js';
import { readNdjsonBatches } from '@bre-batch/formats/ndjson-file';
import { journalForm } from '@bre-batch/formats/journal-file';
import { limitPerMinute } from '@bre-batch/core/rates';

interface ErrorExample {
  readonly row: number | null;
  readonly stage: string | null;
  readonly field: string | null;
  readonly message: string;
}

export interface ErrorCodeCount {
  readonly code: string;
  count: number;
  readonly examples: ErrorExample[];
}

interface StageFunnel {
  readonly stage: string;
  readonly kind: string;
  readonly ran: number;
  readonly skipped: number;
  readonly failed: number;
}

interface ServiceFigures {
  readonly service: string;
  readonly calls: number;
  readonly retries: number;
  readonly throttled: number;
  readonly p50: number | null;
  readonly p95: number | null;
  readonly p99: number | null;
  readonly limit: string | null;
  /** summary.json's sentence when --concurrency, not the limit, held the rate back; null otherwise. */
  readonly concurrencyNote: string | null;
  readonly achievedPerMinute: number | null;
}

/** One source address of a run with several (summary.json `addresses`). */
interface AddressFigures {
  readonly address: string;
  readonly rows: number;
  readonly calls: number;
  readonly throttled: number;
  /** `workflow 598/min, bureau 1190/min`. */
  readonly achieved: string;
  readonly failures: number;
  readonly movedAway: number;
  readonly circuitOpen: string | null;
}

/** A sampled run (manifest.json's `sample`): the notice at the top and the strata. */
interface SampleFigures {
  readonly sampled: number;
  readonly population: number;
  /** The options that drew it, as typed. */
  readonly options: string;
  readonly columns: readonly string[];
  readonly strata: readonly {
    readonly name: string;
    readonly missing: boolean;
    readonly population: number;
    readonly sample: number;
    readonly weight: number;
  }[];
  /** Rows outside the strata, errors of the run (from summary.json; null when it has none yet). */
  readonly withoutKey: number | null;
  readonly unreadable: number | null;
}

export interface RunReportData {
  readonly dir: string;
  readonly title: string;
  readonly pipeline: string;
  readonly input: string | null;
  readonly shard: string | null;
  readonly merged: boolean;
  readonly finished: boolean;
  readonly stopped: { readonly code: string; readonly message: string } | null;
  readonly seconds: number | null;
  readonly rows: { readonly succeeded: number; readonly failed: number; readonly total: number | null };
  readonly rowsPerSecond: number | null;
  /** A sampled run's design; null otherwise. */
  readonly sample: SampleFigures | null;
  readonly remaining: { readonly rows: number; readonly time: string } | null;
  readonly decisions: Readonly<Record<string, Readonly<Record<string, number>>>>;
  /** The strategy versions of each workflow stage (summary.json `versions`); null when the folder has none. */
  readonly versions: VersionsSummary | null;
  /** Over every session when the time series has them, else the summary's (last session only). */
  readonly funnel: readonly StageFunnel[];
  readonly funnelSource: 'all sessions' | 'last session only' | 'none';
  readonly services: readonly ServiceFigures[];
  /** --price: what the folder's calls cost; null when nothing was priced. */
  readonly spend: SpendFigures | null;
  /** Empty unless the last session used several source addresses. */
  readonly addresses: readonly AddressFigures[];
  readonly errors: readonly ErrorCodeCount[];
  readonly timeline: Timeline | undefined;
  /** What the folder cannot show, in words a person reading the report understands. */
  readonly missing: readonly string[];
  readonly files: readonly string[];
  readonly generatedAt: string;
}

/** Error codes with counts and a few examples each, gathered one line at a time (bounded memory). */
class ErrorTally {
  readonly #codes = new Map<string, ErrorCodeCount>();
  readonly #examples: number;

  constructor(examples = 3) {
    this.#examples = examples;
  }

  /** An errors.ndjson line (already masked by the run: personal data and secrets never reach it). */
  add(line: Record<string, unknown>): void {
    const code = typeof line.code === 'string' ? line.code : '(no code)';
    let c = this.#codes.get(code);
    if (!c) this.#codes.set(code, (c = { code, count: 0, examples: [] }));
    c.count += 1;
    if (c.examples.length < this.#examples) {
      c.examples.push({
        row: typeof line.row === 'number' ? line.row : null,
        stage: typeof line.stage === 'string' ? line.stage : null,
        field: typeof line.field === 'string' ? line.field : null,
        message: String(line.message ?? '').slice(0, 300),
      });
    }
  }

  result(): ErrorCodeCount[] {
    // Codes are ASCII (packages/core/src/errors.ts): compared by code unit, with no collator to load (ICU's, at a
    // cost).
    return [...this.#codes.values()].sort(
      (a, b) => b.count - a.count || (a.code < b.code ? -1 : a.code > b.code ? 1 : 0),
    );
  }
}

function readJson(path: string): Record<string, any> | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, any>;
  } catch {
    return undefined;
  }
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

const REPORT_FILES = [
  FILES.results,
  FILES.resultsCsv,
  FILES.resultsParquet,
  FILES.errors,
  FILES.errorsParquet,
  FILES.transactions,
  FILES.transactionsParquet,
  FILES.summary,
  FILES.manifest,
  FILES.report,
];

/** The report's data; `errors` when the caller already tallied errors.ndjson (the end of a run does). */
export async function loadRunReport(
  dir: string,
  opts: { errors?: ErrorCodeCount[]; now?: Date } = {},
): Promise<RunReportData> {
  const manifest = readJson(join(dir, FILES.manifest));
  const summary = readJson(join(dir, FILES.summary));
  const missing: string[] = [];
  if (!summary)
    missing.push(
      'summary.json is missing or unreadable: the run has not reached its end yet (or was killed); re-run the same command to resume, and the report is rebuilt at its end. Counts below come from the journal.',
    );
  const timeline = await readTimeline(dir);
  if (!timeline || timeline.samples.length === 0) {
    missing.push(
      'No time series in this folder (it was written by a bre-batch older than report.html, or the run ended before its first sample): calls per minute, latency over the run, retries and 429s over time, rows a second and the ETA cannot be shown.',
    );
  }
  let errors = opts.errors;
  let failedRows = 0;
  if (!errors) {
    const tally = new ErrorTally();
    for await (const batch of readNdjsonBatches<Record<string, unknown>>(join(dir, FILES.errors)))
      for (const l of batch) if (l) tally.add(l);
    errors = tally.result();
  }
  for (const e of errors) failedRows += e.count;

  const merged = summary?.merged === true || Array.isArray(manifest?.merged_from);
  const stageKinds = new Map<string, string>(
    Object.entries<any>(summary?.stages ?? {}).map(([id, st]) => [id, String(st?.kind ?? '')]),
  );
  if (merged)
    for (const sh of Object.values<any>(summary?.shard_summaries ?? {}))
      for (const [id, st] of Object.entries<any>(sh?.stages ?? {}))
        if (!stageKinds.has(id)) stageKinds.set(id, String(st?.kind ?? ''));

  // The funnel over every session: the time series holds each interval's stage counts.
  let funnel: StageFunnel[] = [];
  let funnelSource: RunReportData['funnelSource'] = 'none';
  if (timeline && timeline.samples.length > 0) {
    const acc = new Map<string, { ran: number; skipped: number; failed: number }>();
    for (const s of timeline.samples) {
      for (const [id, c] of Object.entries(s.stages)) {
        const a = acc.get(id) ?? { ran: 0, skipped: 0, failed: 0 };
        a.ran += c.ran;
        a.skipped += c.skipped;
        a.failed += c.failed;
        acc.set(id, a);
      }
    }
    funnel = [...acc].map(([stage, c]) => ({ stage, kind: stageKinds.get(stage) ?? '', ...c }));
    funnelSource = 'all sessions';
  } else if (summary?.stages) {
    funnel = Object.entries<any>(summary.stages).map(([stage, st]) => ({
      stage,
      kind: String(st?.kind ?? ''),
      ran: Number(st?.rows_ran ?? 0),
      skipped: Number(st?.rows_skipped ?? 0),
      failed: Number(st?.rows_failed ?? 0),
    }));
    funnelSource = 'last session only';
  }

  const services: ServiceFigures[] = Object.entries<any>(summary?.services ?? {}).map(([service, st]) => ({
    service,
    calls: Number(st?.attempts ?? 0),
    retries: Number(st?.retries ?? 0),
    throttled: Number(st?.throttled_429 ?? 0),
    p50: num(st?.latency_ms?.p50),
    p95: num(st?.latency_ms?.p95),
    p99: num(st?.latency_ms?.p99),
    // in calls a minute, as the achieved rate beside it
    limit: typeof st?.rate_limit === 'string' ? limitPerMinute(st.rate_limit) : null,
    achievedPerMinute: num(st?.achieved_per_minute),
    concurrencyNote: typeof st?.concurrency_note === 'string' ? st.concurrency_note : null,
  }));

  const addresses: AddressFigures[] = Object.entries<any>(summary?.addresses ?? {}).map(([address, a]) => ({
    address,
    rows: Number(a?.rows ?? 0),
    calls: Number(a?.calls ?? 0),
    throttled: Number(a?.throttled_429 ?? 0),
    achieved: Object.entries<any>(a?.services ?? {})
      .map(([svc, st]) => `${svc} ${num(st?.achieved_per_minute) ?? '–'}/min`)
      .join(', '),
    failures: Number(a?.failures ?? 0),
    movedAway: Number(a?.rows_moved_away ?? 0),
    circuitOpen: typeof a?.circuit_open === 'string' ? a.circuit_open : null,
  }));

  const lastSample = timeline?.samples.at(-1);
  const succeeded = num(summary?.rows?.succeeded) ?? 0;
  const failed = num(summary?.rows?.failed) ?? failedRows;
  const pipeline = String(summary?.pipeline ?? manifest?.pipeline?.name ?? '(unknown pipeline)');
  const design = sampleDesignSchema.safeParse(manifest?.sample);
  if (manifest?.sample !== undefined && !design.success)
    missing.push('manifest.json describes a sample this report cannot read: the strata and weights are not shown.');
  return {
    dir,
    title: `Run report: ${pipeline}${merged ? ' (merged)' : ''}`,
    pipeline,
    input:
      typeof (summary?.input ?? manifest?.input?.path) === 'string'
        ? String(summary?.input ?? manifest?.input?.path)
        : null,
    shard: typeof manifest?.shard === 'string' ? manifest.shard : null,
    merged,
    finished: summary?.finished === true,
    stopped: summary?.stopped
      ? { code: String(summary.stopped.code ?? ''), message: String(summary.stopped.message ?? '') }
      : null,
    seconds: num(summary?.seconds),
    rows: { succeeded, failed, total: lastSample?.total ?? null },
    rowsPerSecond: num(summary?.rows_per_second),
    sample: design.success
      ? {
          sampled: design.data.sampled,
          population: design.data.population,
          options: describeSampleOptions(specOf(design.data)),
          columns: design.data.stratify_by.map((c) => (c.group ? `${c.column} (${c.group})` : c.column)),
          strata: design.data.strata.map((st) => ({
            name: st.name,
            missing: st.values.includes(null),
            population: st.population,
            sample: st.sample,
            weight: weightOf(st),
          })),
          withoutKey: num(summary?.sample?.rows_without_key),
          unreadable: num(summary?.sample?.rows_unreadable),
        }
      : null,
    remaining: summary?.remaining
      ? { rows: Number(summary.remaining.rows_estimate ?? 0), time: String(summary.remaining.time_estimate ?? '') }
      : null,
    decisions: (summary?.decisions ?? {}) as Record<string, Record<string, number>>,
    versions: versionsSummarySchema.safeParse(summary?.versions).data ?? null,
    funnel,
    funnelSource,
    services,
    spend: spendFiguresOf(summary?.spend),
    addresses,
    errors,
    timeline: timeline && timeline.samples.length > 0 ? timeline : undefined,
    missing,
    // A journal by the name it has on disk: results.ndjson.gz once its run finished
    // (packages/formats/src/journal-file.ts).
    files: REPORT_FILES.flatMap((f) => {
      const form = journalForm(join(dir, f));
      return form === 'plain' ? [f] : form === 'gzip' ? [`${f}.gz`] : [];
    }),
    generatedAt: (opts.now ?? new Date()).toISOString(),
  };
}
