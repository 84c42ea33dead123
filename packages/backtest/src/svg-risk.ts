/**
 * Inline SVG charts of the credit-risk sections: the cut-off trade-off of a score with each strategy's
 * operating point, and the small multiples of the vintages. Same rules as svg.ts: no script, every text through
 * esc(), shapes as well as colours tell A from B (a circle and a diamond), so the page prints in black and white.
 */
import { niceStep } from '@bre-batch/formats/page/scale';
import { esc, fmtInt, fmtPct, svg } from '@bre-batch/formats/page/svg';

interface CurvePoint {
  readonly x: number;
  readonly y: number | null;
}

export interface TradeoffCurve {
  readonly name: string;
  readonly color: string;
  /** Drawn dashed (the second of two curves that would otherwise hide each other). */
  readonly dashed?: boolean;
  readonly points: readonly CurvePoint[];
}

export interface Marker {
  readonly name: string;
  readonly color: string;
  readonly shape: 'circle' | 'diamond';
  readonly x: number | null;
  readonly y: number | null;
}

/** Upper end of a rate axis: a "nice" round share just above the largest value (at least 1%). */
function rateAxisMax(values: readonly number[]): { max: number; step: number } {
  const top = Math.max(0.01, ...values);
  const step = niceStep(top / 5);
  return { max: Math.min(1, Math.ceil(top / step) * step), step };
}

function marker(m: Marker, x: number, y: number, size: number): string {
  const tip = `<title>${esc(`${m.name}: ${fmtPct(m.x)} approved, bad rate ${fmtPct(m.y)}`)}</title>`;
  if (m.shape === 'circle')
    return `<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="${size}" fill="${m.color}" stroke="#1d2733" stroke-width="1.2">${tip}</circle>`;
  const d = size * 1.3;
  return `<path d="M${x.toFixed(1)} ${(y - d).toFixed(1)}L${(x + d).toFixed(1)} ${y.toFixed(1)}L${x.toFixed(1)} ${(y + d).toFixed(1)}L${(x - d).toFixed(1)} ${y.toFixed(1)}Z" fill="${m.color}" stroke="#1d2733" stroke-width="1.2">${tip}</path>`;
}

/**
 * Approval rate (x) against the bad rate of the approved set (y): one line per score, one marker per strategy.
 * A marker above a line means the strategy approves worse applicants than a plain cut-off on that score would
 * at the same approval rate.
 */
