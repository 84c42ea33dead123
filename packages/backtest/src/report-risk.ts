/**
 * The credit-risk sections of report.html: score power, cut-off trade-off, deciles, outcome coverage, vintages
 * and stability over time. Built from compare.json's figures alone, like the rest of the page.
 */
import type { BadRate, BadSet, ComparisonFigures } from './comparison.js';
import { ci, table, td } from '@bre-batch/formats/page/html';
import type { PeriodFigures, PeriodsFigures } from './period/periods.js';
import type { RiskFigures } from './risk.js';
import type { ScoreFigures, ScoreSideFigures } from './score/collector.js';
import { LOW_COVERAGE } from './score/coverage.js';
import type { InputStabilityFigures } from './stability/input.js';
import type { Mover } from './stability/over-time.js';
import { COLOR_A, COLOR_B, esc, fmtInt, fmtNum, fmtPct, fmtPp } from '@bre-batch/formats/page/svg';
import { smallMultiples, tradeoffChart, type Marker, type TradeoffCurve } from './svg-risk.js';

export const RISK_CSS = `
.box{border:1px solid var(--line);border-radius:6px;padding:8px 12px;margin:10px 0;background:#fbfcfd}
tr.small td{color:var(--mute);font-style:italic}
.tag{font-size:11px;font-weight:600;border-radius:3px;padding:0 5px;background:#eef1f4;color:var(--mute);font-style:normal}
`;

type Comparison = ComparisonFigures & RiskFigures;

function score(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  return Number.isInteger(v) ? fmtInt(v) : String(Number(v.toPrecision(6)));
}

function num(v: number | null | undefined, digits: number): string {
  if (v === null || v === undefined) return '–';
  const text = fmtNum(v, digits);
  // A value that rounds to zero is shown without a sign ("-0.00" reads as a negative).
  return /^-0\.?0*$/.test(text) ? text.slice(1) : text;
}

function range(c: { lower: number; upper: number } | null | undefined, digits = 3): string {
  return c ? `${fmtNum(c.lower, digits)} – ${fmtNum(c.upper, digits)}` : '–';
}

function powerRow(side: 'A' | 'B', f: ScoreSideFigures, showField: boolean): string[] {
  const p = f.power;
  return [
    td(
      `<span class="sw" style="background:${side === 'A' ? COLOR_A : COLOR_B}"></span>${side}${showField ? `: <code>${esc(f.field)}</code>` : ''}`,
    ),
    td(
      `${esc(fmtInt(f.scored.keys))} <span class="note">(${esc(fmtInt(f.scored.good))} good, ${esc(fmtInt(f.scored.bad))} bad, ${esc(fmtInt(f.scored.unknown))} unknown)</span>`,
      true,
    ),
    td(esc(fmtInt(f.missing.keys)), true),
    td(esc(fmtInt(f.no_score?.keys ?? 0)), true),
    td(p ? `${esc(num(p.auc, 3))} <span class="note">(${esc(range(p.ci))})</span>` : '–', true),
    td(p ? `${esc(num(p.gini, 3))} <span class="note">(${esc(range(p.gini_ci))})</span>` : '–', true),
    td(f.ks ? `${esc(num(f.ks.ks, 3))} <span class="note">at ${esc(score(f.ks.at_score))}</span>` : '–', true),
    td(f.iv === null ? '–' : `${esc(num(f.iv, 3))} <span class="note">${esc(f.iv_band ?? '')}</span>`, true),
  ];
}

function pairedText(s: ScoreFigures): string {
  const p = s.paired;
  if (!p) return 'No paired test: the keys with both scores have no good or no bad outcome.';
  if (p.identical)
    return `A and B give every one of the ${fmtInt(p.n_good + p.n_bad)} keys with a known outcome the same score: the same ranking, so there is no difference to test.`;
  const keys = `${fmtInt(p.n_good + p.n_bad)} keys with both scores and a known outcome`;
  if (p.z === null || p.p_value === null)
    return `AUC B − A ${fmtNum(p.difference, 4)} over ${keys}; the standard error is 0, so no test.`;
  const verdict =
    p.p_value < 0.05
      ? `B separates goods from bads ${p.difference > 0 ? 'better' : 'worse'} than A (p < 0.05).`
      : 'The difference is within what chance gives (p ≥ 0.05): no evidence that one score separates better.';
  return `AUC B − A: ${p.difference >= 0 ? '+' : '−'}${fmtNum(Math.abs(p.difference), 4)} (Gini ${p.difference >= 0 ? '+' : '−'}${fmtNum(Math.abs(2 * p.difference), 4)}), 95% interval ${fmtNum(p.ci?.lower, 4)} to ${fmtNum(p.ci?.upper, 4)}; z = ${fmtNum(p.z, 2)}, p = ${p.p_value < 0.0001 ? '< 0.0001' : fmtNum(p.p_value, 4)} (paired DeLong test over ${keys}). ${verdict}`;
}

