/**
 * Room on the output folder's disk: `--plan` and the start of every run estimate what the output will take
 * (the journal's bytes a row times the rows still to do, plus the end files as shares of the journal's bytes)
 * and warn, in one line, when the disk has less free room than that. A run that fills its disk all the same
 * stops with DISK_FULL and resumes when re-run; this is the warning before the night. The shares and how they
 * were measured: docs/decisions/room-estimate.md.
 */
import { existsSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ServiceName } from '@bre-batch/core/types';
import { countText } from '@bre-batch/core/units';
import { FILES } from '@bre-batch/formats';
import { journalSize } from '@bre-batch/formats/journal-file';
import type { OutputFormat } from './spool/output-formats.js';

/** The end files' bytes as a share of the journal's, at their peak: results.csv beside its spool (docs/decisions/room-estimate.md). */
const END_FILES_SHARE: Readonly<Record<OutputFormat, number>> = { csv: 0.6, parquet: 0.3 };

/** The end files left once the run has finished: results.csv without its spool. */
const LEFT_FILES_SHARE: Readonly<Record<OutputFormat, number>> = { csv: 0.3, parquet: 0.3 };

/**
 * A compacted journal's size as a share of the plain one's: the larger of location's and rescore's measured at
 * gzip level 1 (docs/performance.md, `npm run bench -- --only footprint`), rounded up.
 */
const COMPACTED_SHARE = 0.05;

/**
 * Journal bytes a row per stage calling each service, before any row is written (measured on the sandbox:
 * location 680 B, bureau_mobile 1,170 B, bureau_features 450 B, aa_transactions 2,300 B a row plus some
 * 35 KB of transactions; rounded up).
 */
const TYPICAL_ROW_BYTES: Readonly<Record<ServiceName, number>> = { workflow: 1_500, bureau: 500, account: 10_000 };

/** Rows a run writes before it measures its own bytes a row and checks the room. */
export const ROOM_SAMPLE_ROWS = 100;

export interface RoomEstimate {
  /** Rows still to write to the journal. */
  readonly rows: number;
  readonly bytesPerRow: number;
  /** Whether bytesPerRow was measured in the folder (else assumed, TYPICAL_ROW_BYTES). */
  readonly measured: boolean;
  readonly journalBytes: number;
  readonly endBytes: number;
  /** The peak: the journal still to write and the end files with their spool. */
  readonly totalBytes: number;
  /** What the folder holds once finished: every row's journal (compacted unless kept) and the end files. */
  readonly leftBytes?: number;
  /** Of leftBytes, the journal's bytes. */
  readonly leftJournalBytes?: number;
  /** Whether the journal is kept uncompressed (--keep-journal). */
  readonly keepJournal?: boolean;
}

/**
 * Pure: the room `rows` more rows need at `bytesPerRow` in the journal, with the end files for them and for
 * the `doneRows` already in the folder (the end files are rebuilt for every row).
 */
export function estimateRoom(o: {
  readonly rows: number;
  readonly doneRows?: number;
  readonly bytesPerRow: number;
  readonly measured: boolean;
  readonly formats: ReadonlySet<OutputFormat>;
  /** --keep-journal: the journal is left uncompressed once the run has finished. */
  readonly keepJournal?: boolean;
}): RoomEstimate {
  const rows = Math.max(0, o.rows);
  const share = [...o.formats].reduce((sum, f) => sum + END_FILES_SHARE[f], 0);
  const leftShare = [...o.formats].reduce((sum, f) => sum + LEFT_FILES_SHARE[f], 0);
  const journalBytes = rows * o.bytesPerRow;
  const allRowsBytes = (rows + Math.max(0, o.doneRows ?? 0)) * o.bytesPerRow;
  const endBytes = allRowsBytes * share;
  const leftJournalBytes = allRowsBytes * (o.keepJournal ? 1 : COMPACTED_SHARE);
  return {
    rows,
    bytesPerRow: o.bytesPerRow,
    measured: o.measured,
    journalBytes,
    endBytes,
    totalBytes: journalBytes + endBytes,
    leftBytes: leftJournalBytes + allRowsBytes * leftShare,
    leftJournalBytes,
    keepJournal: o.keepJournal === true,
  };
}

/** Pure: bytes a row for a pipeline calling these services (one entry per stage), before any row is written. */
export function assumedRowBytes(services: readonly ServiceName[]): number {
  return services.reduce((sum, s) => sum + TYPICAL_ROW_BYTES[s], 0);
}

/** 1.2 GB, 340 MB, 12 KB, 512 B: decimal units, as df -H and file managers show them. */
export function formatBytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
  let v = n;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i += 1;
  }
  return i === 0 ? `${Math.round(v)} B` : `${v >= 100 ? Math.round(v) : v.toFixed(1)} ${units[i]}`;
}

/** Pure: the one-line warning when `freeBytes` is short of the estimate; undefined when there is room. */
export function roomWarning(est: RoomEstimate, freeBytes: number, dir: string): string | undefined {
  if (freeBytes >= est.totalBytes) return undefined;
  const perRow = `${formatBytes(est.bytesPerRow)} a row${est.measured ? '' : ' assumed'}`;
  return (
    `warning: the disk of ${dir} has ${formatBytes(freeBytes)} free, and this run's output needs about ${formatBytes(est.totalBytes)} ` +
    `(${countText(est.rows)} rows at ${perRow}: ${formatBytes(est.journalBytes)} of journal, then ${formatBytes(est.endBytes)} for the end files): ` +
    'free some room or choose another --out (a run stopped by a full disk resumes when re-run)'
  );
}

/** `dir` if it exists, else its nearest existing parent: the folder whose disk a folder not made yet goes on. */
export function existingFolder(dir: string): string {
  let at = dir;
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  return at;
}

/** Bytes free for this user on the disk of `dir` (or of its nearest existing parent); undefined when unknown. */
export async function freeBytes(dir: string): Promise<number | undefined> {
  const at = existingFolder(dir);
  try {
    const s = await statfs(at);
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}

/** The journals of a folder: what a row's bytes are measured on. */
const JOURNALS = [FILES.results, FILES.errors, FILES.retrying, FILES.txJournal, FILES.secrets, FILES.columns] as const;

/** Bytes of a folder's journals as NDJSON (a compacted one's plain size: what a row takes while a run writes it). */
export function journalBytesIn(dir: string): number {
  let n = 0;
  for (const name of JOURNALS) n += journalSize(join(dir, name));
  return n;
}
