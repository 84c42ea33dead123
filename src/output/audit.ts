/**
 * manifest.json as a record that can be checked (`bre-batch verify`, src/output/verify.ts): each session of the
 * run (when, on which host, as which user, with which bre-batch and options; at its end, the rows it did and
 * its exit code; a session that never recorded an end was killed, and the next one says so), and at each end,
 * the size and sha256 of every output file as it was left.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../config/paths.js';
import { FILES, readManifest, writeManifest, type Manifest, type ManifestSession } from '@bre-batch/formats';

let version: string | undefined;

/** This bre-batch's version (package.json). */
function toolVersion(): string {
  version ??= (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  return version;
}

function whoAmI(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? '(unknown)';
  }
}

/**
 * The files a run's end leaves that the record covers: the journals (plain or gzip'ed), the results files and
 * summary.json. report.html is not: it is drawn from them, and `bre-batch report` draws it again at any time.
 */
const RECORDED = [
  FILES.results,
  FILES.errors,
  FILES.secrets,
  FILES.resultsCsv,
  FILES.resultsParquet,
  FILES.errorsParquet,
  FILES.transactions,
  FILES.transactionsParquet,
  FILES.summary,
];

/** The recorded files present in the folder, by the name they have on disk (a journal's `.gz` included). */
export function recordedFiles(dir: string): string[] {
  return RECORDED.flatMap((f) => [f, `${f}.gz`]).filter((f) => existsSync(join(dir, f)));
}

export async function fileSha256(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 })) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** What a session stamps on every row it writes: the run's id and the session's number. */
export interface RowProvenance {
  readonly runId: string;
  readonly session: number;
}

/**
 * A new session in the folder's manifest (read as the run opened it): sessions before it that recorded no end
 * were killed; the rows they did are those found done beyond what the ended sessions did (known when one was).
 * The run's id is made by the first session (or the first of this release in an older folder) and kept after.
 */
export function startSession(
  dir: string,
  x: { readonly options: Record<string, unknown>; readonly doneAtOpen: number },
): RowProvenance | undefined {
  const m = readManifest(dir);
  if (!m) return undefined;
  const sessions = [...(m.sessions ?? [])];
  const open = sessions.filter((s) => s.ended_at === undefined && s.killed !== true);
  const counted = sessions.reduce((n, s) => n + (s.rows ?? 0), 0);
  for (const s of open) {
    const i = sessions.indexOf(s);
    sessions[i] = { ...s, killed: true, rows: open.length === 1 ? Math.max(0, x.doneAtOpen - counted) : null };
  }
  const session: ManifestSession = {
    session: sessions.length + 1,
    started_at: new Date().toISOString(),
    host: hostname(),
    user: whoAmI(),
    pid: process.pid,
    tool_version: toolVersion(),
    options: x.options,
    rows: null,
  };
  const runId = m.run_id ?? randomUUID();
  writeManifest(dir, {
    ...m,
    run_id: runId,
    tool_version: m.tool_version ?? toolVersion(),
    sessions: [...sessions, session],
  });
  return { runId, session: session.session };
}

/** The size and sha256 of every recorded file of the folder as it is now. */
async function hashOutputs(dir: string): Promise<Record<string, { size: number; sha256: string }>> {
  const files: Record<string, { size: number; sha256: string }> = {};
  for (const f of recordedFiles(dir)) {
    const path = join(dir, f);
    files[f] = { size: statSync(path).size, sha256: await fileSha256(path) };
  }
  return files;
}

/**
 * This process's session ends: its rows and exit code, and (when the end files were written) the output files
 * as they are left. Nothing when the folder has no session of this process (a dry run, a folder without one).
 */
export async function endSession(
  dir: string,
  end: { readonly exitCode: number; readonly rows: number | null; readonly outputs: boolean },
): Promise<void> {
  const m = readManifest(dir);
  const sessions = [...(m?.sessions ?? [])];
  const i = sessions.findLastIndex((s) => s.pid === process.pid && s.ended_at === undefined && s.killed !== true);
  if (!m || i < 0) return;
  sessions[i] = { ...sessions[i], rows: end.rows, ended_at: new Date().toISOString(), exit_code: end.exitCode };
  const next: Manifest = { ...m, sessions };
  if (end.outputs)
    next.outputs = {
      recorded_at: new Date().toISOString(),
      session: sessions[i].session,
      files: await hashOutputs(dir),
    };
  writeManifest(dir, next);
}

/** A folder written by no run's session (a merge): its output files as they are now. */
export async function recordOutputs(dir: string): Promise<void> {
  const m = readManifest(dir);
  if (!m) return;
  writeManifest(dir, {
    ...m,
    tool_version: m.tool_version ?? toolVersion(),
    outputs: { recorded_at: new Date().toISOString(), session: 0, files: await hashOutputs(dir) },
  });
}
