/**
 * The disk footprint of a finished run (issue 33): for `location` and `rescore`, a real run (`--rate off`,
 * the sandbox in another process) with --keep-journal, its folder measured; then the product's compaction
 * (src/output/journal/compact.ts) timed on that folder, at the level it uses and at gzip's default level 6 on a
 * copy, and the folder measured again; then the expansion a --retry-errors on a compacted folder pays first.
 * Figures per million rows (scaled from the run's rows: the journal grows by a line a row). The ratios that
 * matter: the folder after compaction over before, and level 1's time and size over level 6's.
 */
import { cpSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { compactFolder, expandFolder } from '../src/output/journal/compact.js';
import { CLIENT_ID, ratio, runCli, startSandboxProcess, TOKEN, writeLocationCsv, writeRescoreCsv } from './harness.js';

export interface FootprintRun {
  readonly pipeline: string;
  readonly rows: number;
  /** The whole folder, its journals plain (what a finished run left before compaction). */
  readonly folderMbPerMillion: number;
  /** The journals alone (results.ndjson, errors.ndjson, secrets.ndjson, .state/transactions.ndjson). */
  readonly journalMbPerMillion: number;
  /** The whole folder once compacted, and the journals' compacted size. */
  readonly compactedFolderMbPerMillion: number;
  readonly compactedJournalMbPerMillion: number;
  /** Compaction at the product's level, seconds per million rows. */
  readonly compactSecondsPerMillion: number;
  /** The same at gzip's level 6, on a copy: time and the journals' size. */
  readonly level6SecondsPerMillion: number;
  readonly level6JournalMbPerMillion: number;
  /** Putting the journals back plain (the start of a --retry-errors on a compacted folder). */
  readonly expandSecondsPerMillion: number;
  /** Folder after over before. */
  readonly folderRatio: number;
  /** What the compacted folder holds, file by file (MB per million rows; .state/ as one). */
  readonly filesAfterMbPerMillion: Readonly<Record<string, number>>;
}

/** Bytes of every file under `dir`. */
function folderBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    n += e.isDirectory() ? folderBytes(p) : statSync(p).size;
  }
  return n;
}

/** Bytes of each file at the folder's top, and of .state/ as a whole. */
function filesOf(dir: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of readdirSync(dir, { withFileTypes: true }))
    out[e.name] = e.isDirectory() ? folderBytes(join(dir, e.name)) : statSync(join(dir, e.name)).size;
  return out;
}

const JOURNAL_NAMES = ['results.ndjson', 'errors.ndjson', 'secrets.ndjson', join('.state', 'transactions.ndjson')];

function journalBytes(dir: string, suffix = ''): number {
  let n = 0;
  for (const name of JOURNAL_NAMES) {
    try {
      n += statSync(join(dir, name + suffix)).size;
    } catch {
      /* not written by this pipeline */
    }
  }
  return n;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return (performance.now() - t0) / 1000;
}

export async function benchFootprint(o: { readonly dir: string; readonly rows: number }): Promise<FootprintRun[]> {
  const sb = await startSandboxProcess(['off']);
  const env = { BRE_BASE_URL: sb.url, BRE_CLIENT_ID: CLIENT_ID, BRE_AUTH_TOKEN: TOKEN };
  const out: FootprintRun[] = [];
  try {
    for (const pipeline of ['location', 'rescore'] as const) {
      const base = join(o.dir, `footprint-${pipeline}`);
      rmSync(base, { recursive: true, force: true });
      mkdirSync(base, { recursive: true });
      let input: string;
      if (pipeline === 'location') {
        input = join(base, 'input.csv');
        await writeLocationCsv(input, o.rows);
      } else input = writeRescoreCsv(o.rows, 'bench-footprint');
      const folder = join(base, 'out');
      try {
        const run = await runCli(
          ['run', pipeline, '--input', input, '--out', folder, '--rate', 'off', '--keep-journal'],
          env,
        );
        if (run.code !== 0 && run.code !== 1)
          throw new Error(`footprint: ${pipeline} run exited ${run.code}: ${run.stderr}`);
      } finally {
        if (pipeline === 'rescore') rmSync(input, { force: true });
      }
      const perMillion = (x: number) => (x * 1_000_000) / o.rows;
      const mb = (bytes: number) => Math.round(perMillion(bytes) / 1e5) / 10;
      const s = (seconds: number) => Math.round(perMillion(seconds) * 10) / 10;
      const folderBefore = folderBytes(folder);
      const journalBefore = journalBytes(folder);
      const copy = join(base, 'level6');
      cpSync(folder, copy, { recursive: true });
      const compactSeconds = await timed(() => compactFolder(folder));
      const level6Seconds = await timed(() => compactFolder(copy, 6));
      const folderAfter = folderBytes(folder);
      const journalAfter = journalBytes(folder, '.gz');
      const level6Journal = journalBytes(copy, '.gz');
      const expandSeconds = await timed(() => expandFolder(copy));
      out.push({
        pipeline,
        rows: o.rows,
        folderMbPerMillion: mb(folderBefore),
        journalMbPerMillion: mb(journalBefore),
        compactedFolderMbPerMillion: mb(folderAfter),
        compactedJournalMbPerMillion: mb(journalAfter),
        compactSecondsPerMillion: s(compactSeconds),
        level6SecondsPerMillion: s(level6Seconds),
        level6JournalMbPerMillion: mb(level6Journal),
        expandSecondsPerMillion: s(expandSeconds),
        folderRatio: ratio(folderAfter, folderBefore),
        filesAfterMbPerMillion: Object.fromEntries(Object.entries(filesOf(folder)).map(([k, v]) => [k, mb(v)])),
      });
      rmSync(base, { recursive: true, force: true });
    }
  } finally {
    sb.child.kill();
  }
  return out;
}
