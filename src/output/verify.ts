/**
 * `bre-batch verify FOLDER`: the folder checked against its own record (manifest.json, src/output/audit.ts) and
 * the contract's invariant. Differences are named one by one:
 *   - every output file recorded at the last end: present, of the recorded size and sha256; none unrecorded;
 *   - a file input: its sha256 as recorded (the input the run read is the one there now); a database input: its
 *     rows read again and their keys set against the folder's (./verify-db.ts);
 *   - every row once: no row twice in results, in errors, or in both; for a finished run, every data row of the
 *     input (up to --limit, of the folder's shard, of every shard for a merged folder) in one of them, and none
 *     that is not;
 *   - every row stamped with this folder's run id (a merged folder's: one of its shards') and one of its
 *     recorded sessions.
 * Works on finished, resumed, compacted (gzip'ed journals) and merged folders. What a hash proves is that a file
 * is the one the run left, not who ran it: the sessions' hosts and users are as the machine told them.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { DbUrl } from '../db/index.js';
import { BreError } from '@bre-batch/core/errors';
import { isInputFormat, readRowBatches, resolveFormat } from '@bre-batch/formats/input/read';
import { lineKey, shardOf } from '../input/shard.js';
import { fileSha256, recordedFiles } from './audit.js';
import { FILES, readManifest, type Manifest } from '@bre-batch/formats';
import { RowSet } from './journal/bitset.js';
import { journalExists, journalLines } from '@bre-batch/formats/journal-file';
import { checkDbRows, FolderKeys, inputUrl } from './verify-db.js';

export interface VerifyReport {
  readonly folder: string;
  /** What was checked, in words (each a line of the output). */
  readonly checked: string[];
  /** Each difference found; empty when the folder is as recorded and the invariant holds. */
  readonly problems: string[];
  /** What could not be checked, and why. */
  readonly notes: string[];
}

const EXAMPLES = 10;

/** Up to EXAMPLES of a list, with how many more there are. */
function some(rows: readonly number[], total: number): string {
  return `${rows.slice(0, EXAMPLES).join(', ')}${total > EXAMPLES ? ` and ${total - EXAMPLES} more` : ''}`;
}

export interface VerifyOptions {
  /** A database input's URL as given to verify (--input): for what the record leaves out (./verify-db.ts). */
  readonly input?: DbUrl;
}

export async function verifyFolder(dir: string, o: VerifyOptions = {}): Promise<VerifyReport> {
  const m = readManifest(dir);
  if (!m)
    throw new BreError('USAGE', `Expected a bre-batch output folder, got ${resolve(dir)}: it has no manifest.json`, {
      field: 'folder',
    });
  const r: VerifyReport = { folder: resolve(dir), checked: [], problems: [], notes: [] };
  await checkFiles(dir, m, r);
  const input = await checkInput(m, r, o);
  await checkRows(dir, m, input, r);
  return r;
}

async function checkFiles(dir: string, m: Manifest, r: VerifyReport): Promise<void> {
  const rec = m.outputs;
  if (!rec) {
    r.problems.push(
      'manifest.json records no output files: the folder was made by an older bre-batch, or no session has reached its end',
    );
    return;
  }
  for (const [name, want] of Object.entries(rec.files)) {
    const path = join(dir, name);
    if (!existsSync(path)) {
      r.problems.push(`${name}: recorded at ${rec.recorded_at}, now missing`);
      continue;
    }
    const size = statSync(path).size;
    const sha256 = await fileSha256(path);
    if (sha256 !== want.sha256)
      r.problems.push(
        `${name}: changed since it was recorded at ${rec.recorded_at} (sha256 ${want.sha256.slice(0, 16)}..., now ${sha256.slice(0, 16)}...; ${want.size} bytes, now ${size})`,
      );
  }
  for (const name of recordedFiles(dir))
    if (!Object.hasOwn(rec.files, name)) r.problems.push(`${name}: not in the record of ${rec.recorded_at}`);
  r.checked.push(
    `${Object.keys(rec.files).length} output files against their sha256 recorded at ${rec.recorded_at} (session ${rec.session})`,
  );
}

/** How the input can be read again: a file (its sha256 checked first) or a database; undefined when it cannot. */
type InputToRead = { readonly file: string } | { readonly db: DbUrl };

async function checkInput(m: Manifest, r: VerifyReport, o: VerifyOptions): Promise<InputToRead | undefined> {
  const i = m.input;
  if (i.source) return { db: inputUrl(m, o.input) };
  if (o.input)
    throw new BreError('USAGE', `Expected no --input: ${r.folder} was made from the file ${i.path}`, {
      field: 'input',
    });
  if (i.path === '-' || i.sha256 === null) {
    r.notes.push('the input was read from stdin: there is no file to check it against');
    return undefined;
  }
  if (!existsSync(i.path)) {
    r.problems.push(`input ${i.path}: missing (the run read ${i.size ?? '?'} bytes, sha256 ${i.sha256})`);
    return undefined;
  }
  const sha256 = await fileSha256(i.path);
  if (sha256 !== i.sha256) {
    r.problems.push(
      `input ${i.path}: changed since the run (sha256 ${i.sha256.slice(0, 16)}..., now ${sha256.slice(0, 16)}...; ${i.size ?? '?'} bytes, now ${statSync(i.path).size})`,
    );
    return undefined;
  }
  r.checked.push(`input ${i.path}: sha256 as the run read it`);
  return { file: i.path };
}

