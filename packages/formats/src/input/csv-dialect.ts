/**
 * The CSV dialect: which character separates fields, and where quoted fields begin and end.
 *
 * Quotes follow RFC 4180 with the lenient reading most spreadsheet readers share (csv-parse's
 * `relax_quotes`, Python's csv): a quote opens a quoted field only at the very start of a field; anywhere
 * else (`5'10"`, `37°36'37.8"N`) it is a plain character. So a record is complete when, at the end of a
 * line, no quoted field is open — which `scanLine` tells by running that automaton over the line. A quoted
 * field followed by anything but a separator (`"abc"def`) is broken quoting: the record is marked so, and
 * becomes a row error as before, rather than being read one way or another.
 *
 * The separator, when not given, is sniffed as DuckDB's sniffer does: each candidate (`,` `;` TAB `|`) cuts
 * the header and the first lines into fields; a candidate must give the header at least two columns, and the
 * one whose data records most often have the header's count wins (ties: the order above). One line is not
 * enough to tell (pandas#53035), so the first lines are all used.
 */

const SNIFFED_DELIMITERS = [',', ';', '\t', '|'] as const;

/** Lines looked at when sniffing (the header among them). */
export const SNIFF_LINES = 50;

/** States of the quote automaton. */
const FIELD_START = 0;
const UNQUOTED = 1;
/** Inside a quoted field: the record goes on past the end of the line. */
export const QUOTED = 2;
const QUOTE_IN_QUOTED = 3;
/** The state a new record starts in. */
export const RECORD_START = FIELD_START;

const QUOTE = 0x22;

/** What a scan found besides the state: separators met outside quotes, and broken quoting. */
export interface ScanCounts {
  n: number;
  broken: boolean;
}

/**
 * Runs the quote automaton over one line from `state`; returns the state at its end (QUOTED: the record
 * continues on the next line). `fields` counts the separators met outside quotes and notes broken quoting.
 */
export function scanLine(text: string, delimiter: number, state: number, fields: ScanCounts): number {
  let s = state;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    switch (s) {
      case FIELD_START:
        if (c === QUOTE) s = QUOTED;
        else if (c === delimiter) fields.n += 1;
        else s = UNQUOTED;
        break;
      case UNQUOTED:
        if (c === delimiter) {
          s = FIELD_START;
          fields.n += 1;
        }
        break;
      case QUOTED:
        if (c === QUOTE) s = QUOTE_IN_QUOTED;
        break;
      default: // QUOTE_IN_QUOTED: a doubled quote is an escaped one; a separator ends the field
        if (c === QUOTE) s = QUOTED;
        else if (c === delimiter) {
          s = FIELD_START;
          fields.n += 1;
        } else {
          s = UNQUOTED;
          fields.broken = true;
        }
    }
  }
  return s;
}

/** Field counts of the records in `lines` when cut at `delimiter`. */
function fieldCounts(lines: readonly string[], delimiter: string): number[] {
  const d = delimiter.charCodeAt(0);
  const counts: number[] = [];
  const fields: ScanCounts = { n: 0, broken: false };
  let state = RECORD_START;
  for (const text of lines) {
    if (state !== QUOTED && text.trim() === '') continue;
    state = scanLine(text, d, state, fields);
    if (state !== QUOTED) {
      counts.push(fields.n + 1);
      fields.n = 0;
      state = RECORD_START;
    }
  }
  return counts;
}

/**
 * The separator of a CSV file from its first lines (header first), or undefined when no candidate gives
 * the header two columns (a one-column file: the caller's default applies).
 */
export function sniffDelimiter(lines: readonly string[]): string | undefined {
  let best: { delimiter: string; score: number } | undefined;
  for (const delimiter of SNIFFED_DELIMITERS) {
    const [header, ...data] = fieldCounts(lines, delimiter);
    if (header === undefined || header < 2) continue;
    const score = data.length === 0 ? 1 : data.filter((n) => n === header).length / data.length;
    if (!best || score > best.score) best = { delimiter, score };
  }
  return best?.delimiter;
}

const NAMES: Readonly<Record<string, string>> = { ',': 'comma', ';': 'semicolon', '\t': 'TAB', '|': 'pipe' };

/** `';' (semicolon)` — for messages. */
export function describeDelimiter(d: string): string {
  return d === '\t' ? 'TAB' : NAMES[d] ? `'${d}' (${NAMES[d]})` : `'${d}'`;
}

/** `--delimiter` as given (a character, or tab/comma/semicolon/pipe) -> the character; undefined if invalid. */
export function parseDelimiter(value: string): string | undefined {
  const byName: Readonly<Record<string, string>> = { tab: '\t', '\\t': '\t', comma: ',', semicolon: ';', pipe: '|' };
  const d = byName[value.toLowerCase()] ?? value;
  // One character that cannot be part of a record's structure.
  return d.length === 1 && d !== '"' && d !== '\n' && d !== '\r' ? d : undefined;
}
