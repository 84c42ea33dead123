/**
 * The time axis's labels (src/report/ticks.ts, and TimeAxis.ticks in src/report/charts.ts): nice steps at the
 * chart's scale, labels at the precision the step needs with the date where it changes, and never two the
 * same, for a run of seconds as for a night; and what stands in for a chart with too few samples.
 */
import { describe, expect, it } from 'vitest';
import {
  MIN_POINTS,
  mostPoints,
  shortRunSentence,
  TimeAxis,
  timeChart,
  tooFewSentence,
  type Span,
} from '../../src/report/charts.js';
import {
  dayLabel,
  minTickGapPx,
  tickLabels,
  tickStep,
  tickTimes,
  timeLabel,
  TICK_STEPS_MS,
} from '../../src/report/ticks.js';

const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;
const D = 24 * H;
const at = (iso: string) => Date.parse(iso);
/** The plot's width in the report's charts (960 less its margins). */
const PLOT = 880;

describe('tickStep: the shortest nice step whose labels do not crowd', () => {
  it.each<[string, number, number]>([
    ['3 s over the plot', 3 * S, S],
    ['24 s', 24 * S, 5 * S],
    ['40 s', 40 * S, 5 * S],
    ['2 min', 2 * MIN, 15 * S],
    ['10 min', 10 * MIN, MIN],
    ['23 min', 23 * MIN, 5 * MIN],
    ['1 h', H, 10 * MIN],
    ['7 h', 7 * H, H],
    ['2 days', 2 * D, 6 * H],
    ['3 weeks', 21 * D, 2 * D],
  ])('%s', (_name, span, step) => {
    expect(tickStep(PLOT / span)).toBe(step);
  });

  it('gives labels at least their room apart, and the step below would not', () => {
    for (const span of [1.5 * S, 7 * S, 65 * S, 17 * MIN, 3 * H, 9 * H, 30 * H, 12 * D]) {
      const pxPerMs = PLOT / span;
      const step = tickStep(pxPerMs);
      expect(step * pxPerMs).toBeGreaterThanOrEqual(minTickGapPx(step));
      const i = TICK_STEPS_MS.indexOf(step);
      if (i > 0) expect(TICK_STEPS_MS[i - 1] * pxPerMs).toBeLessThan(minTickGapPx(TICK_STEPS_MS[i - 1]));
    }
  });
});

describe("tickTimes: the step's multiples", () => {
  it.each<[string, number, number, number, string[]]>([
    ['seconds', at('2026-11-24T15:35:03Z'), at('2026-11-24T15:35:16Z'), 5 * S, ['15:35:05', '15:35:10', '15:35:15']],
    [
      'hours across midnight',
      at('2026-11-20T21:40:00Z'),
      at('2026-11-21T02:10:00Z'),
      H,
      ['22:00', '23:00', '00:00', '01:00', '02:00'],
    ],
    [
      'both ends on the step',
      at('2026-11-20T22:00:00Z'),
      at('2026-11-20T22:10:00Z'),
      5 * MIN,
      ['22:00', '22:05', '22:10'],
    ],
    ['none inside', at('2026-11-20T22:01:00Z'), at('2026-11-20T22:04:00Z'), 5 * MIN, []],
  ])('%s', (_name, start, end, step, labels) => {
    expect(tickTimes(start, end, step).map((t) => timeLabel(t, step))).toEqual(labels);
  });
});

describe('labels', () => {
  it.each<[number, string]>([
    [S, '15:35:05'],
    [30 * S, '15:35:05'],
    [MIN, '15:35'],
    [6 * H, '15:35'],
    [D, '24 Nov'],
    [7 * D, '24 Nov'],
  ])('at a step of %i ms: %s', (step, label) => {
    expect(timeLabel(at('2026-11-24T15:35:05Z'), step)).toBe(label);
  });

  it('dayLabel', () => {
    expect(dayLabel(at('2026-01-01T00:00:00Z'))).toBe('1 Jan');
    expect(dayLabel(at('2026-12-31T23:59:59Z'))).toBe('31 Dec');
  });

  it('the date under the first label and where it changes; never two the same', () => {
    const ts = [
      at('2026-11-20T22:00:00Z'),
      at('2026-11-20T23:00:00Z'),
      at('2026-11-21T00:00:00Z'),
      at('2026-11-21T01:00:00Z'),
    ];
    expect(tickLabels(ts, H)).toEqual([
      { t: ts[0], label: '22:00', date: '20 Nov' },
      { t: ts[1], label: '23:00' },
      { t: ts[2], label: '00:00', date: '21 Nov' },
      { t: ts[3], label: '01:00' },
    ]);
    // 22:28:03 and 22:28:40 read alike at a minute's precision: the second is left out.
    const same = [at('2026-11-20T22:28:03Z'), at('2026-11-20T22:28:40Z'), at('2026-11-20T22:30:00Z')];
    expect(tickLabels(same, MIN).map((l) => l.label)).toEqual(['22:28', '22:30']);
    // The same clock time on two days differs by its date.
    const twoDays = [at('2026-11-20T22:00:00Z'), at('2026-11-21T22:00:00Z')];
    expect(tickLabels(twoDays, H)).toEqual([
      { t: twoDays[0], label: '22:00', date: '20 Nov' },
      { t: twoDays[1], label: '22:00', date: '21 Nov' },
    ]);
    // Steps of days: the date is the label.
    expect(tickLabels([at('2026-11-20T00:00:00Z'), at('2026-11-22T00:00:00Z')], 2 * D)).toEqual([
      { t: at('2026-11-20T00:00:00Z'), label: '20 Nov' },
      { t: at('2026-11-22T00:00:00Z'), label: '22 Nov' },
    ]);
  });
});

