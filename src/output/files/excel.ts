/**
 * Excel and other spreadsheets execute cells that start with = + - @ (CSV injection, OWASP). Text cells
 * starting so are prefixed with a quote; numbers (including negative ones) are left alone.
 */
const NUMERIC = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

export function excelSafe(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const s = typeof value === 'string' ? value : JSON.stringify(value);
  if (/^[=+\-@\t\r]/.test(s) && !NUMERIC.test(s)) return `'${s}`;
  return s;
}
