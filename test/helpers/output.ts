/** Inputs the e2e tests generate, and output folders read back and checked against the contract. */
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';

/**
 * A journal's text whichever form it is in: plain, or gzip'ed once its run finished (X.gz; X wins when both
 * are there, as packages/formats/src/journal-file.ts reads them). '' when neither exists.
 */
export function journalText(path: string): string {
  if (existsSync(path)) return readFileSync(path, 'utf8');
  if (existsSync(`${path}.gz`)) return gunzipSync(readFileSync(`${path}.gz`)).toString('utf8');
  return '';
}

/** The path of the form a journal is in on disk (X, else X.gz). */
export function journalPath(path: string): string {
  return existsSync(path) || !existsSync(`${path}.gz`) ? path : `${path}.gz`;
}

/** Whether a journal is there in either form. */
export function journalExists(path: string): boolean {
  return existsSync(path) || existsSync(`${path}.gz`);
}

/** Writes an N-row CSV for the `location` pipeline (reference_id LOC-000001...); returns its path. */
export function locationCsv(dir: string, n: number, name = 'input.csv'): string {
  const lines = ['reference_id,user_id,lead_id,latitude,longitude'];
  for (let i = 1; i <= n; i += 1) {
    const id = String(i).padStart(6, '0');
    // Spread over India (lat 10..30, lon 72..88), deterministic.
    const lat = (10 + ((i * 7919) % 2000) / 100).toFixed(4);
    const lon = (72 + ((i * 104729) % 1600) / 100).toFixed(4);
    lines.push(`LOC-${id},user${id},lead${id},${lat},${lon}`);
  }
  const path = join(dir, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

/**
 * The shipped `rescore` sample (bureau features, then a workflow: two priced services) repeated to `n` rows
 * with fresh keys (RS-000001...); its file columns made absolute, inside samples/ (the run's --files-root).
 */
export function rescoreCsv(dir: string, n: number, name = 'rescore.csv'): string {
  const samples = resolve(import.meta.dirname, '..', '..', 'samples');
  const [header, ...rows] = readFileSync(join(samples, 'rescore.csv'), 'utf8').trimEnd().split('\n');
  const cols = header.split(',');
  const pathCols = ['bureau_report_path', 'bank_data_path'].map((c) => cols.indexOf(c));
  const out = [header];
  for (let i = 0; i < n; i += 1) {
    const cells = rows[i % rows.length].split(',');
    cells[0] = `RS-${String(i + 1).padStart(6, '0')}`;
    for (const c of pathCols) if (c >= 0 && cells[c]) cells[c] = join(samples, cells[c]);
    out.push(cells.join(','));
  }
  const path = join(dir, name);
  writeFileSync(path, `${out.join('\n')}\n`);
  return path;
}

/** The reference_id of data row `row` of locationCsv. */
export function locationKey(row: number): string {
  return `LOC-${String(row).padStart(6, '0')}`;
}

export interface OutputLine {
  readonly row: number;
  readonly key: unknown;
  readonly [k: string]: unknown;
}

export interface RunFolder {
  readonly results: OutputLine[];
  readonly errors: OutputLine[];
  readonly summary: any;
  /** manifest.json (undefined when missing). */
  readonly manifest: any;
  /** results.csv lines, header first (empty when the file is missing). */
  readonly csvLines: string[];
  /** Lines of results/errors that did not parse (should be none after a finished run). */
  readonly unparsable: number;
}

function ndjsonLines(path: string): { lines: OutputLine[]; bad: number } {
  const lines: OutputLine[] = [];
  let bad = 0;
  for (const text of journalText(path).split('\n')) {
    if (text === '') continue;
    try {
      lines.push(JSON.parse(text) as OutputLine);
    } catch {
      bad += 1;
    }
  }
  return { lines, bad };
}

/** Number of complete lines (ending in \n) in a file or a journal in either form; 0 when it does not exist. */
export function countLines(path: string): number {
  if (!journalExists(path)) return 0;
  const buf = Buffer.from(journalText(path));
  let n = 0;
  for (let i = buf.indexOf(0x0a); i !== -1; i = buf.indexOf(0x0a, i + 1)) n += 1;
  return n;
}

export function readOutput(dir: string): RunFolder {
  const r = ndjsonLines(join(dir, 'results.ndjson'));
  const e = ndjsonLines(join(dir, 'errors.ndjson'));
  const summaryPath = join(dir, 'summary.json');
  const manifestPath = join(dir, 'manifest.json');
  const csvPath = join(dir, 'results.csv');
  const csvText = existsSync(csvPath) ? readFileSync(csvPath, 'utf8') : '';
  return {
    results: r.lines,
    errors: e.lines,
    summary: existsSync(summaryPath) ? JSON.parse(readFileSync(summaryPath, 'utf8')) : undefined,
    manifest: existsSync(manifestPath) ? JSON.parse(readFileSync(manifestPath, 'utf8')) : undefined,
    csvLines: csvText === '' ? [] : csvText.replace(/\n$/, '').split('\n'),
    unparsable: r.bad + e.bad,
  };
}

/**
 * The contract's invariant after a finished run: every data row 1..inputRows appears exactly once across
 * results and errors, never in both, nothing else appears; the summary totals and results.csv agree; every
 * line carries the folder's run id (a merged folder's: a shard's) and a session the manifest records.
 * Returns a list of problems (empty when it holds) so that a failing test shows all of them.
 */
export function invariantProblems(inputRows: number, out: RunFolder): string[] {
  const problems: string[] = [];
  const seen = new Map<number, string>();
  for (const [file, lines] of [
    ['results', out.results],
    ['errors', out.errors],
  ] as const) {
    for (const l of lines) {
      if (!Number.isInteger(l.row) || l.row < 1 || l.row > inputRows)
        problems.push(`${file}: row ${String(l.row)} is not a data row 1..${inputRows}`);
      const before = seen.get(l.row);
      if (before) problems.push(`row ${l.row} appears in ${before} and in ${file}`);
      seen.set(l.row, file);
      const why = provenanceProblem(out.manifest, l);
      if (why && problems.length < 20) problems.push(`${file}: row ${l.row} ${why}`);
    }
  }
  const missing: number[] = [];
  for (let i = 1; i <= inputRows; i += 1) if (!seen.has(i)) missing.push(i);
  if (missing.length > 0) problems.push(`${missing.length} rows missing, e.g. ${missing.slice(0, 10).join(', ')}`);
  if (out.unparsable > 0) problems.push(`${out.unparsable} unparsable lines in results/errors`);
  if (out.summary) {
    if (out.summary.rows?.succeeded !== out.results.length)
      problems.push(
        `summary rows.succeeded ${out.summary.rows?.succeeded} != ${out.results.length} lines in results.ndjson`,
      );
    if (out.summary.rows?.failed !== out.errors.length)
      problems.push(`summary rows.failed ${out.summary.rows?.failed} != ${out.errors.length} lines in errors.ndjson`);
  } else problems.push('no summary.json');
  const csvRows = Math.max(0, out.csvLines.length - 1);
  if (out.results.length > 0 && csvRows !== out.results.length)
    problems.push(`results.csv has ${csvRows} rows, results.ndjson ${out.results.length}`);
  // results.csv lists rows in input order, however they finished (issue 31); a record that spans lines
  // makes the count differ, and the check is left to the tests that read the CSV properly.
  const order = out.csvLines
    .slice(1)
    .map((l) => /^(\d+),/.exec(l)?.[1])
    .filter((r) => r !== undefined)
    .map(Number);
  const back = order.findIndex((r, i) => i > 0 && r < order[i - 1]);
  if (order.length === out.results.length && back > 0)
    problems.push(`results.csv is not in row order: row ${order[back]} after row ${order[back - 1]}`);
  return problems;
}

/** Why a line's run id or session is not one its folder's manifest records; undefined when it is. */
function provenanceProblem(manifest: any, l: OutputLine): string | undefined {
  if (!manifest) return undefined;
  const shards = (manifest.merged_from ?? []).map((f: { run_id?: string }) => f.run_id);
  // A folder made by hand in a test (or by an older release): no run anywhere.
  if (l.run_id === undefined && manifest.run_id === undefined && shards.every((x: unknown) => x === undefined))
    return undefined;
  if (l.run_id === manifest.run_id) {
    const sessions = manifest.sessions?.length ?? 0;
    const s = l.run_session as number;
    return Number.isInteger(s) && s >= 1 && s <= sessions
      ? undefined
      : `has run_session ${String(s)}, not one of the ${sessions} recorded`;
  }
  return shards.includes(l.run_id) ? undefined : `has run_id ${String(l.run_id)}, not the folder's ${manifest.run_id}`;
}

/** Every file under `dir` (recursively), with its mode. */
/**
 * A file's text as a search for a leaked secret must see it: a gzip'ed journal (a finished run's, X.gz)
 * decompressed, where its bytes would hide any string.
 */
export function searchableText(path: string): string {
  const raw = readFileSync(path);
  return (path.endsWith('.gz') ? gunzipSync(raw) : raw).toString('latin1');
}

export function filesUnder(dir: string): { path: string; mode: number }[] {
  const out: { path: string; mode: number }[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) out.push(...filesUnder(p));
    else out.push({ path: p, mode: st.mode & 0o777 });
  }
  return out;
}