/** Keys whose value is a no-score marker (--score-missing): counted apart, with their outcomes. */
function noScoreNote(side: 'A' | 'B', f: ScoreSideFigures): string {
  const n = f.no_score;
  if (!n || n.keys === 0) return '';
  const markers = n.markers
    .map(
      (m) =>
        `${fmtNum(m.value)}: ${fmtInt(m.keys)} (${fmtInt(m.good)} good, ${fmtInt(m.bad)} bad, ${fmtInt(m.unknown)} unknown)`,
    )
    .join('; ');
  const rate = n.good + n.bad > 0 ? `, bad rate ${fmtNum((100 * n.bad) / (n.good + n.bad), 1)}%` : '';
  return `<p class="box">No score in ${side}'s <code>${esc(f.field)}</code>: ${esc(fmtInt(n.keys))} compared keys carry a no-score marker (${esc(markers)}${esc(rate)}), such as a bureau's no-history -1. They are counted here, apart from the power, the deciles and the cut-off table, not ranked as the lowest score (<code>--score-missing</code>).</p>`;
}

function missingNote(side: 'A' | 'B', f: ScoreSideFigures): string {
  if (f.missing.keys === 0) return '';
  const m = f.missing;
  return `<p class="warn">${esc(fmtInt(m.keys))} compared keys have no number in ${side}'s <code>${esc(f.field)}</code> (${esc(fmtInt(m.good))} good, ${esc(fmtInt(m.bad))} bad, ${esc(fmtInt(m.unknown))} unknown outcome): they are counted here and left out of ${side}'s score figures, not given a value.</p>`;
}

function tradeoffSection(s: ScoreFigures): string {
  const same = s.keys_differing === 0;
  const curve = (f: ScoreSideFigures, name: string, color: string, dashed = false): TradeoffCurve => ({
    name,
    color,
    dashed,
    points: f.tradeoff.map((t) => ({ x: t.approval_rate, y: t.bad_rate })),
  });
  const curves = same
    ? [curve(s.a, 'score (same in A and B)', '#5b6775')]
    : [curve(s.a, "A's score", COLOR_A), curve(s.b, "B's score", COLOR_B, true)];
  const op = s.a.operating_points;
  const markers: Marker[] = op
    ? [
        { name: "A's decisions", color: COLOR_A, shape: 'circle', x: op.a.approval_rate, y: op.a.bad_rate },
        { name: "B's decisions", color: COLOR_B, shape: 'diamond', x: op.b.approval_rate, y: op.b.bad_rate },
      ]
    : [];
  const chart = tradeoffChart(
    `Cut-off trade-off of ${s.label}: approval rate against the bad rate of the approved`,
    curves,
    markers,
  );
  const head = same
    ? ['target approval', 'cut-off', 'approved', 'approval rate', 'bad rate']
    : ['target approval', 'cut-off A', 'approval A', 'bad rate A', 'cut-off B', 'approval B', 'bad rate B'];
  // Targets that land on the same cut-off (a tie group) share one row.
  const groups: { from: number; to: number; i: number }[] = [];
  s.a.tradeoff.forEach((t, i) => {
    const last = groups[groups.length - 1];
    const tie =
      last &&
      s.a.tradeoff[last.i].cutoff === t.cutoff &&
      (same || s.b.tradeoff[last.i]?.cutoff === s.b.tradeoff[i]?.cutoff);
    if (tie) last.to = t.target;
    else groups.push({ from: t.target, to: t.target, i });
  });
  const rows = groups.map(({ from, to, i }) => {
    const t = s.a.tradeoff[i];
    const b = s.b.tradeoff[i];
    const target = from === to ? fmtPct(from, 0) : `${fmtPct(from, 0)} – ${fmtPct(to, 0)}`;
    const cells = [td(esc(target)), td(esc(score(t.cutoff)), true)];
    if (same)
      cells.push(
        td(esc(fmtInt(t.approved)), true),
        td(esc(fmtPct(t.approval_rate)), true),
        td(esc(fmtPct(t.bad_rate)), true),
      );
    else
      cells.push(
        td(esc(fmtPct(t.approval_rate)), true),
        td(esc(fmtPct(t.bad_rate)), true),
        td(esc(score(b?.cutoff)), true),
        td(esc(fmtPct(b?.approval_rate)), true),
        td(esc(fmtPct(b?.bad_rate)), true),
      );
    return cells;
  });
  const dir = s.direction === 'higher_is_better' ? 'at or above' : 'at or below';
  const points = op
    ? `<p class="note">Markers: where each strategy's decisions sit over the ${esc(fmtInt(s.a.scored.keys))} keys with A's score — A approves ${esc(fmtPct(op.a.approval_rate))} with a bad rate of ${esc(fmtPct(op.a.bad_rate))}, B approves ${esc(fmtPct(op.b.approval_rate))} with ${esc(fmtPct(op.b.bad_rate))}. A marker above the line approves worse applicants than a plain cut-off on this score would at the same approval rate.</p>`
    : '';
  return `<h4>Cut-off trade-off</h4><p class="note">For each target approval rate, approve every key scoring ${dir} the cut-off (ties at the cut-off all approved, so the actual rate can be higher); the bad rate is over the approved keys whose outcome is known.</p><div class="chartbox">${chart}</div>${points}${table(head, rows)}`;
}