describe('TimeAxis.ticks over whole runs', () => {
  const axis = (spans: Span[]) => new TimeAxis(spans, 64, PLOT).ticks();
  const text = (ticks: ReturnType<typeof axis>) => ticks.map((t) => (t.date ? `${t.label} (${t.date})` : t.label));

  it.each<[string, Span[], string[]]>([
    [
      'the 24-row npm start: 3 s',
      [{ start: at('2026-11-24T15:35:02.844Z'), end: at('2026-11-24T15:35:05.763Z') }],
      ['15:35:03 (24 Nov)', '15:35:04', '15:35:05'],
    ],
    [
      'a run of 24 s',
      [{ start: at('2026-11-24T15:35:02Z'), end: at('2026-11-24T15:35:26Z') }],
      ['15:35:05 (24 Nov)', '15:35:10', '15:35:15', '15:35:20', '15:35:25'],
    ],
    [
      'a run of 10 min',
      [{ start: at('2026-11-24T15:35:02Z'), end: at('2026-11-24T15:45:02Z') }],
      ['15:36 (24 Nov)', '15:37', '15:38', '15:39', '15:40', '15:41', '15:42', '15:43', '15:44', '15:45'],
    ],
    [
      'a night across midnight with a pause',
      [
        { start: at('2026-11-20T21:40:00Z'), end: at('2026-11-21T01:50:00Z') },
        { start: at('2026-11-21T02:25:00Z'), end: at('2026-11-21T05:10:00Z') },
      ],
      ['22:00 (20 Nov)', '23:00', '00:00 (21 Nov)', '01:00', '03:00', '04:00', '05:00'],
    ],
    [
      'sessions a day apart, one too short to hold a tick',
      [
        { start: at('2026-11-20T22:00:00Z'), end: at('2026-11-20T22:08:00Z') },
        { start: at('2026-11-21T22:00:10Z'), end: at('2026-11-21T22:00:50Z') },
        // 22:08 would crowd the second session's label across the gap band: the session's start is kept.
      ],
      ['22:00 (20 Nov)', '22:01', '22:02', '22:03', '22:04', '22:05', '22:06', '22:07', '22:00 (21 Nov)'],
    ],
  ])('%s', (_name, spans, labels) => {
    const ticks = axis(spans);
    expect(text(ticks)).toEqual(labels);
    expect(new Set(text(ticks)).size).toBe(ticks.length);
    for (let i = 1; i < ticks.length; i += 1) expect(ticks[i].x - ticks[i - 1].x).toBeGreaterThanOrEqual(60);
  });
});

describe('too few samples', () => {
  const spans: Span[] = [{ start: 0, end: 20_000 }];
  const line = (values: (number | null)[]) => ({
    name: 'rows a second',
    color: '#000',
    points: values.map((v, i) => [i * 5000, v] as const),
  });

  it.each<[string, (number | null)[], boolean]>([
    ['one sample', [8], false],
    ['two samples', [8, 9], false],
    ['three samples, a hole between', [8, null, 9, 7], true],
    ['three samples', [8, 9, 7], true],
    ['none', [null, null], false],
  ])('%s: drawn %s', (_name, values, drawn) => {
    const html = timeChart('Rows done a second', 'rows/s', spans, [line(values)]);
    expect(html.includes('<svg')).toBe(drawn);
    if (!drawn) expect(html).toContain(tooFewSentence(mostPoints([line(values)])));
  });

  it('the sentences', () => {
    expect(MIN_POINTS).toBe(3);
    expect(tooFewSentence(1)).toBe(
      'Not drawn: only one interval of the run has figures for this chart, too few to show a course over time.',
    );
    expect(tooFewSentence(2)).toBe(
      'Not drawn: only 2 intervals of the run have figures for this chart, too few to show a course over time.',
    );
    expect(shortRunSentence(2918, 1)).toBe(
      'The run lasted 3 s. Its time series holds 1 sample (one is taken every few seconds): too few to draw how the rate, the latency and the retries went over time. The tables above give them for the whole run.',
    );
  });
});
