/**
 * `merge`: combines the output folders of `run --shard K/N` workers into one folder, as if one unsharded run
 * had produced it, and checks the contract's invariant on the way: every data row appears exactly once, in
 * results or in errors, over all shards together (`mergeOutputs` lists the checks). Two passes over the shards'
 * journals, memory flat in the row count (row numbers as bits, the owning folder per row as one byte): the
 * first checks, the second writes. Nothing is written when a check fails.
 */
import { outputFileMode } from './modes.js';
import { createWriteStream, existsSync, mkdirSync, renameSync, rmSync, statSync, chmodSync } from 'node:fs';
import { once } from 'node:events';
import { join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { loadPipeline } from '../config/pipeline.js';
import { BreError } from '@bre-batch/core/errors';
import { parseShard, shardOf } from '../input/shard.js';
import { DecisionCounter, declaredFields } from '../stages/index.js';
import { SERVICES } from '@bre-batch/core/types';
import { grownTo, RowSet } from './journal/bitset.js';
import { gzPathOf, journalExists, journalLines } from '@bre-batch/formats/journal-file';
import {
  FILES,
  readManifest,
  readRunSummary,
  resultLineBatches,
  writeManifest,
  writeSummary,
  type Manifest,
  type MergedSummary,
  type RunSummary,
} from '@bre-batch/formats';
import { writeColumnJournal } from './journal/column-journal.js';
import { ColumnUnion, type ColumnChange, type ResultStages, type StageColumns } from './journal/columns.js';
import { REBUILT_FILES, rebuildOutputs } from './spool/rebuild.js';
import { OUTPUT_FORMATS, type OutputFormat } from './spool/output-formats.js';
import { describeReading, readDifferently, sourceDifferences } from './folder-identity.js';
import { designDifference } from '../sample/draw.js';
import { mergeTimelines, readTimeline } from './timeline-store.js';
import { versionsSummary } from './versions-summary.js';
import { mergedSpendLine, mergeSpend } from './merge-spend.js';
import { writeSpendHistory } from './spend-file.js';

export interface MergeOptions {
  /** The shards' output folders. */
  readonly dirs: readonly string[];
  /** The merged folder: must not exist yet, be empty, or hold an earlier merge (which is replaced). */
  readonly out: string;
  /** Human-readable warnings (stderr). */
  readonly log?: (line: string) => void;
  /** Most problem rows listed in the report (default 50; all are counted). */
  readonly listLimit?: number;
  /** The formats of the rebuilt files (default csv and parquet). */
  readonly formats?: ReadonlySet<OutputFormat>;
}

interface RowProblem {
  readonly row: number;
  readonly key: unknown;
  /** Where the row was found, e.g. `out/w1/results.ndjson`. */
  readonly found: readonly string[];
  readonly problem: 'duplicate' | 'wrong shard';
}

export interface MergeReport {
  readonly ok: boolean;
  readonly out: string;
  readonly shardCount: number;
  readonly shards: readonly string[];
  readonly missingShards: readonly number[];
  readonly unfinishedShards: readonly string[];
  readonly problems: readonly RowProblem[];
  readonly problemCount: number;
  /**
   * Rows of the input found in no shard (only known when every shard is present and finished). For sampled
   * shards, the rows of the sample found in none, counted per stratum (`first` is empty: a stratum's n_h says
   * how many rows it must hold, not which, without reading the input again).
   */
  readonly missingRows: {
    readonly count: number;
    readonly first: readonly number[];
    readonly strata?: readonly { readonly name: string; readonly missing: number }[];
  } | null;
  readonly rows: { readonly succeeded: number; readonly failed: number };
  readonly summary?: MergedSummary;
  /** What the merge says of the shards' spend (currencies, prices or billing rules that differ). */
  readonly spendNotes?: readonly string[];
}

interface ShardFolder {
  readonly dir: string;
  readonly manifest: Manifest;
  /** `K/N`, as in the manifest. */
  readonly shard: string;
  readonly index: number;
  readonly count: number;
  /** Its summary.json, when it has a readable one (a worker that has not finished may have none). */
  readonly summary: RunSummary | undefined;
}

const JOURNALS = [FILES.results, FILES.errors] as const;

/** Reads and cross-checks the manifests; throws OUTPUT_MISMATCH naming the folders that disagree. */
function readShardFolders(dirs: readonly string[], log: (line: string) => void = () => undefined): ShardFolder[] {
  if (dirs.length === 0) throw new BreError('USAGE', 'Expected at least one shard output folder to merge, got none');
  const folders: ShardFolder[] = dirs.map((dir) => {
    const manifest = readManifest(dir);
    if (!manifest)
      throw new BreError(
        'OUTPUT_MISMATCH',
        `${dir} is not a bre-batch output folder: Expected ${join(dir, FILES.manifest)}, got no such file`,
      );
    if (!manifest.shard)
      throw new BreError(
        'OUTPUT_MISMATCH',
        `${dir} is not a shard: Expected a run made with --shard K/N, got an unsharded run (it already holds every row)`,
      );
    let shard: ReturnType<typeof parseShard>;
    try {
      shard = parseShard(manifest.shard);
    } catch {
      throw new BreError('OUTPUT_MISMATCH', `${dir}: Expected its manifest's shard to be K/N, got '${manifest.shard}'`);
    }
    const summary = readRunSummary(dir);
    if (summary.state === 'invalid')
      log(
        `merge: warning: ${join(dir, FILES.summary)} cannot be read (${summary.problem}): the shard counts as unfinished`,
      );
    return {
      dir,
      manifest,
      shard: manifest.shard,
      index: shard.index,
      count: shard.count,
      summary: summary.state === 'ok' ? summary.value : undefined,
    };
  });
  const first = folders[0];
  const problems: string[] = [];
  for (const f of folders.slice(1)) {
    if (f.manifest.pipeline.sha256 !== first.manifest.pipeline.sha256)
      problems.push(
        `${f.dir} was made by pipeline '${f.manifest.pipeline.name}' with other contents than ${first.dir} ('${first.manifest.pipeline.name}')`,
      );
    // Shards of a database input read the same table or query: its identity stands in for the file's hash.
    const fromDb = f.manifest.input.source !== undefined || first.manifest.input.source !== undefined;
    if (fromDb)
      problems.push(...sourceDifferences(first.manifest, f.manifest).map((p) => `${f.dir}: ${p} (${first.dir})`));
    else if (f.manifest.input.sha256 !== first.manifest.input.sha256 || f.manifest.input.sha256 === null)
      problems.push(
        `${f.dir} read input ${f.manifest.input.path}, whose contents differ from ${first.dir}'s input ${first.manifest.input.path}${f.manifest.input.sha256 === null ? ' (or came from stdin, which cannot be checked)' : ''}`,
      );
    if (f.manifest.key !== first.manifest.key)
      problems.push(`${f.dir} keyed rows by '${f.manifest.key}', ${first.dir} by '${first.manifest.key}'`);
    if (f.count !== first.count)
      problems.push(
        `${f.dir} is shard ${f.manifest.shard}, Expected one of ${first.count} like ${first.dir} (${first.manifest.shard})`,
      );
    if (readDifferently(f.manifest, first.manifest))
      problems.push(
        `${f.dir} read its input with ${describeReading(f.manifest.input.reading!)}, ${first.dir} with ${describeReading(first.manifest.input.reading!)}`,
      );
    if ((f.manifest.limit ?? null) !== (first.manifest.limit ?? null))
      problems.push(
        `${f.dir} ran with --limit ${f.manifest.limit ?? 'none'}, ${first.dir} with ${first.manifest.limit ?? 'none'}`,
      );
    const sample = designDifference(first.manifest.sample, f.manifest.sample, [`in ${first.dir}`, `in ${f.dir}`]);
    if (sample) problems.push(`${f.dir} is not the same sample as ${first.dir}: ${sample}`);
  }
  const byIndex = new Map<number, string>();
  for (const f of folders) {
    const other = byIndex.get(f.index);
    if (other !== undefined) problems.push(`shard ${f.manifest.shard} given twice: ${other} and ${f.dir}`);
    byIndex.set(f.index, f.dir);
  }
  if (problems.length > 0) throw new BreError('OUTPUT_MISMATCH', `cannot merge: ${problems.join('; ')}`);
  return folders.sort((a, b) => a.index - b.index);
}

/** Which folder (1-based position) holds each row: one byte per row, grown as rows appear. */
class RowOwners {
  #owner = new Uint8Array(1024);
  #where = new Uint8Array(1024);

  get(row: number): { folder: number; file: number } | undefined {
    const f = row < this.#owner.length ? this.#owner[row] : 0;
    return f === 0 ? undefined : { folder: f, file: this.#where[row] };
  }

  set(row: number, folder: number, file: number): void {
    this.#owner = grownTo(this.#owner, row);
    this.#where = grownTo(this.#where, row);
    this.#owner[row] = folder;
    this.#where[row] = file;
  }
}

async function* journalTexts(path: string): AsyncGenerator<string> {
  for await (const l of journalLines(path)) if (l.text !== '') yield l.text;
}

/** Pass 1: every row once, in the shard its key hashes to; the column union of the results on the way. */
async function checkRows(
  folders: readonly ShardFolder[],
  listLimit: number,
): Promise<{
  problems: RowProblem[];
  problemCount: number;
  seen: RowSet;
  succeeded: number;
  failed: number;
  union: ColumnUnion;
  changes: { row: number; change: ColumnChange }[];
  strata: Map<string | null, number>;
}> {
  if (folders.length > 255) throw new BreError('USAGE', `Expected at most 255 shard folders, got ${folders.length}`);
  const seen = new RowSet();
  const owners = new RowOwners();
  const problems: RowProblem[] = [];
  let problemCount = 0;
  let succeeded = 0;
  let failed = 0;
  const union = new ColumnUnion();
  const changes: { row: number; change: ColumnChange }[] = [];
  /** Rows per stratum name (null: a line without one), for sampled shards. */
  const strata = new Map<string | null, number>();
  for (let fi = 0; fi < folders.length; fi += 1) {
    const f = folders[fi];
    for (let ji = 0; ji < JOURNALS.length; ji += 1) {
      const path = join(f.dir, JOURNALS[ji]);
      for await (const text of journalTexts(path)) {
        let parsed: { row?: unknown; key?: unknown; code?: unknown; stratum?: unknown; stages?: ResultStages };
        try {
          parsed = JSON.parse(text) as {
            row?: unknown;
            key?: unknown;
            code?: unknown;
            stratum?: unknown;
            stages?: ResultStages;
          };
        } catch {
          throw new BreError(
            'OUTPUT_MISMATCH',
            `${path} holds a line that is not JSON: the folder is damaged (re-run its worker with the same command to repair it)`,
          );
        }
        if (typeof parsed.row !== 'number' || !Number.isInteger(parsed.row) || parsed.row < 1) {
          throw new BreError(
            'OUTPUT_MISMATCH',
            `${path}: Expected every line to carry a data row number, got ${JSON.stringify(parsed.row)}`,
          );
        }
        const row = parsed.row;
        const key = parsed.key ?? null;
        // A record that could not be read went to the shard of its row number, whatever key its line names.
        const shardKey = parsed.code === 'MALFORMED_ROW' ? null : key;
        if (!seen.add(row)) {
          problemCount += 1;
          const first = owners.get(row)!;
          if (problems.length < listLimit)
            problems.push({
              row,
              key,
              problem: 'duplicate',
              found: [join(folders[first.folder - 1].dir, JOURNALS[first.file]), path],
            });
          continue;
        }
        owners.set(row, fi + 1, ji);
        const stratum = typeof parsed.stratum === 'string' ? parsed.stratum : null;
        strata.set(stratum, (strata.get(stratum) ?? 0) + 1);
        if (shardOf(shardKey, row, f.count) !== f.index) {
          problemCount += 1;
          if (problems.length < listLimit) problems.push({ row, key, problem: 'wrong shard', found: [path] });
        }
        if (ji === 0) {
          succeeded += 1;
          const found = parsed.stages ? union.observe(parsed.stages) : undefined;
          if (found) for (const change of found) changes.push({ row, change });
        } else failed += 1;
      }
    }
  }
  return { problems, problemCount, seen, succeeded, failed, union, changes, strata };
}

async function write(out: Writable, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain');
}

async function finish(out: Writable): Promise<void> {
  out.end();
  await once(out, 'finish');
}

/** Concatenates the journals (whole lines only), written to a temporary name and renamed when complete. */
async function concatJournals(
  folders: readonly ShardFolder[],
  name: string,
  dest: string,
  mode = outputFileMode(),
): Promise<number> {
  const tmp = `${dest}.tmp`;
  const out = createWriteStream(tmp, { mode });
  let n = 0;
  for (const f of folders) {
    for await (const text of journalTexts(join(f.dir, name))) {
      await write(out, `${text}\n`);
      n += 1;
    }
  }
  await finish(out);
  renameSync(tmp, dest);
  chmodSync(dest, mode);
  return n;
}

/** The pipeline's stage columns: from the pipeline file when it is still the one the shards ran. */
function stageColumns(
  folders: readonly ShardFolder[],
  log: (l: string) => void,
): { columns: StageColumns[]; kinds: Map<string, string> } | undefined {
  const m = folders[0].manifest;
  try {
    const p = loadPipeline(m.pipeline.path);
    if (p.sha256 === m.pipeline.sha256) {
      return {
        columns: p.stages.map(declaredFields),
        kinds: new Map(p.stages.map((st) => [st.id, st.kind])),
      };
    }
    log(`merge: ${m.pipeline.path} changed since the shards ran; results.csv columns come from the results themselves`);
  } catch {
    log(`merge: pipeline file ${m.pipeline.path} not found; results.csv columns come from the results themselves`);
  }
  return undefined;
}

/** Stage ids and kinds when the pipeline file is gone: from the shards' summaries, else the results. */
async function stagesFromData(
  folders: readonly ShardFolder[],
): Promise<{ columns: StageColumns[]; kinds: Map<string, string> }> {
  const kinds = new Map<string, string>();
  for (const f of folders)
    for (const [id, st] of Object.entries(f.summary?.stages ?? {})) if (!kinds.has(id)) kinds.set(id, st.kind);
  if (kinds.size === 0) {
    for (const f of folders) {
      for await (const batch of resultLineBatches(join(f.dir, FILES.results))) {
        for (const id of Object.keys(batch.find((l) => l !== null)?.stages ?? {}))
          if (!kinds.has(id)) kinds.set(id, '');
        break;
      }
    }
  }
  return { columns: [...kinds.keys()].map((id) => ({ id, known: [] })), kinds };
}

/** Calls, retries and 429s per service, summed over the shards. */
function sumServices(folders: readonly ShardFolder[]): MergedSummary['services'] {
  const out: MergedSummary['services'] = {};
  for (const f of folders) {
    for (const svc of SERVICES) {
      const st = f.summary?.services[svc];
      if (!st) continue;
      const acc = (out[svc] ??= { attempts: 0, retries: 0, throttled_429: 0 });
      acc.attempts += st.attempts;
      acc.retries += st.retries;
      acc.throttled_429 += st.throttled_429;
    }
  }
  return out;
}

function prepareOut(out: string, dirs: readonly string[]): void {
  const abs = resolve(out);
  if (dirs.some((d) => resolve(d) === abs))
    throw new BreError('USAGE', `Expected --out to be a new folder, got ${out}, one of the folders being merged`);
  if (existsSync(abs)) {
    if (!statSync(abs).isDirectory()) throw new BreError('USAGE', `Expected --out to be a folder, got the file ${out}`);
    let old: Manifest | undefined;
    try {
      old = readManifest(abs);
    } catch {
      old = undefined; // damaged: not an earlier merge
    }
    const holdsRun = journalExists(join(abs, FILES.results)) || journalExists(join(abs, FILES.errors));
    if (holdsRun && !old?.merged_from)
      throw new BreError(
        'USAGE',
        `refusing to write into ${out}: it holds a run's output; Expected an empty folder or an earlier merge`,
      );
    for (const name of [
      FILES.results,
      FILES.errors,
      FILES.summary,
      FILES.secrets,
      FILES.retrying,
      ...REBUILT_FILES,
      FILES.report,
    ]) {
      rmSync(join(abs, name), { force: true });
      rmSync(gzPathOf(join(abs, name)), { force: true });
    }
    rmSync(join(abs, FILES.state), { recursive: true, force: true });
  }
  mkdirSync(abs, { recursive: true });
}

/**
 * Checks (each message names the folders concerned):
 * - every folder is a bre-batch output folder of a sharded run, all made by the same pipeline file contents,
 *   the same input contents and row key, all split N ways with the same N, no shard given twice
 *   (OUTPUT_MISMATCH, exit 2);
 * - no row in two places (two shards, or results and errors of one), and every row in the shard its key
 *   hashes to (../input/shard.ts): otherwise exit 1 with the list;
 * - when all N shards are given and finished: no data row missing (exit 1 with the list);
 * - shards missing or unfinished are warned about, and the merge is marked unfinished: re-running an
 *   unsharded `run --out <merged>` on the same input completes it (its manifest has shard null).
 */
export async function mergeOutputs(opts: MergeOptions): Promise<MergeReport> {
  const log = opts.log ?? (() => undefined);
  const listLimit = opts.listLimit ?? 50;
  const folders = readShardFolders(opts.dirs, log);
  const n = folders[0].count;
  const present = new Set(folders.map((f) => f.index));
  const missingShards = Array.from({ length: n }, (_, i) => i + 1).filter((k) => !present.has(k));
  const unfinished = folders
    .filter((f) => f.summary?.finished !== true || existsSync(join(f.dir, FILES.retrying)))
    .map((f) => f.dir);
  if (missingShards.length > 0)
    log(
      `merge: warning: shard${missingShards.length > 1 ? 's' : ''} ${missingShards.map((k) => `${k}/${n}`).join(', ')} not given: their rows are missing from the merge`,
    );
  for (const d of unfinished)
    log(
      `merge: warning: ${d} has not finished (re-run its worker with the same command to complete it): rows it has not done yet are missing`,
    );

  const checked = await checkRows(folders, listLimit);
  let missingRows: MergeReport['missingRows'] = null;
  const design = folders[0].manifest.sample;
  if (design && missingShards.length === 0 && unfinished.length === 0) {
    // Every worker drew the whole sample: each stratum holds n_h rows over the shards, and the rows outside
    // the strata (no key, unreadable: errors of the run) are those the counting pass found.
    const outside = folders.map((f) => f.summary?.sample).find((x) => x !== undefined);
    const expected = new Map<string | null, number>(design.strata.map((st) => [st.name, st.sample]));
    expected.set(null, outside ? outside.rows_without_key + outside.rows_unreadable : (checked.strata.get(null) ?? 0));
    const strata = [...expected]
      .map(([name, n]) => ({
        name: name ?? '(rows without a key or unreadable)',
        missing: Math.max(0, n - (checked.strata.get(name) ?? 0)),
      }))
      .filter((x) => x.missing > 0);
    missingRows = { count: strata.reduce((a, x) => a + x.missing, 0), first: [], strata };
  } else if (missingShards.length === 0 && unfinished.length === 0) {
    // Each worker reads the whole input, so a finished worker's `rows.read` is the input's data row count.
    const total = Math.max(0, ...folders.map((f) => f.summary?.rows.read ?? 0));
    let count = 0;
    const first: number[] = [];
    for (let row = 1; row <= total; row += 1) {
      if (checked.seen.has(row)) continue;
      count += 1;
      if (first.length < listLimit) first.push(row);
    }
    missingRows = { count, first };
  }
  const base = {
    out: opts.out,
    shardCount: n,
    shards: folders.map((f) => f.dir),
    missingShards,
    unfinishedShards: unfinished,
    problems: checked.problems,
    problemCount: checked.problemCount,
    missingRows,
    rows: { succeeded: checked.succeeded, failed: checked.failed },
  };
  if (checked.problemCount > 0 || (missingRows && missingRows.count > 0)) return { ok: false, ...base };

  // Pass 2: write.
  prepareOut(opts.out, opts.dirs);
  const out = resolve(opts.out);
  // The first shard's record of what was read, not its run: the merged rows keep the run ids and sessions of
  // the shards that wrote them (merged_from lists them), and a run resuming the merged folder starts its own.
  const { run_id: _, sessions: __, outputs: ___, ...m } = folders[0].manifest;
  writeManifest(out, {
    ...m,
    shard: null,
    created_at: new Date().toISOString(),
    merged_from: folders.map((f) => ({
      dir: resolve(f.dir),
      shard: f.shard,
      ...(f.manifest.run_id ? { run_id: f.manifest.run_id } : {}),
    })),
  });
  const succeeded = await concatJournals(folders, FILES.results, join(out, FILES.results));
  const failed = await concatJournals(folders, FILES.errors, join(out, FILES.errors));
  if (folders.some((f) => journalExists(join(f.dir, FILES.secrets))))
    await concatJournals(folders, FILES.secrets, join(out, FILES.secrets), 0o600);
  // The transactions journal too, so that a later resume into the merged folder rebuilds transactions.csv whole.
  if (folders.some((f) => journalExists(join(f.dir, FILES.txJournal)))) {
    mkdirSync(join(out, FILES.state), { recursive: true });
    await concatJournals(folders, FILES.txJournal, join(out, FILES.txJournal));
  }
  // The union found in pass 1 is journalled, so a later resume into the merged folder knows it too.
  mkdirSync(join(out, FILES.state), { recursive: true });
  writeColumnJournal(join(out, FILES.columns), checked.changes);
  // The shards' spend, summed: in summary.json, and in the folder's spend file for a run that resumes it.
  const spend = mergeSpend(folders);
  for (const note of spend.notes) log(`merge: warning: spend ${note}`);
  if (spend.history) writeSpendHistory(out, spend.history);
  if (folders.some((f) => existsSync(join(f.dir, FILES.timeline))))
    await mergeTimelines(
      folders.map((f) => ({ dir: f.dir, shard: f.shard })),
      out,
    );
  const stages = stageColumns(folders, log) ?? (await stagesFromData(folders));
  const decisions = new DecisionCounter([...stages.kinds].map(([id, kind]) => ({ id, kind })));
  const rebuilt = await rebuildOutputs({
    dir: out,
    stages: stages.columns,
    union: checked.union,
    formats: opts.formats ?? new Set(OUTPUT_FORMATS),
    transactionsJournal: existsSync(join(out, FILES.txJournal)) ? join(out, FILES.txJournal) : undefined,
    visitResult: (line) => decisions.add(line.stages),
    sampled: m.sample !== undefined,
  });
  const csv = rebuilt.results;
  const transactions = rebuilt.transactions;
  const versions = versionsSummary(decisions.versions, (await readTimeline(out))?.versions ?? []);
  const finished = missingShards.length === 0 && unfinished.length === 0;
  const summary: MergedSummary = {
    merged: true,
    pipeline: m.pipeline.name,
    input: m.input.path,
    out: opts.out,
    finished,
    shards: {
      count: n,
      merged: folders.map((f) => f.shard),
      missing: missingShards.map((k) => `${k}/${n}`),
      unfinished,
    },
    rows: { succeeded, failed, ...(missingRows ? { missing: missingRows.count } : {}) },
    ...(sampleOf(folders) ? { sample: sampleOf(folders) } : {}),
    // Workers run side by side: the merge took as long as the slowest of them.
    seconds: Math.max(0, ...folders.map((f) => f.summary?.seconds ?? 0)),
    services: sumServices(folders),
    ...(spend.summary ? { spend: spend.summary } : {}),
    decisions: decisions.counts,
    ...(versions ? { versions } : {}),
    results_csv: csv,
    ...(transactions !== undefined ? { transactions } : {}),
    ...(rebuilt.errorGroups.length > 0 ? { errors_by_field: [...rebuilt.errorGroups] } : {}),
    files: [...rebuilt.files],
    shard_summaries: Object.fromEntries(folders.map((f) => [f.shard, f.summary ?? null])),
  };
  writeSummary(out, summary);
  return { ok: true, ...base, rows: { succeeded, failed }, summary, spendNotes: spend.notes };
}

/** Sampled shards: the design with the rows outside it, from a shard's summary (the same in every one). */
function sampleOf(folders: readonly ShardFolder[]): MergedSummary['sample'] {
  return folders.map((f) => f.summary?.sample).find((x) => x !== undefined);
}

/** The lines printed at the end of `merge`. */
export function formatMergeReport(r: MergeReport): string {
  const lines: string[] = [];
  const given = `${r.shards.length} of ${r.shardCount} shard${r.shardCount > 1 ? 's' : ''}`;
  if (!r.ok) {
    lines.push(`merge FAILED: ${given} checked; nothing was written to ${r.out}`);
    if (r.problemCount > 0) {
      lines.push(
        `  ${r.problemCount} row${r.problemCount > 1 ? 's' : ''} break the invariant (each row exactly once, in the shard its key hashes to):`,
      );
      for (const p of r.problems)
        lines.push(
          `    row ${p.row} (key ${JSON.stringify(p.key)}): ${p.problem === 'duplicate' ? 'in both' : 'in the wrong shard:'} ${p.found.join(' and ')}`,
        );
      if (r.problemCount > r.problems.length) lines.push(`    ... and ${r.problemCount - r.problems.length} more`);
    }
    if (r.missingRows && r.missingRows.count > 0 && r.missingRows.strata) {
      lines.push(
        `  ${r.missingRows.count} row${r.missingRows.count > 1 ? 's' : ''} of the sample ${r.missingRows.count > 1 ? 'are' : 'is'} in no shard: ${r.missingRows.strata
          .slice(0, 20)
          .map((x) => `${x.missing} of stratum ${x.name}`)
          .join(', ')}${r.missingRows.strata.length > 20 ? ', ...' : ''}`,
      );
    } else if (r.missingRows && r.missingRows.count > 0) {
      lines.push(
        `  ${r.missingRows.count} data row${r.missingRows.count > 1 ? 's are' : ' is'} in no shard: rows ${r.missingRows.first.join(', ')}${r.missingRows.count > r.missingRows.first.length ? ', ...' : ''}`,
      );
    }
    return lines.join('\n');
  }
  const sum = r.summary!;
  lines.push(`Merged ${given}${sum.finished ? '' : ' (INCOMPLETE: see the warnings above)'}`);
  lines.push(`  rows: ${r.rows.succeeded} succeeded, ${r.rows.failed} in errors`);
  for (const svc of SERVICES) {
    const st = sum.services[svc];
    if (st) lines.push(`  ${svc}: ${st.attempts} calls, ${st.retries} retries, ${st.throttled_429} x 429 (all shards)`);
  }
  for (const [stage, counts] of Object.entries(sum.decisions)) {
    const parts = Object.entries(counts)
      .sort((a, b) => b[1] - a[1])
      .map(([d, c]) => `${d} ${c}`);
    if (parts.length > 0) lines.push(`  ${stage} decisions: ${parts.join(', ')}`);
  }
  if (sum.spend) lines.push(mergedSpendLine(sum.spend));
  for (const note of r.spendNotes ?? []) lines.push(`  spend: ${note}`);
  lines.push(`  output: ${r.out}`);
  return lines.join('\n');
}
