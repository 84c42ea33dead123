/**
 * compare.csv cells. RFC 4180 quoting, plus the usual defence against formula injection (OWASP "CSV
 * injection"): keys and decision texts come from input data and the API, so a text cell starting with
 * = + - @ (or a tab / carriage return) gets a leading apostrophe; numbers are written as numbers.
 */

const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/;

export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text: string;
  if (typeof value === 'number') text = Number.isFinite(value) ? String(value) : '';
  else if (typeof value === 'boolean') text = value ? 'true' : 'false';
  else {
    text = typeof value === 'string' ? value : JSON.stringify(value);
    if (FORMULA_START.test(text) && !PLAIN_NUMBER.test(text)) text = `'${text}`;
  }
  return /[",\r\n]/.test(text) || text !== text.trim() ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLine(values: readonly unknown[]): string {
  return values.map(csvCell).join(',') + '\n';
}
