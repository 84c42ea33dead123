/**
 * Inline SVG time charts for report.html (no script, no external resource). The time axis runs over the
 * periods the run was running; a pause between sessions longer than a few minutes (a stop and a resume the
 * next day) is drawn as a narrow hatched band with its length, not to scale, so a run resumed three times
 * reads as one timeline with its gaps marked. Lines break at the gaps. Every text goes through esc().
 */
import { esc, fmtInt } from '@bre-batch/formats/page/svg';
import { niceStep } from '@bre-batch/formats/page/scale';
import type { Timeline, TimelineSample } from '../metrics/timeline-lines.js';
import { minTickGapPx, tickLabels, tickStep, tickTimes, type TickLabel } from './ticks.js';

/** A period the run was running (sessions of several shards that overlap are one period). */
export interface Span {
  readonly start: number;
  readonly end: number;
}

/** Pauses shorter than this are drawn to scale, inside a period. */
const GAP_MIN_MS = 5 * 60_000;

export function spansOf(t: Timeline): Span[] {
  const raw: Span[] = [];
  const bySession = new Map<string, { start: number; end: number }>();
  const id = (session: number, shard?: string) => `${shard ?? ''}#${session}`;
  for (const s of t.sessions) bySession.set(id(s.session, s.shard), { start: s.t, end: s.t });
  for (const s of t.samples) {
    const k = id(s.session, s.shard);
    const span = bySession.get(k) ?? { start: s.t - s.dt, end: s.t };
    span.start = Math.min(span.start, s.t - s.dt);
    span.end = Math.max(span.end, s.t);
    bySession.set(k, span);
  }
  for (const e of t.ends) {
    const span = bySession.get(id(e.session, e.shard));
    if (span) span.end = Math.max(span.end, e.t);
  }
  raw.push(...bySession.values());
  raw.sort((a, b) => a.start - b.start);
  const out: Span[] = [];
  for (const s of raw) {
    const last = out.at(-1);
    if (last && s.start - last.end < GAP_MIN_MS)
      out[out.length - 1] = { start: last.start, end: Math.max(last.end, s.end) };
    else out.push({ ...s });
  }
  return out;
}

export function fmtDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return `${d} d ${h} h`;
  if (h > 0) return `${h} h ${m} min`;
  if (m > 0) return `${m} min ${s % 60} s`;
  return `${s} s`;
}

/** Maps time to x over the running periods, each gap a fixed narrow band. */
export class TimeAxis {
  readonly spans: readonly Span[];
  readonly #x0: number;
  readonly #width: number;
  readonly #gap: number;
  readonly #scale: number;

  constructor(spans: readonly Span[], x0: number, width: number) {
    this.spans = spans;
    this.#x0 = x0;
    this.#width = width;
    this.#gap = spans.length > 1 ? Math.min(36, width * 0.06) : 0;
    const active = spans.reduce((n, s) => n + Math.max(1, s.end - s.start), 0);
    this.#scale = (width - this.#gap * (spans.length - 1)) / active;
  }

  x(t: number): number {
    let x = this.#x0;
    for (const s of this.spans) {
      const len = Math.max(1, s.end - s.start);
      if (t <= s.end) return x + Math.max(0, t - s.start) * this.#scale;
      x += len * this.#scale + this.#gap;
    }
    return this.#x0 + this.#width;
  }

