/**
 * The header check (pure): the names a CSV header or a Parquet schema gives are matched to the names the
 * pipeline reads, and a header that lacks a column every row needs stops the run before anything is called
 * or written (exit 2), naming the missing columns, the header as read and the closest names it has.
 *
 * Matching: names are trimmed; a name the pipeline reads is taken as written, and when the header has no
 * exact match, case-insensitively (`Reference_ID` is `reference_id`). Two header names that are the same
 * apart from case and spaces are refused: which one is meant cannot be known. A required dotted name
 * (`external.bank_type`) is found as ../input/fields.ts finds it in a row: the dotted column, a nested
 * column's field (Parquet structs), or the last name as a column (`bank_type`).
 */
import { BreError } from '@bre-batch/core/errors';
import { describeDelimiter } from './csv-dialect.js';

export interface HeaderAsRead {
  /** Column names in file order, as read. */
  readonly names: readonly string[];
  /** Dotted paths inside nested columns (`external.bank_type` of a Parquet struct `external`). */
  readonly nested?: readonly string[];
  /** Where the header is, for messages: "line 1", "the Parquet schema". */
  readonly where: string;
  /** CSV: the separator used. */
  readonly delimiter?: string;
}

export interface ColumnRequirements {
  /** For messages: "pipeline 'rescore'". */
  readonly what: string;
  /** Columns every row needs; each entry lists names any one of which will do (e.g. date_from, datetimerangefrom). */
  readonly required: readonly (readonly string[])[];
  /** Every name the pipeline reads: the names a header is matched to without regard to case. */
  readonly known: readonly string[];
}

const SHOWN = 30;

function lastName(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot === -1 ? name : name.slice(dot + 1);
}

/**
 * The names the rows are keyed by, one per column of the header (trimmed; renamed to the pipeline's
 * spelling when only the case differs). Throws a BreError INPUT_HEADER (exit 2) for an empty name, two names
 * that differ only in case or spaces, or a required column missing.
 */
export function resolveHeader(header: HeaderAsRead, req?: ColumnRequirements): string[] {
  const trimmed = header.names.map((n) => n.trim());
  const byFolded = new Map<string, number>();
  trimmed.forEach((name, i) => {
    if (name === '')
      throw headerError(
        `${header.where}: column ${i + 1} of the header has no name`,
        'a name for every column of the header',
        header,
      );
    const folded = name.toLowerCase();
    const before = byFolded.get(folded);
    if (before !== undefined) {
      const what =
        trimmed[before] === name
          ? `the header names column '${name}' twice (columns ${before + 1} and ${i + 1})`
          : `the header's columns '${trimmed[before]}' (column ${before + 1}) and '${name}' (column ${i + 1}) differ only in case: names are matched without regard to case, so one of them must be renamed`;
      throw headerError(`${header.where}: ${what}`, 'distinct column names', header);
    }
    byFolded.set(folded, i);
  });
  if (!req) return trimmed;

  const known = new Set(req.known);
  const knownFolded = new Map<string, string>();
  for (const k of req.known) knownFolded.set(k.toLowerCase(), k);
  const names = trimmed.map((n) => (known.has(n) ? n : (knownFolded.get(n.toLowerCase()) ?? n)));

  const present = new Set(names);
  const nested = new Set(header.nested ?? []);
  const has = (name: string) =>
    present.has(name) || nested.has(name) || (name.includes('.') && present.has(lastName(name)));
  const missing = req.required.filter((alternatives) => !alternatives.some(has));
  // A column the pipeline already reads under its own name is no one's misspelling.
  if (missing.length > 0)
    throw missingColumns(
      missing,
      trimmed.filter((_, i) => !known.has(names[i])),
      header,
      req,
    );
  return names;
}

function headerError(message: string, expected: string, header: HeaderAsRead): BreError {
  return new BreError('INPUT_HEADER', `${message}\n  header as read: ${showHeader(header)}`, { expected });
}

function showHeader(header: HeaderAsRead): string {
  const n = header.names.length;
  const shown = header.names
    .slice(0, SHOWN)
    .map((x) => JSON.stringify(x))
    .join(', ');
  const sep = header.delimiter ? `, fields separated by ${describeDelimiter(header.delimiter)}` : '';
  return `${header.where}, ${n} column${n === 1 ? '' : 's'}${sep}: ${shown}${n > SHOWN ? `, ... (${n - SHOWN} more)` : ''}`;
}

function missingColumns(
  missing: readonly (readonly string[])[],
  names: readonly string[],
  header: HeaderAsRead,
  req: ColumnRequirements,
): BreError {
  const list = missing.map((alts) => alts.join(' or ')).join(', ');
  const lines = [`Expected the input's header to have every column ${req.what} needs in every row; missing: ${list}`];
  lines.push(`  header as read: ${showHeader(header)}`);
  const hints = missing.flatMap((alts) => {
    const near = closest(alts, names);
    return near.length > 0 ? [`${near.map((x) => `'${x}'`).join(' or ')} for ${alts[0]}`] : [];
  });
  if (hints.length > 0) lines.push(`  did you mean: ${hints.join('; ')}?`);
  const oneColumn = header.delimiter !== undefined && header.names.length === 1;
  lines.push(
    `  fix: rename the header's columns to the pipeline's names (spaces around a name and the case of its letters do not matter)${oneColumn ? ', or give --delimiter: the header was read as one column' : ''}; \`bre-batch pipelines\` lists the columns of every pipeline`,
  );
  return new BreError('INPUT_HEADER', lines.join('\n'), { expected: `the columns ${list}`, field: missing[0][0] });
}

/** Letters and digits only, lower case: `Reference ID` and `reference_id` compare equal. */
function fold(name: string): string {
  return name.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const cur = [i];
    for (let j = 1; j <= b.length; j += 1)
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length];
}

/** Header names close to one of `wanted`: equal once folded, an abbreviation (`lat`), or a few edits away. */
export function closest(wanted: readonly string[], names: readonly string[]): string[] {
  const scored: { name: string; score: number }[] = [];
  for (const name of names) {
    const f = fold(name);
    if (f === '') continue;
    let best = Infinity;
    for (const w of wanted) {
      const target = fold(lastName(w));
      const full = fold(w);
      if (f === target || f === full) best = 0;
      else if (f.length >= 3 && (target.startsWith(f) || f.startsWith(target))) best = Math.min(best, 0.3);
      else best = Math.min(best, editDistance(f, target) / Math.max(f.length, target.length));
    }
    if (best <= 0.4) scored.push({ name, score: best });
  }
  return scored
    .sort((a, b) => a.score - b.score)
    .slice(0, 3)
    .map((s) => s.name);
}