function decileTable(side: 'A' | 'B', f: ScoreSideFigures): string {
  const rows = f.deciles.map((d, i) => [
    td(`${i + 1}`),
    td(esc(d.min === d.max ? score(d.min) : `${score(d.min)} – ${score(d.max)}`), true),
    td(esc(fmtInt(d.keys)), true),
    td(esc(fmtInt(d.bad)), true),
    td(esc(fmtInt(d.unknown)), true),
    td(esc(fmtPct(d.bad_rate)), true),
    td(esc(num(d.woe, 2)), true),
    td(esc(fmtPct(d.cum_keys_share)), true),
    td(esc(fmtPct(d.cum_bad_share)), true),
    td(esc(fmtPct(d.cum_bad_rate)), true),
  ]);
  return `<p class="note">${side}: <code>${esc(f.field)}</code>, riskiest first; IV ${esc(num(f.iv, 3))} (${esc(f.iv_band ?? '–')}).</p>${table(['bin', 'scores', 'keys', 'bads', 'unknown', 'bad rate', 'WoE', 'cum. keys', 'cum. bads', 'cum. bad rate'], rows)}`;
}

function scoreSection(s: ScoreFigures, outcome: string | null): string {
  const dir = s.direction === 'higher_is_better' ? 'higher is better' : 'lower is better';
  const named = s.field_a !== s.field_b;
  const power = table(
    ['run', 'scored keys', 'missing', 'no score', 'AUC (95%)', 'Gini (95%)', 'KS', 'IV'],
    [powerRow('A', s.a, named), powerRow('B', s.b, named)],
  );
  const deciles = s.keys_differing === 0 ? decileTable('A', s.a) : decileTable('A', s.a) + decileTable('B', s.b);
  return `<section><h3>Score power: <code>${esc(s.label)}</code></h3><p class="note">${esc(dir)}; against outcome <code>${esc(outcome ?? '')}</code> over the keys with a score and a known outcome. AUC: the chance that a good scores better than a bad (0.5 = no better than chance); Gini = 2·AUC − 1; KS: the largest gap between the score distributions of bads and goods.</p>${power}<p class="box">${esc(pairedText(s))}</p>${missingNote('A', s.a)}${s.keys_differing > 0 ? missingNote('B', s.b) : ''}${noScoreNote('A', s.a)}${s.keys_differing > 0 ? noScoreNote('B', s.b) : ''}${tradeoffSection(s)}<h4>Deciles and information value</h4>${deciles}</section>`;
}

