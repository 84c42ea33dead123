/**
 * HTML building blocks of the report pages (compare's report.html, and a run's, which src/report/ draws): table
 * cells, intervals, signed numbers. Cell texts come in as HTML: the caller escapes text through esc().
 */
import { COLOR_A, COLOR_B, esc, fmtNum, fmtPct, fmtPp } from './svg.js';

/** Printing a report page (compare's and a run's): a section a page, charts not split, colours kept. */
export const PRINT_CSS = `@media print{
  body{font-size:11pt}
  main{max-width:none;padding:0}
  h2{break-before:page}
  h2.first{break-before:auto}
  section,table,svg,figure,.kpis{break-inside:avoid}
  .chartbox,.tw{overflow:visible}
  *{-webkit-print-color-adjust:exact;print-color-adjust:exact}
  @page{margin:14mm}
}
`;

export function td(text: string, numeric = false, cls = ''): string {
  const c = [numeric ? 'n' : '', cls].filter(Boolean).join(' ');
  return `<td${c ? ` class="${c}"` : ''}>${text}</td>`;
}

export function th(text: string, numeric = false): string {
  return `<th${numeric ? ' class="n"' : ''}>${text}</th>`;
}

/** A row of cell contents as <td>s, those from column `numericFrom` on as numbers (right-aligned, as table()'s head). */
export function cells(row: readonly string[], numericFrom = 1): string[] {
  return row.map((c, i) => td(c, i >= numericFrom));
}

/** Rows of <td>s (td(), cells()) under a head of plain texts; `rowClass` names a CSS class for some rows (e.g. small periods). */
export function table(
  head: readonly string[],
  rows: readonly (readonly string[])[],
  numericFrom = 1,
  rowClass: (i: number) => string = () => '',
): string {
  return `<div class="tw"><table><thead><tr>${head.map((h, i) => th(esc(h), i >= numericFrom)).join('')}</tr></thead><tbody>${rows
    .map((r, i) => {
      const cls = rowClass(i);
      return `<tr${cls ? ` class="${cls}"` : ''}>${r.join('')}</tr>`;
    })
    .join('')}</tbody></table></div>`;
}

export function ci(c: { lower: number; upper: number } | null, pp = false): string {
  if (!c) return '–';
  return pp ? `${fmtPp(c.lower).replace(' pp', '')} to ${fmtPp(c.upper)}` : `${fmtPct(c.lower)} – ${fmtPct(c.upper)}`;
}

export function signed(n: number | null | undefined, digits = 0): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '–';
  const cls = n > 0 ? 'pos' : n < 0 ? 'neg' : '';
  const text = `${n > 0 ? '+' : n < 0 ? '−' : ''}${fmtNum(Math.abs(n), digits)}`;
  return cls ? `<span class="${cls}">${esc(text)}</span>` : esc(text);
}

export function runLabel(side: 'A' | 'B'): string {
  const color = side === 'A' ? COLOR_A : COLOR_B;
  return `<span class="sw" style="background:${color}"></span>${side}`;
}