export function tradeoffChart(title: string, curves: readonly TradeoffCurve[], markers: readonly Marker[]): string {
  const left = 60;
  const top = 34;
  const plotW = 600;
  const plotH = 280;
  const bottom = 46;
  const width = left + plotW + 24;
  const height = top + plotH + bottom;
  const ys = [...curves.flatMap((c) => c.points.map((p) => p.y)), ...markers.map((m) => m.y)].filter(
    (v): v is number => v !== null,
  );
  const { max, step } = rateAxisMax(ys);
  const X = (v: number): number => left + v * plotW;
  const Y = (v: number): number => top + plotH - (v / max) * plotH;
  const parts: string[] = [];
  for (let v = 0; v <= max + 1e-12; v += step) {
    parts.push(
      `<line x1="${left}" x2="${left + plotW}" y1="${Y(v).toFixed(1)}" y2="${Y(v).toFixed(1)}" class="gr"/><text x="${left - 6}" y="${(Y(v) + 4).toFixed(1)}" text-anchor="end" class="tk">${esc(fmtPct(v, step < 0.01 ? 1 : 0))}</text>`,
    );
  }
  for (let i = 0; i <= 10; i += 1) {
    parts.push(
      `<text x="${X(i / 10).toFixed(1)}" y="${top + plotH + 16}" text-anchor="middle" class="tk">${i * 10}%</text>`,
    );
  }
  parts.push(
    `<line x1="${left}" y1="${top + plotH}" x2="${left + plotW}" y2="${top + plotH}" class="ax"/><line x1="${left}" y1="${top}" x2="${left}" y2="${top + plotH}" class="ax"/>`,
  );
  parts.push(
    `<text x="${left + plotW / 2}" y="${top + plotH + 38}" text-anchor="middle" class="at">approval rate (share of scored keys approved)</text>`,
  );
  parts.push(
    `<text x="14" y="${top + plotH / 2}" text-anchor="middle" class="at" transform="rotate(-90 14 ${top + plotH / 2})">bad rate of the approved</text>`,
  );
  for (const c of curves) {
    const pts = c.points.filter((p) => p.y !== null).map((p) => `${X(p.x).toFixed(1)},${Y(p.y as number).toFixed(1)}`);
    if (pts.length === 0) continue;
    parts.push(
      `<polyline points="${pts.join(' ')}" fill="none" stroke="${c.color}" stroke-width="2.5"${c.dashed ? ' stroke-dasharray="7 5"' : ''}><title>${esc(c.name)}</title></polyline>`,
    );
    for (const p of c.points) {
      if (p.y !== null)
        parts.push(
          `<circle cx="${X(p.x).toFixed(1)}" cy="${Y(p.y).toFixed(1)}" r="2.2" fill="${c.color}"><title>${esc(`${c.name}: ${fmtPct(p.x)} approved, bad rate ${fmtPct(p.y)}`)}</title></circle>`,
        );
    }
  }
  for (const m of markers) if (m.x !== null && m.y !== null) parts.push(marker(m, X(m.x), Y(m.y), 6));
  // Legend across the top.
  let lx = left;
  for (const c of curves) {
    parts.push(
      `<line x1="${lx}" x2="${lx + 24}" y1="12" y2="12" stroke="${c.color}" stroke-width="2.5"${c.dashed ? ' stroke-dasharray="7 5"' : ''}/><text x="${lx + 30}" y="16" class="lg">${esc(c.name)}</text>`,
    );
    lx += 40 + Math.min(220, c.name.length * 6.5);
  }
  for (const m of markers) {
    parts.push(
      marker({ ...m, x: null, y: null }, lx + 6, 12, 5),
      `<text x="${lx + 16}" y="16" class="lg">${esc(m.name)}</text>`,
    );
    lx += 26 + Math.min(200, m.name.length * 6.5);
  }
  return svg(title, width, Math.max(height, 0), parts);
}

interface PeriodSeries {
  readonly name: string;
  readonly color: string;
  readonly shape: 'circle' | 'diamond';
  readonly values: readonly (number | null)[];
}

export interface Panel {
  readonly title: string;
  /** rate: 0..1 as percentages; count: whole numbers. */
  readonly kind: 'rate' | 'count';
  readonly series: readonly PeriodSeries[];
  /** Bars instead of lines (counts). */
  readonly bars?: boolean;
}

/**
 * Small multiples over periods: one panel per measure, stacked, sharing the period axis. Small periods get a
 * hatched background and hollow markers: they are drawn, but marked.
 */
