import { niceStep } from './scale.js';

/**
 * Inline SVG charts for report.html: no script, no external resource, so the page opens offline and prints.
 * Every text that reaches the markup goes through esc(); category names come from the API and input data.
 */

/** Escapes text for HTML element content and quoted attribute values (also inside inline SVG). */
export function esc(value: unknown): string {
  return String(value ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

export const COLOR_A = '#3b6ea8';
export const COLOR_B = '#e07b24';

/**
 * `n` with `digits` decimals, as en-US writes it ("-1,234.57"), without Intl: a process's first Intl call loads
 * ICU's number data, which a one-row run paid for more than for drawing the rest of its report. Rounded as
 * Intl rounds, half away from zero on the shortest decimal that reads back as `n` (1.005 -> "1.01", where
 * toFixed, rounding the binary value, says "1.00"), on its digits as text, so no scaling loses one.
 */
function enUs(n: number, digits: number): string {
  const text = String(Math.abs(n));
  // A tiny or huge value's shortest form has an exponent: Intl says those.
  if (text.includes('e'))
    return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  const [whole, fraction = ''] = text.split('.');
  // The digits kept, as one whole number, and one more if the first digit dropped is 5 or more.
  let kept = BigInt(whole + fraction.slice(0, digits).padEnd(digits, '0'));
  if (fraction.length > digits && fraction[digits] >= '5') kept += 1n;
  const all = kept.toString().padStart(digits + 1, '0');
  const int = all.slice(0, all.length - digits);
  // Intl keeps the sign of a negative number that rounds to zero ("-0"), as of -0 itself.
  const sign = n < 0 || Object.is(n, -0) ? '-' : '';
  return `${sign}${int.replace(/\B(?=(\d{3})+$)/g, ',')}${digits > 0 ? `.${all.slice(-digits)}` : ''}`;
}

export function fmtInt(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '–';
  return enUs(Math.round(n), 0);
}

export function fmtNum(n: number | null | undefined, digits = 0): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '–';
  return enUs(n, digits);
}

export function fmtPct(p: number | null | undefined, digits = 1): string {
  if (p === null || p === undefined || !Number.isFinite(p)) return '–';
  return `${(p * 100).toFixed(digits)}%`;
}

/** Signed percentage points, e.g. "+2.3 pp". */
export function fmtPp(p: number | null | undefined, digits = 1): string {
  if (p === null || p === undefined || !Number.isFinite(p)) return '–';
  const v = p * 100;
  return `${v > 0 ? '+' : v < 0 ? '−' : '±'}${Math.abs(v).toFixed(digits)} pp`;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Compact axis label for money-like numbers: 1.5k, 20k, 1.2M. */
function shortNum(n: number): string {
  const a = Math.abs(n);
  const s = n < 0 ? '−' : '';
  if (a >= 1e6) return `${s}${Number((a / 1e6).toPrecision(3))}M`;
  if (a >= 1e3) return `${s}${Number((a / 1e3).toPrecision(3))}k`;
  return `${s}${Number(a.toPrecision(3))}`;
}

export interface BarSeries {
  readonly name: string;
  readonly color: string;
  readonly values: readonly number[];
}

/** Horizontal grouped bars: one group per category, one bar per series, counts and shares at the bar ends. */
export function groupedBars(title: string, categories: readonly string[], series: readonly BarSeries[]): string {
  const labelW = 190;
  const plotW = 380;
  const valueW = 130;
  const barH = 16;
  const gap = 12;
  const groupH = series.length * barH + gap;
  const legendH = 26;
  const height = legendH + categories.length * groupH + 4;
  const width = labelW + plotW + valueW;
  const max = Math.max(1, ...series.flatMap((s) => s.values));
  const totals = series.map((s) => s.values.reduce((x, y) => x + y, 0));
  const parts: string[] = [];
  series.forEach((s, i) => {
    const x = labelW + i * 130;
    parts.push(
      `<rect x="${x}" y="4" width="12" height="12" fill="${s.color}"/><text x="${x + 17}" y="14" class="lg">${esc(truncate(s.name, 16))}</text>`,
    );
  });
  categories.forEach((cat, ci) => {
    const y0 = legendH + ci * groupH;
    parts.push(
      `<text x="${labelW - 8}" y="${y0 + (series.length * barH) / 2 + 4}" text-anchor="end" class="lb"><title>${esc(cat)}</title>${esc(truncate(cat, 26))}</text>`,
    );
    series.forEach((s, si) => {
      const v = s.values[ci] ?? 0;
      const w = Math.max(v > 0 ? 1 : 0, (v / max) * plotW);
      const y = y0 + si * barH;
      const share = totals[si] > 0 ? v / totals[si] : null;
      parts.push(
        `<rect x="${labelW}" y="${y + 1}" width="${w.toFixed(1)}" height="${barH - 2}" fill="${s.color}"><title>${esc(`${s.name}: ${cat}: ${fmtInt(v)} (${fmtPct(share)})`)}</title></rect>`,
      );
      parts.push(
        `<text x="${(labelW + w + 5).toFixed(1)}" y="${y + barH - 4}" class="vl">${esc(`${fmtInt(v)} (${fmtPct(share)})`)}</text>`,
      );
    });
  });
  parts.push(`<line x1="${labelW}" y1="${legendH - 4}" x2="${labelW}" y2="${height}" class="ax"/>`);
  return svg(title, width, height, parts);
}

function mix(c1: [number, number, number], c2: [number, number, number], t: number): string {
  const c = c1.map((v, i) => Math.round(v + (c2[i] - v) * t));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

/**
 * The decision crosstab as a heat map: rows = A's decision, columns = B's; shade by count, each cell shows the
 * count and its share of all keys. Off-diagonal cells are the keys whose decision changed.
 */
export function heatMap(
  title: string,
  categories: readonly string[],
  counts: readonly (readonly number[])[],
  rowName: string,
  colName: string,
): string {
  const labelW = 170;
  const headH = 64;
  const cell = Math.max(64, Math.min(110, Math.floor(560 / Math.max(1, categories.length))));
  const width = labelW + categories.length * cell + 10;
  const height = headH + categories.length * cell + 10;
  const total = counts.reduce((s, r) => s + r.reduce((x, y) => x + y, 0), 0);
  const max = Math.max(1, ...counts.flat());
  const parts: string[] = [];
  parts.push(
    `<text x="${labelW + (categories.length * cell) / 2}" y="14" text-anchor="middle" class="at">${esc(colName)} →</text>`,
  );
  parts.push(
    `<text x="12" y="${headH + (categories.length * cell) / 2}" text-anchor="middle" class="at" transform="rotate(-90 12 ${headH + (categories.length * cell) / 2})">${esc(rowName)} →</text>`,
  );
  categories.forEach((c, j) => {
    parts.push(
      `<text x="${labelW + j * cell + cell / 2}" y="${headH - 10}" text-anchor="middle" class="lb"><title>${esc(c)}</title>${esc(truncate(c, Math.floor(cell / 7)))}</text>`,
    );
  });
  categories.forEach((rc, i) => {
    const y = headH + i * cell;
    parts.push(
      `<text x="${labelW - 8}" y="${y + cell / 2 + 4}" text-anchor="end" class="lb"><title>${esc(rc)}</title>${esc(truncate(rc, 22))}</text>`,
    );
    categories.forEach((cc, j) => {
      const v = counts[i]?.[j] ?? 0;
      const t = v === 0 ? 0 : 0.12 + 0.88 * Math.sqrt(v / max);
      const fill = mix([247, 251, 255], [8, 48, 107], t);
      const x = labelW + j * cell;
      const dark = t > 0.55;
      const tip = `${rowName}: ${rc} → ${colName}: ${cc}: ${fmtInt(v)} (${fmtPct(total > 0 ? v / total : null)})`;
      parts.push(
        `<rect x="${x}" y="${y}" width="${cell - 2}" height="${cell - 2}" fill="${fill}" class="${i === j ? 'dg' : 'od'}"><title>${esc(tip)}</title></rect>`,
      );
      parts.push(
        `<text x="${x + (cell - 2) / 2}" y="${y + cell / 2 - 2}" text-anchor="middle" class="hv${dark ? ' dk' : ''}">${esc(fmtInt(v))}</text>`,
      );
      parts.push(
        `<text x="${x + (cell - 2) / 2}" y="${y + cell / 2 + 14}" text-anchor="middle" class="hp${dark ? ' dk' : ''}">${esc(fmtPct(total > 0 ? v / total : null))}</text>`,
      );
    });
  });
  return svg(title, width, height, parts);
}

export interface HistBin {
  readonly lower: number;
  readonly upper: number;
  readonly count: number;
}

/** Vertical histogram of amount changes, with the "no change" count as its own bar on the left. */
export function histogramChart(title: string, bins: readonly HistBin[], unchanged: number): string {
  const left = 56;
  const plotH = 200;
  const top = 14;
  const bottom = 58;
  const zeroW = 64;
  const gapAfterZero = 30;
  const n = Math.max(1, bins.length);
  const barW = Math.max(10, Math.min(40, Math.floor(560 / n)));
  const width = left + zeroW + gapAfterZero + n * barW + 20;
  const height = top + plotH + bottom;
  const highest = Math.max(1, unchanged, ...bins.map((b) => b.count));
  // Counts are whole numbers: whole, "nice" tick steps, and the axis ends on a tick.
  const tickStep = Math.max(1, Math.ceil(niceStep(highest / 4)));
  const max = Math.ceil(highest / tickStep) * tickStep;
  const parts: string[] = [];
  for (let v = 0; v <= max; v += tickStep) {
    const y = top + plotH - (plotH * v) / max;
    parts.push(
      `<line x1="${left}" x2="${width - 10}" y1="${y}" y2="${y}" class="gr"/><text x="${left - 6}" y="${y + 4}" text-anchor="end" class="tk">${esc(fmtInt(v))}</text>`,
    );
  }
  const zh = (unchanged / max) * plotH;
  parts.push(
    `<rect x="${left + 4}" y="${(top + plotH - zh).toFixed(1)}" width="${zeroW - 8}" height="${zh.toFixed(1)}" class="zb"><title>${esc(`no change: ${fmtInt(unchanged)}`)}</title></rect>`,
  );
  parts.push(`<text x="${left + zeroW / 2}" y="${top + plotH + 16}" text-anchor="middle" class="tk">no change</text>`);
  const x0 = left + zeroW + gapAfterZero;
  const labelEvery = Math.max(1, Math.ceil(n / 8));
  bins.forEach((b, i) => {
    const h = (b.count / max) * plotH;
    const x = x0 + i * barW;
    const cls = b.upper <= 0 ? 'nb' : b.lower >= 0 ? 'pb' : 'mb';
    parts.push(
      `<rect x="${x + 1}" y="${(top + plotH - h).toFixed(1)}" width="${barW - 2}" height="${h.toFixed(1)}" class="${cls}"><title>${esc(`${fmtNum(b.lower)} to ${fmtNum(b.upper)}: ${fmtInt(b.count)}`)}</title></rect>`,
    );
    if (i % labelEvery === 0)
      parts.push(
        `<text x="${x}" y="${top + plotH + 16}" text-anchor="middle" class="tk">${esc(shortNum(b.lower))}</text>`,
      );
  });
  if (bins.length > 0) {
    const last = bins[bins.length - 1];
    if (bins.length % labelEvery === 0)
      parts.push(
        `<text x="${x0 + n * barW}" y="${top + plotH + 16}" text-anchor="middle" class="tk">${esc(shortNum(last.upper))}</text>`,
      );
  }
  parts.push(`<line x1="${left}" y1="${top + plotH}" x2="${width - 10}" y2="${top + plotH}" class="ax"/>`);
  parts.push(
    `<text x="${x0 + (n * barW) / 2}" y="${top + plotH + 40}" text-anchor="middle" class="at">amount change, B − A</text>`,
  );
  return svg(title, width, height, parts);
}

export function svg(title: string, width: number, height: number, parts: readonly string[]): string {
  return `<svg class="chart" role="img" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}"><title>${esc(title)}</title>${parts.join('')}</svg>`;
}