  /** The bands between periods, with the length of the pause. */
  gaps(): { x0: number; x1: number; label: string }[] {
    const out: { x0: number; x1: number; label: string }[] = [];
    for (let i = 1; i < this.spans.length; i += 1) {
      const x1 = this.x(this.spans[i].start);
      out.push({ x0: x1 - this.#gap, x1, label: `paused ${fmtDuration(this.spans[i].start - this.spans[i - 1].end)}` });
    }
    return out;
  }

  /**
   * Clock labels at one nice step for the whole axis (./ticks.ts), on the step's multiples in each period; a
   * period too short to hold one is labelled at its start. Of two labels that would crowd each other (a
   * period's first just after a gap band), the period's first is kept: it says when the run resumed.
   */
  ticks(): AxisTick[] {
    const step = tickStep(this.#scale);
    const gap = minTickGapPx(step);
    const kept: { t: number; x: number; first: boolean }[] = [];
    for (const s of this.spans) {
      const inside = tickTimes(s.start, s.end, step);
      (inside.length > 0 ? inside : [s.start]).forEach((t, i) => {
        const tick = { t, x: this.x(t), first: i === 0 };
        const last = kept.at(-1);
        if (!last || tick.x - last.x >= gap) kept.push(tick);
        else if (tick.first && !last.first) kept[kept.length - 1] = tick;
      });
    }
    const xs = new Map(kept.map((k) => [k.t, k.x]));
    return tickLabels(
      kept.map((k) => k.t),
      step,
    ).map((l) => ({ ...l, x: xs.get(l.t)! }));
  }
}

export interface AxisTick extends TickLabel {
  readonly x: number;
}

export interface Bucket {
  readonly start: number;
  readonly end: number;
  readonly samples: TimelineSample[];
}

/**
 * The time a bucket's samples cover, in ms: their intervals added up, per shard (shards run side by side,
 * so their intervals overlap). Rates divide by this, not by the bucket's width, which the first and last
 * samples of a period only partly fill.
 */
export function coveredMs(b: Bucket): number {
  const byShard = new Map<string, number>();
  for (const s of b.samples) byShard.set(s.shard ?? '', (byShard.get(s.shard ?? '') ?? 0) + s.dt);
  return byShard.size === 0 ? 0 : Math.max(...byShard.values());
}

/** Bucket widths a reader takes in at a glance; the samples are 5 s apart, so nothing finer. */
const WIDTHS_MS = [5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21_600].map((x) => x * 1000);

/** Samples grouped into about `target` intervals (5 s to 6 h each) within each running period. */
export function bucketsOf(t: Timeline, spans: readonly Span[], target = 90): Bucket[] {
  const active = spans.reduce((n, s) => n + (s.end - s.start), 0);
  const width = WIDTHS_MS.find((w) => active / w <= target) ?? WIDTHS_MS[WIDTHS_MS.length - 1];
  const buckets: Bucket[] = [];
  for (const s of spans)
    for (let b = s.start; b < s.end; b += width)
      buckets.push({ start: b, end: Math.min(s.end, b + width), samples: [] });
  let i = 0;
  const sorted = [...t.samples].sort((a, b) => a.t - b.t);
  for (const s of sorted) {
    while (i < buckets.length - 1 && s.t > buckets[i].end) i += 1;
    buckets[i]?.samples.push(s);
  }
  return buckets.filter((b) => b.end > b.start);
}

export interface Line {
  readonly name: string;
  readonly color: string;
  /** (time, value); null values leave a hole. */
  readonly points: readonly (readonly [number, number | null])[];
  readonly dashed?: boolean;
}

function niceMax(max: number): { top: number; step: number } {
  if (!(max > 0)) return { top: 1, step: 0.25 };
  const step = niceStep(max / 4);
  return { top: Math.ceil(max / step) * step, step };
}

const fmtTick = (v: number) =>
  Math.abs(v) >= 1e6
    ? `${Number((v / 1e6).toPrecision(3))}M`
    : Math.abs(v) >= 1e3
      ? `${Number((v / 1e3).toPrecision(3))}k`
      : `${Number(v.toPrecision(3))}`;

/**
 * Fewest points a line needs for its chart to be drawn: one or two intervals make a dot or a stroke, not a
 * course over time (a run of a few seconds has a single sample).
 */
export const MIN_POINTS = 3;

/** The most points with a value any of the lines has. */
export function mostPoints(lines: readonly Line[]): number {
  return Math.max(0, ...lines.map((l) => l.points.filter((p) => p[1] !== null).length));
}

/** What stands in for a chart with too few points to draw. */
export function tooFewSentence(points: number): string {
  const which =
    points === 0
      ? 'no interval of the run has'
      : points === 1
        ? 'only one interval of the run has'
        : `only ${points} intervals of the run have`;
  return `Not drawn: ${which} figures for this chart, too few to show a course over time.`;
}

/**
 * What stands in for the charts over time when the whole run has fewer than MIN_POINTS sampled intervals:
 * how long it ran and why nothing is drawn.
 */
export function shortRunSentence(ms: number, samples: number): string {
  return (
    `The run lasted ${fmtDuration(ms)}. Its time series holds ${samples === 1 ? '1 sample' : `${samples} samples`} ` +
    '(one is taken every few seconds): too few to draw how the rate, the latency and the retries went over time. ' +
    'The tables above give them for the whole run.'
  );
}

/**
 * A line chart over the time axis: one polyline per line and period, the gaps hatched; a sentence instead when
 * no line has MIN_POINTS points.
 */
export function timeChart(
  title: string,
  unit: string,
  spans: readonly Span[],
  lines: readonly Line[],
  marks: readonly { readonly t: number; readonly label: string }[] = [],
): string {
  const most = mostPoints(lines);
  if (most < MIN_POINTS)
    return `<figure class="chartbox"><figcaption>${esc(title)}</figcaption><p class="note">${esc(tooFewSentence(most))}</p></figure>`;
  const W = 960;
  const H = 240;
  const left = 64;
  const right = 16;
  const top = 34;
  const bottom = 40;
  const plotW = W - left - right;
  const plotH = H - top - bottom;
  const axis = new TimeAxis(spans, left, plotW);
  const max = Math.max(0, ...lines.flatMap((l) => l.points.map((p) => p[1] ?? 0)));
  const { top: yTop, step } = niceMax(max);
  const y = (v: number) => top + plotH - (v / yTop) * plotH;
  const parts: string[] = [];
  parts.push(
    `<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#f1f3f5"/><line x1="0" y1="0" x2="0" y2="6" stroke="#c3cad3" stroke-width="2"/></pattern></defs>`,
  );
  for (let v = 0; v <= yTop + step / 2; v += step) {
    parts.push(
      `<line class="gr" x1="${left}" x2="${W - right}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}"/><text class="tk" x="${left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${esc(fmtTick(v))}</text>`,
    );
  }
  for (const g of axis.gaps()) {
    parts.push(
      `<rect x="${g.x0.toFixed(1)}" y="${top}" width="${(g.x1 - g.x0).toFixed(1)}" height="${plotH}" fill="url(#hatch)"><title>${esc(g.label)}</title></rect>`,
    );
    parts.push(
      `<text class="gp" x="${((g.x0 + g.x1) / 2).toFixed(1)}" y="${top - 4}" text-anchor="middle">${esc(g.label)}</text>`,
    );
  }
  for (const t of axis.ticks()) {
    const x = t.x.toFixed(1);
    // A label sits inside the picture, not across its edge (about 3.3 px a character either side).
    const half = Math.max(t.label.length, t.date?.length ?? 0) * 3.3;
    const anchor = t.x + half > W - 2 ? 'end' : t.x - half < 2 ? 'start' : 'middle';
    parts.push(
      `<line class="gr" x1="${x}" x2="${x}" y1="${top}" y2="${top + plotH}"/><line class="ax" x1="${x}" x2="${x}" y1="${top + plotH}" y2="${top + plotH + 4}"/>`,
    );
    parts.push(`<text class="tk xt" x="${x}" y="${H - bottom + 17}" text-anchor="${anchor}">${esc(t.label)}</text>`);
    if (t.date !== undefined)
      parts.push(`<text class="tk dt" x="${x}" y="${H - bottom + 31}" text-anchor="${anchor}">${esc(t.date)}</text>`);
  }
  parts.push(`<line class="ax" x1="${left}" x2="${W - right}" y1="${top + plotH}" y2="${top + plotH}"/>`);
  // Moments worth seeing on the time axis (a new strategy version first answering), when they fall in a period.
  for (const m of marks) {
    if (!spans.some((s) => m.t >= s.start && m.t <= s.end)) continue;
    const x = axis.x(m.t).toFixed(1);
    parts.push(
      `<line x1="${x}" x2="${x}" y1="${top}" y2="${top + plotH}" stroke="#c0392b" stroke-width="1.5" stroke-dasharray="3 3"><title>${esc(m.label)}</title></line><text class="gp" x="${x}" y="${top + 10}" text-anchor="start" fill="#c0392b">${esc(m.label)}</text>`,
    );
  }
  for (const l of lines) {
    for (const s of spans) {
      let run: string[] = [];
      const flush = () => {
        if (run.length > 1)
          parts.push(
            `<polyline fill="none" stroke="${l.color}" stroke-width="${l.dashed ? 1.5 : 2}"${l.dashed ? ' stroke-dasharray="6 4"' : ''} points="${run.join(' ')}"/>`,
          );
        else if (run.length === 1)
          parts.push(`<circle cx="${run[0].split(',')[0]}" cy="${run[0].split(',')[1]}" r="2.5" fill="${l.color}"/>`);
        run = [];
      };
      for (const [t, v] of l.points) {
        if (t < s.start || t > s.end) continue;
        if (v === null) flush();
        else run.push(`${axis.x(t).toFixed(1)},${y(v).toFixed(1)}`);
      }
      flush();
    }
  }
  let lx = left;
  for (const l of lines) {
    parts.push(
      `<line x1="${lx}" x2="${lx + 18}" y1="14" y2="14" stroke="${l.color}" stroke-width="2"${l.dashed ? ' stroke-dasharray="6 4"' : ''}/><text class="lg" x="${lx + 23}" y="18">${esc(l.name)}</text>`,
    );
    lx += 34 + l.name.length * 7;
  }
  parts.push(`<text class="at" x="${W - right}" y="18" text-anchor="end">${esc(unit)}</text>`);
  return `<figure class="chartbox"><figcaption>${esc(title)}</figcaption><svg class="chart" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(title)}">${parts.join('')}</svg></figure>`;
}

/** Horizontal stacked bars (one per row), each part with its count; for the stage funnel and decisions. */
export function stackedBars(
  title: string,
  rows: readonly { label: string; parts: readonly { name: string; value: number; color: string }[] }[],
): string {
  const W = 960;
  const labelW = 200;
  const barH = 20;
  const gap = 10;
  const legendH = 26;
  const H = legendH + rows.length * (barH + gap) + 4;
  const plotW = W - labelW - 90;
  const max = Math.max(1, ...rows.map((r) => r.parts.reduce((n, p) => n + p.value, 0)));
  const out: string[] = [];
  const names = [...new Map(rows.flatMap((r) => r.parts.map((p) => [p.name, p.color] as const))).entries()];
  let lx = labelW;
  for (const [name, color] of names) {
    out.push(
      `<rect x="${lx}" y="5" width="12" height="12" fill="${color}"/><text class="lg" x="${lx + 17}" y="15">${esc(name)}</text>`,
    );
    lx += 30 + name.length * 7;
  }
  rows.forEach((r, i) => {
    const yy = legendH + i * (barH + gap);
    out.push(
      `<text class="lb" x="${labelW - 8}" y="${yy + 15}" text-anchor="end">${esc(r.label.length > 28 ? `${r.label.slice(0, 27)}…` : r.label)}</text>`,
    );
    let x = labelW;
    let total = 0;
    for (const p of r.parts) {
      const w = (p.value / max) * plotW;
      if (w > 0)
        out.push(
          `<rect x="${x.toFixed(1)}" y="${yy}" width="${w.toFixed(1)}" height="${barH}" fill="${p.color}"><title>${esc(`${p.name}: ${p.value}`)}</title></rect>`,
        );
      x += w;
      total += p.value;
    }
    out.push(`<text class="vl" x="${(x + 6).toFixed(1)}" y="${yy + 15}">${esc(fmtInt(total))}</text>`);
  });
  return `<figure class="chartbox"><figcaption>${esc(title)}</figcaption><svg class="chart" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(title)}">${out.join('')}</svg></figure>`;
}