export function smallMultiples(
  title: string,
  periods: readonly string[],
  small: readonly boolean[],
  panels: readonly Panel[],
): string {
  const left = 64;
  const panelH = 120;
  const gap = 40;
  const top = 8;
  const n = Math.max(1, periods.length);
  const slot = Math.max(26, Math.min(60, Math.floor(640 / n)));
  const plotW = slot * n;
  const width = left + plotW + 150;
  const bottom = 64;
  const height = top + panels.length * (panelH + gap) + bottom - gap;
  const parts: string[] = [
    `<defs><pattern id="smallp" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#f6f8fa"/><line x1="0" y1="0" x2="0" y2="6" stroke="#d9dee5" stroke-width="3"/></pattern></defs>`,
  ];
  const cx = (i: number): number => left + i * slot + slot / 2;
  panels.forEach((panel, pi) => {
    const y0 = top + pi * (panelH + gap) + 18;
    const vals = panel.series.flatMap((s) => s.values).filter((v): v is number => v !== null);
    let max: number;
    let step: number;
    if (panel.kind === 'rate') ({ max, step } = rateAxisMax(vals));
    else {
      step = Math.max(1, Math.ceil(niceStep(Math.max(1, ...vals) / 3)));
      max = Math.max(step, Math.ceil(Math.max(1, ...vals) / step) * step);
    }
    const Y = (v: number): number => y0 + panelH - (v / max) * panelH;
    parts.push(`<text x="${left}" y="${y0 - 6}" class="lb" font-weight="600">${esc(panel.title)}</text>`);
    small.forEach((s, i) => {
      if (s)
        parts.push(
          `<rect x="${left + i * slot}" y="${y0}" width="${slot}" height="${panelH}" fill="url(#smallp)"><title>${esc(`${periods[i]}: small period`)}</title></rect>`,
        );
    });
    for (let v = 0; v <= max + 1e-12; v += step) {
      parts.push(
        `<line x1="${left}" x2="${left + plotW}" y1="${Y(v).toFixed(1)}" y2="${Y(v).toFixed(1)}" class="gr"/><text x="${left - 6}" y="${(Y(v) + 4).toFixed(1)}" text-anchor="end" class="tk">${esc(panel.kind === 'rate' ? fmtPct(v, step < 0.01 ? 1 : 0) : fmtInt(v))}</text>`,
      );
    }
    parts.push(`<line x1="${left}" y1="${y0 + panelH}" x2="${left + plotW}" y2="${y0 + panelH}" class="ax"/>`);
    panel.series.forEach((s, si) => {
      const tip = (i: number): string =>
        `<title>${esc(`${s.name}, ${periods[i]}: ${panel.kind === 'rate' ? fmtPct(s.values[i]) : fmtInt(s.values[i])}${small[i] ? ' (small period)' : ''}`)}</title>`;
      if (panel.bars) {
        const bw = Math.max(3, (slot - 8) / panel.series.length);
        s.values.forEach((v, i) => {
          if (v === null) return;
          const x = left + i * slot + 4 + si * bw;
          parts.push(
            `<rect x="${x.toFixed(1)}" y="${Y(v).toFixed(1)}" width="${(bw - 1).toFixed(1)}" height="${(y0 + panelH - Y(v)).toFixed(1)}" fill="${s.color}"${small[i] ? ' fill-opacity="0.45"' : ''}>${tip(i)}</rect>`,
          );
        });
        return;
      }
      // Lines break at a period without a value.
      let run: string[] = [];
      const flush = (): void => {
        if (run.length > 1)
          parts.push(`<polyline points="${run.join(' ')}" fill="none" stroke="${s.color}" stroke-width="2"/>`);
        run = [];
      };
      s.values.forEach((v, i) => {
        if (v === null) {
          flush();
          return;
        }
        run.push(`${cx(i).toFixed(1)},${Y(v).toFixed(1)}`);
      });
      flush();
      s.values.forEach((v, i) => {
        if (v === null) return;
        const fill = small[i] ? '#fff' : s.color;
        const x = cx(i);
        const y = Y(v);
        parts.push(
          s.shape === 'circle'
            ? `<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="3.5" fill="${fill}" stroke="${s.color}" stroke-width="1.5">${tip(i)}</circle>`
            : `<path d="M${x.toFixed(1)} ${(y - 4.5).toFixed(1)}l4.5 4.5l-4.5 4.5l-4.5 -4.5Z" fill="${fill}" stroke="${s.color}" stroke-width="1.5">${tip(i)}</path>`,
        );
      });
    });
    // Legend to the right of the panel.
    panel.series.forEach((s, si) => {
      const ly = y0 + 10 + si * 18;
      parts.push(
        `<rect x="${left + plotW + 12}" y="${ly - 9}" width="10" height="10" fill="${s.color}"/><text x="${left + plotW + 27}" y="${ly}" class="lg">${esc(s.name)}</text>`,
      );
    });
  });
  const axisY = top + panels.length * (panelH + gap) - gap + 18 + 4;
  const every = Math.max(1, Math.ceil(n / 24));
  periods.forEach((p, i) => {
    if (i % every !== 0) return;
    parts.push(
      `<text x="${cx(i).toFixed(1)}" y="${axisY + 10}" text-anchor="end" class="tk" transform="rotate(-40 ${cx(i).toFixed(1)} ${axisY + 10})">${esc(p)}${small[i] ? ' *' : ''}</text>`,
    );
  });
  return svg(title, width, height, parts);
}