export function scoreSections(c: Comparison, outcome: string | null): string {
  return (c.scores ?? []).map((s) => scoreSection(s, outcome)).join('');
}

const SWAP_SETS: readonly [BadSet, string][] = [
  ['swap_in', 'swap-in (B only)'],
  ['swap_out', 'swap-out (A only)'],
];

/**
 * The plain warning under the bad-rate table: a swap set's bad rate rests on the outcomes that are known, so
 * each swap set with unknown outcomes gets its coverage and the range its true bad rate can lie in.
 */
export function coverageWarning(bad: Readonly<Record<BadSet, BadRate>>): string {
  const open = SWAP_SETS.filter(([k]) => bad[k].rows > 0 && bad[k].unknown > 0);
  if (open.length === 0) return '';
  const low = open.some(([k]) => (bad[k].coverage ?? 1) < LOW_COVERAGE);
  const lines = open.map(([k, name]) => {
    const b = bad[k];
    return `${name}: ${fmtInt(b.known)} of ${fmtInt(b.rows)} keys (${fmtPct(b.coverage)}) have a known outcome, so its true bad rate lies anywhere between ${fmtPct(b.bad_rate_best)} (every unknown good) and ${fmtPct(b.bad_rate_worst)} (every unknown bad)`;
  });
  const lead = low
    ? 'Swap-set bad rates are only as good as their outcome coverage, and here it is low.'
    : 'Swap-set bad rates are only as good as their outcome coverage.';
  return `<p class="warn"><b>${esc(lead)}</b> Applicants a strategy rejected were never lent to, and recent applications have not had time to go bad. ${esc(lines.join('; '))}.</p>`;
}

function periodRow(p: PeriodFigures): string[] {
  const cover = p.bad_rate_all?.coverage;
  return [
    td(`${esc(p.period)}${p.small ? ' <span class="tag">small</span>' : ''}`),
    td(esc(fmtInt(p.keys)), true),
    td(esc(fmtPct(p.approval.a.rate)), true),
    td(esc(fmtPct(p.approval.b.rate)), true),
    td(esc(`${fmtPp(p.approval.difference)} (${ci(p.approval.difference_ci, true).replace(' pp', '')})`), true),
    td(esc(fmtInt(p.swap_in)), true),
    td(esc(fmtInt(p.swap_out)), true),
    ...(p.bad_rate_a_approved
      ? [
          td(esc(fmtPct(p.bad_rate_a_approved.bad_rate)), true),
          td(esc(fmtPct(p.bad_rate_b_approved?.bad_rate)), true),
          td(esc(fmtPct(cover)), true),
        ]
      : []),
  ];
}

