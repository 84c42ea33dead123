/**
 * `bre-batch verify FOLDER`: the folder checked against its own record (manifest.json, src/output/audit.ts) and
 * the contract's invariant. Differences are named one by one:
 *   - every output file recorded at the last end: present, of the recorded size and sha256; none unrecorded;
 *   - a file input: its sha256 as recorded (the input the run read is the one there now);
 *   - every row once: no row twice in results, in errors, or in both; for a finished run, every data row of the
 *     input (up to --limit, of the folder's shard, of every shard for a merged folder) in one of them, and none
 *     that is not.
 * Works on finished, resumed, compacted (gzip'ed journals) and merged folders. What a hash proves is that a file
 * is the one the run left, not who ran it: the sessions' hosts and users are as the machine told them.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BreError } from '../errors.js';
import { isInputFormat, readRowBatches, resolveFormat } from '../input/read.js';
import { lineKey, shardOf } from '../input/shard.js';
import { fileSha256, recordedFiles } from './audit.js';
import { FILES, readManifest, type Manifest } from './format/index.js';
import { RowSet } from './journal/bitset.js';
import { journalExists, journalLines } from './journal-file.js';

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

export async function verifyFolder(dir: string): Promise<VerifyReport> {
  const m = readManifest(dir);
  if (!m)
    throw new BreError('USAGE', `Expected a bre-batch output folder, got ${resolve(dir)}: it has no manifest.json`, {
      field: 'folder',
    });
  const r: VerifyReport = { folder: resolve(dir), checked: [], problems: [], notes: [] };
  await checkFiles(dir, m, r);
  const input = await checkInput(m, r);
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

/** The input's path when it can be read again as the run read it, after its sha256 is checked. */
async function checkInput(m: Manifest, r: VerifyReport): Promise<string | undefined> {
  const i = m.input;
  if (i.source) {
    r.notes.push(
      `database input (${i.source.url}): its rows and keys are not read again by verify; the rows of the folder are checked among themselves`,
    );
    return undefined;
  }
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
  return i.path;
}

/** The rows of a journal into `into`; those found twice (in it, or in `other`) listed in `twice`. */
async function journalRows(path: string, into: RowSet, other: RowSet | null, twice: number[]): Promise<number> {
  let n = 0;
  for await (const l of journalLines(path)) {
    if (!l.text) continue;
    const row = rowOf(l.text);
    if (row === null) continue;
    n += 1;
    if (!into.add(row) || other?.has(row)) twice.push(row);
  }
  return n;
}

const ROW = /^\{"row":(\d+)[,}]/;

function rowOf(text: string): number | null {
  const m = ROW.exec(text);
  if (m) return Number(m[1]);
  try {
    const row = (JSON.parse(text) as { row?: unknown }).row;
    return typeof row === 'number' && Number.isInteger(row) ? row : null;
  } catch {
    return null;
  }
}

async function checkRows(dir: string, m: Manifest, inputPath: string | undefined, r: VerifyReport): Promise<void> {
  const results = new RowSet();
  const errors = new RowSet();
  const twice: number[] = [];
  const resultsPath = join(dir, FILES.results);
  const errorsPath = join(dir, FILES.errors);
  if (!journalExists(resultsPath) && !journalExists(errorsPath)) {
    r.problems.push('results.ndjson and errors.ndjson: neither is in the folder');
    return;
  }
  const nResults = await journalRows(resultsPath, results, null, twice);
  const nErrors = await journalRows(errorsPath, errors, results, twice);
  if (twice.length > 0)
    r.problems.push(`rows written more than once (in results, errors or both): ${some(twice, twice.length)}`);
  const s = summaryOf(dir);
  if (s && (s.rows.succeeded !== nResults || s.rows.failed !== nErrors))
    r.problems.push(
      `summary.json counts ${s.rows.succeeded} results and ${s.rows.failed} errors; the journals hold ${nResults} and ${nErrors}`,
    );
  r.checked.push(`${nResults} result lines and ${nErrors} error lines: every row at most once`);
  if (!inputPath) return;
  if (m.sample) {
    r.notes.push(
      'a sampled run: the rows it had to do are its sample, which verify does not draw again; rows outside the input are still looked for',
    );
  }
  if (s?.finished !== true)
    r.notes.push('the run has not finished: rows not done yet are not differences (a resume does them)');
  const expected = await inputRows(inputPath, m, m.sample === undefined);
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