/** What the journals' lines say beyond their rows: the keys (for a database input) and who wrote them. */
interface LineTally {
  readonly keys: FolderKeys | undefined;
  /** Lines by the run id they carry, then by session. */
  readonly runs: Map<string, Map<number, number>>;
  /** Lines that carry no run id (written by a bre-batch before rows carried one). */
  unstamped: number;
}

/** The rows of a journal into `into`; those found twice (in it, or in `other`) listed in `twice`. */
async function journalRows(
  path: string,
  into: RowSet,
  other: RowSet | null,
  twice: number[],
  tally: LineTally,
): Promise<number> {
  let n = 0;
  for await (const l of journalLines(path)) {
    if (!l.text) continue;
    const head = headOf(l.text);
    if (head === null) continue;
    const { row } = head;
    n += 1;
    if (!into.add(row) || other?.has(row)) twice.push(row);
    tally.keys?.add(head.key);
    if (head.runId === undefined) tally.unstamped += 1;
    else {
      let sessions = tally.runs.get(head.runId);
      if (!sessions) tally.runs.set(head.runId, (sessions = new Map()));
      sessions.set(head.session, (sessions.get(head.session) ?? 0) + 1);
    }
  }
  return n;
}

/** `{"row":N,`, an error line's `"line":L,`, `"key":...`, then the run's id and session: as a run writes both. */
const HEAD =
  /^\{"row":(\d+),(?:"line":(?:null|-?\d+),)?"key":(null|"(?:[^"\\]|\\.)*")(?:,"run_id":("(?:[^"\\]|\\.)*"),"run_session":(\d+))?[,}]/;

type LineHead =
  | { readonly row: number; readonly key: string | null; readonly runId: string; readonly session: number }
  | { readonly row: number; readonly key: string | null; readonly runId?: undefined; readonly session?: undefined };

function headOf(text: string): LineHead | null {
  const m = HEAD.exec(text);
  if (m) {
    const row = Number(m[1]);
    const key = JSON.parse(m[2]) as string | null;
    return m[3] === undefined ? { row, key } : { row, key, runId: JSON.parse(m[3]) as string, session: Number(m[4]) };
  }
  try {
    const v = JSON.parse(text) as { row?: unknown; key?: unknown; run_id?: unknown; run_session?: unknown };
    if (typeof v.row !== 'number' || !Number.isInteger(v.row)) return null;
    const key = typeof v.key === 'string' ? v.key : null;
    return typeof v.run_id === 'string'
      ? { row: v.row, key, runId: v.run_id, session: typeof v.run_session === 'number' ? v.run_session : 0 }
      : { row: v.row, key };
  } catch {
    return null;
  }
}

/** Every line's run id is the folder's (or a merged shard's), and its session one the folder recorded. */
function checkRuns(m: Manifest, tally: LineTally, r: VerifyReport): void {
  const shards = new Set((m.merged_from ?? []).flatMap((f) => (f.run_id ? [f.run_id] : [])));
  const sessions = m.sessions?.length ?? 0;
  const perSession: string[] = [];
  for (const [runId, bySession] of tally.runs) {
    const lines = [...bySession.values()].reduce((a, b) => a + b, 0);
    if (runId === m.run_id) {
      const unknown = [...bySession.keys()].filter((s) => s < 1 || s > sessions).sort((a, b) => a - b);
      if (unknown.length > 0)
        r.problems.push(
          `rows carry run_session ${unknown.join(', ')}, which manifest.json does not record (it records ${sessions} session${sessions === 1 ? '' : 's'})`,
        );
      for (const [s, n] of [...bySession].sort((a, b) => a[0] - b[0])) perSession.push(`session ${s}: ${n}`);
    } else if (!shards.has(runId))
      r.problems.push(
        `${lines} rows carry run_id ${runId}, ${m.merged_from ? "none of the merged shards' runs" : `not this folder's run (${m.run_id ?? 'none recorded'})`}`,
      );
  }
  if (tally.unstamped > 0)
    r.notes.push(
      `${tally.unstamped} rows carry no run_id: an earlier bre-batch wrote them, before rows carried their run`,
    );
  if (m.merged_from && (shards.size > 0 || tally.runs.size > 0))
    r.checked.push(
      `every row's run_id is one of the ${shards.size} merged shards' runs${perSession.length > 0 ? ` or this folder's (${m.run_id}; ${perSession.join(', ')})` : ''}`,
    );
  else if (m.run_id !== undefined)
    r.checked.push(
      `every row's run_id is this run's (${m.run_id}) and its run_session one of the ${sessions} recorded (rows by session: ${perSession.join(', ') || 'none'})`,
    );
}

