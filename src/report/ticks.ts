/**
 * The time axis's labels (pure): clock times at a "nice" step a person counts in (1, 2, 5, 10, 15, 30 s;
 * 1, 2, 5, 10, 15, 30 min; 1, 2, 3, 6, 12 h; days), on the step's multiples (22:00, 23:00, 00:00 rather than
 * 22:03, 23:03), the narrowest step whose labels do not crowd each other at the chart's scale. A label shows
 * the precision its step needs (seconds only under a minute), and the date under it where the date changes
 * (and on the first). No two labels are the same: a run of 3 s and a night read alike. Times are UTC, as the
 * report says.
 */

const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;
const D = 24 * H;

/** The steps, shortest first. */
export const TICK_STEPS_MS: readonly number[] = [
  S,
  2 * S,
  5 * S,
  10 * S,
  15 * S,
  30 * S,
  MIN,
  2 * MIN,
  5 * MIN,
  10 * MIN,
  15 * MIN,
  30 * MIN,
  H,
  2 * H,
  3 * H,
  6 * H,
  12 * H,
  D,
  2 * D,
  7 * D,
  14 * D,
  28 * D,
];

/** Least room between two labels' centres, px: a time with seconds (22:00:05) is wider than one without. */
export function minTickGapPx(stepMs: number): number {
  return stepMs < MIN ? 90 : 80;
}

/** The shortest step whose labels are at least minTickGapPx apart at `pxPerMs`. */
export function tickStep(pxPerMs: number): number {
  return TICK_STEPS_MS.find((step) => step * pxPerMs >= minTickGapPx(step)) ?? TICK_STEPS_MS[TICK_STEPS_MS.length - 1];
}

/** The multiples of `step` from `start` to `end`, both included. Steps of a day or less fall on UTC midnight. */
export function tickTimes(start: number, end: number, step: number): number[] {
  const out: number[] = [];
  for (let t = Math.ceil(start / step) * step; t <= end; t += step) out.push(t);
  return out;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number) => String(n).padStart(2, '0');

/** 21 Nov (UTC). */
export function dayLabel(t: number): string {
  const d = new Date(t);
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]}`;
}

/** A time at the precision its step needs: 22:00:05 under a minute, 22:00 under a day, else the date. */
export function timeLabel(t: number, step: number): string {
  const d = new Date(t);
  if (step >= D) return dayLabel(t);
  const hhmm = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
  return step < MIN ? `${hhmm}:${pad(d.getUTCSeconds())}` : hhmm;
}

export interface TickLabel {
  readonly t: number;
  /** The time (or the date, for steps of days). */
  readonly label: string;
  /** The date, under the time: on the first label and where the date changes; absent otherwise. */
  readonly date?: string;
}

/**
 * Labels for ascending times `ts` at `step`: the date under the first and wherever it changes; a label the
 * same as the one before it (in its time and date) is left out.
 */
export function tickLabels(ts: readonly number[], step: number): TickLabel[] {
  const out: TickLabel[] = [];
  const seen = new Set<string>();
  let lastDay: string | undefined;
  for (const t of ts) {
    const label = timeLabel(t, step);
    const day = dayLabel(t);
    const date = step < D && day !== lastDay ? day : undefined;
    const key = `${label}|${step < D ? day : ''}`;
    if (seen.has(key)) continue;
    seen.add(key);
    lastDay = day;
    out.push(date === undefined ? { t, label } : { t, label, date });
  }
  return out;
}