export function periodsSection(c: Comparison): string {
  const pf: PeriodsFigures | null = c.periods;
  if (!pf) return '';
  const ps = pf.periods;
  const withBad = ps.some((p) => p.bad_rate_a_approved !== undefined);
  const labels = ps.map((p) => p.period);
  const small = ps.map((p) => p.small);
  const chart = smallMultiples(`Vintages by ${pf.column}`, labels, small, [
    {
      title: 'Compared keys',
      kind: 'count',
      bars: true,
      series: [{ name: 'keys', color: '#8895a4', shape: 'circle', values: ps.map((p) => p.keys) }],
    },
    {
      title: 'Approval rate',
      kind: 'rate',
      series: [
        { name: 'A', color: COLOR_A, shape: 'circle', values: ps.map((p) => p.approval.a.rate) },
        { name: 'B', color: COLOR_B, shape: 'diamond', values: ps.map((p) => p.approval.b.rate) },
      ],
    },
    ...(withBad
      ? [
          {
            title: 'Bad rate of the approved (known outcomes)',
            kind: 'rate' as const,
            series: [
              {
                name: 'A approved',
                color: COLOR_A,
                shape: 'circle' as const,
                values: ps.map((p) => p.bad_rate_a_approved?.bad_rate ?? null),
              },
              {
                name: 'B approved',
                color: COLOR_B,
                shape: 'diamond' as const,
                values: ps.map((p) => p.bad_rate_b_approved?.bad_rate ?? null),
              },
            ],
          },
        ]
      : []),
    {
      title: 'Swaps',
      kind: 'count',
      bars: true,
      series: [
        { name: 'swap-in', color: '#2f8a4c', shape: 'circle', values: ps.map((p) => p.swap_in) },
        { name: 'swap-out', color: '#c0392b', shape: 'circle', values: ps.map((p) => p.swap_out) },
      ],
    },
    ...(withBad
      ? [
          {
            title: 'Outcome known (share of keys)',
            kind: 'rate' as const,
            series: [
              {
                name: 'known',
                color: '#5b6775',
                shape: 'circle' as const,
                values: ps.map((p) => p.bad_rate_all?.coverage ?? null),
              },
            ],
          },
        ]
      : []),
  ]);
  const head = [
    'period',
    'keys',
    'approval A',
    'approval B',
    'B − A (95% interval)',
    'swap-in',
    'swap-out',
    ...(withBad ? ['bad rate A approved', 'bad rate B approved', 'outcome known'] : []),
  ];
  const tbl = table(head, ps.map(periodRow), 1, (i) => (ps[i].small ? 'small' : ''));
  const nSmall = ps.filter((p) => p.small).length;
  const smallNote =
    nSmall > 0
      ? ` ${nSmall} period${nSmall === 1 ? ' has' : 's have'} fewer than ${pf.min_keys} keys: marked <span class="tag">small</span> (hatched in the chart, hollow markers): shown, but their rates are noisy.`
      : '';
  return `<section><h3>Vintages by <code>${esc(pf.column)}</code> (${esc(pf.unit)})</h3><p class="note">Keys grouped by the period of their ${esc(pf.column)}; "(missing)": no date in that column.${smallNote}</p><div class="chartbox">${chart}</div>${tbl}</section>`;
}

const SOURCE: Readonly<Record<Mover['source'], string>> = {
  input: 'input column',
  a: 'result field, A',
  b: 'result field, B',
  'a=b': 'result field, A and B',
};

export function stabilitySection(
  movers: readonly Mover[] | null,
  input: InputStabilityFigures | null,
  minKeys: number | null,
): string {
  if (movers === null) return '';
  const rows = movers.map((m) => [
    td(`<code>${esc(m.name)}</code>`),
    td(esc(SOURCE[m.source])),
    td(esc(m.baseline ?? '–')),
    td(esc(m.period)),
    td(`<span class="band band-${esc(m.band ?? 'stable')}">${esc(fmtNum(m.psi, 3))} ${esc(m.band ?? '')}</span>`, true),
    td(esc(num(m.noise, 3)), true),
    td(esc(m.p_value === null ? '–' : m.p_value < 0.001 ? '< 0.001' : fmtNum(m.p_value, 3)), true),
    td(m.p_value !== null && m.p_value < 0.05 ? '<b>moved</b>' : '<span class="note">within chance</span>'),
  ]);
  const skipped =
    input && input.skipped.length > 0
      ? `<p class="note">Input columns not assessed: ${input.skipped.map((s) => `<code>${esc(s.column)}</code> (${esc(s.reason)})`).join(', ')}.</p>`
      : '';
  const body =
    rows.length > 0
      ? table(
          ['characteristic', 'what', 'baseline period', 'latest period', 'PSI vs baseline', 'noise', 'p', ''],
          rows,
          4,
        )
      : '<p class="note">No characteristic has two periods to compare.</p>';
  return `<section><h2>Stability over time</h2><p class="note">Has the population moved since the strategy was built? PSI of each input column (CSI) and each numeric result field: the latest period with at least ${esc(fmtInt(minKeys))} values against the baseline, the oldest periods pooled until they hold a quarter of the values; the ten that moved most beyond sampling noise here (noise: the PSI two samples of an unchanged population of these sizes give on average, (bins − 1)·(1/n₀ + 1/n₁); p: the chance of a PSI this large if nothing moved, χ² approximation); every period of every characteristic in compare.json. <span class="band band-stable">&lt; 0.1 stable</span> <span class="band band-moderate">0.1–0.25 moderate</span> <span class="band band-major">≥ 0.25 major</span></p>${body}${skipped}</section>`;
}