async function checkRows(dir: string, m: Manifest, input: InputToRead | undefined, r: VerifyReport): Promise<void> {
  const results = new RowSet();
  const errors = new RowSet();
  const twice: number[] = [];
  const resultsPath = join(dir, FILES.results);
  const errorsPath = join(dir, FILES.errors);
  if (!journalExists(resultsPath) && !journalExists(errorsPath)) {
    r.problems.push('results.ndjson and errors.ndjson: neither is in the folder');
    return;
  }
  const tally: LineTally = {
    keys: input && 'db' in input ? new FolderKeys() : undefined,
    runs: new Map(),
    unstamped: 0,
  };
  const nResults = await journalRows(resultsPath, results, null, twice, tally);
  const nErrors = await journalRows(errorsPath, errors, results, twice, tally);
  if (twice.length > 0)
    r.problems.push(`rows written more than once (in results, errors or both): ${some(twice, twice.length)}`);
  const s = summaryOf(dir);
  if (s && (s.rows.succeeded !== nResults || s.rows.failed !== nErrors))
    r.problems.push(
      `summary.json counts ${s.rows.succeeded} results and ${s.rows.failed} errors; the journals hold ${nResults} and ${nErrors}`,
    );
  r.checked.push(`${nResults} result lines and ${nErrors} error lines: every row at most once`);
  checkRuns(m, tally, r);
  if (!input) return;
  if ('db' in input) {
    const db = await checkDbRows(m, input.db, tally.keys!, {
      finished: s?.finished === true,
      sampled: m.sample !== undefined,
    });
    r.problems.push(...db.problems);
    r.checked.push(...db.checked);
    r.notes.push(...db.notes);
    return;
  }
  if (m.sample) {
    r.notes.push(
      'a sampled run: the rows it had to do are its sample, which verify does not draw again; rows outside the input are still looked for',
    );
  }
  if (s?.finished !== true)
    r.notes.push('the run has not finished: rows not done yet are not differences (a resume does them)');
  const expected = await inputRows(input.file, m, m.sample === undefined);
  const missing: number[] = [];
  let nMissing = 0;
  const extra: number[] = [];
  for (const set of [results, errors])
    for (const row of set.rows())
      if (row > expected.read || (expected.mine && !expected.mine.has(row))) extra.push(row);
  if (s?.finished === true && expected.mine)
    for (const row of expected.mine.rows())
      if (!results.has(row) && !errors.has(row)) {
        nMissing += 1;
        if (missing.length < EXAMPLES) missing.push(row);
      }
  if (nMissing > 0)
    r.problems.push(`${nMissing} input rows are in neither results nor errors: rows ${some(missing, nMissing)}`);
  if (extra.length > 0)
    r.problems.push(
      `rows that are not rows of this input${m.shard ? ` (shard ${m.shard})` : ''}: ${some(extra, extra.length)}`,
    );
  r.checked.push(
    `every data row of the input${m.limit !== null ? ` up to --limit ${m.limit}` : ''}${m.shard ? ` in shard ${m.shard}` : m.merged_from ? ' (every shard merged)' : ''} once, in results or errors`,
  );
}

/** The input's data rows as the run read them: how many there are, and (unless sampled) which are the folder's. */
async function inputRows(path: string, m: Manifest, collect: boolean): Promise<{ read: number; mine: RowSet | null }> {
  const format = isInputFormat(m.input.format) ? m.input.format : resolveFormat(path);
  const reading = m.input.reading;
  const shard = m.shard && !m.merged_from ? /^(\d+)\/(\d+)$/.exec(m.shard) : null;
  const mine = collect ? new RowSet() : null;
  let read = 0;
  for await (const batch of readRowBatches(path, {
    format,
    ...(reading?.encoding ? { encoding: reading.encoding } : {}),
    ...(reading?.delimiter ? { delimiter: reading.delimiter } : {}),
  })) {
    for (const row of batch) {
      if (m.limit !== null && row.row > m.limit) return { read, mine };
      read = row.row;
      if (shard && shardOf(lineKey(row, m.key), row.row, Number(shard[2])) !== Number(shard[1])) continue;
      mine?.add(row.row);
    }
  }
  return { read, mine };
}

/** What verify reads of summary.json, a run's or a merge's: whether it finished, and its row totals. */
function summaryOf(dir: string): { finished: boolean; rows: { succeeded: number; failed: number } } | undefined {
  try {
    const s = JSON.parse(readFileSync(join(dir, FILES.summary), 'utf8')) as {
      finished?: unknown;
      rows?: { succeeded?: unknown; failed?: unknown };
    };
    const { succeeded, failed } = s.rows ?? {};
    if (typeof succeeded !== 'number' || typeof failed !== 'number') return undefined;
    return { finished: s.finished === true, rows: { succeeded, failed } };
  } catch {
    return undefined;
  }
}
