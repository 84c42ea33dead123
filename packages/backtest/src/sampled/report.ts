/**
 * report.html of a sampled comparison: the notice at the top ("estimated from a sample of n of N"), the design
 * and the rows not compared, and per comparison the population estimates with their 95% intervals, each table
 * and chart carrying the notice. The figures the rest of the page shows count the sampled keys unweighted: they
 * are marked "sample only" (markSampleOnly), so an unweighted figure is never read as the population's.
 */
import type { CompareJson, ComparisonJson } from '../compare-json.js';
import type { Estimate } from '../design/estimators.js';
import { table, td } from '@bre-batch/formats/page/html';
import { COLOR_A, COLOR_B, esc, fmtInt, fmtNum, fmtPct, fmtPp, svg } from '@bre-batch/formats/page/svg';
import type { BadRateEstimate, SampleEstimates, ScorePowerEstimate, SwapEstimate } from './estimates.js';
import type { SampleSummary } from './sampling.js';

export const SAMPLE_CSS = `
.sample-notice{background:#eaf2fb;border-left:5px solid ${COLOR_A};padding:10px 14px;margin:12px 0 18px;font-size:15px}
.sample-notice b{font-size:17px}
.est-note{color:var(--mute);font-size:13px;margin:2px 0 10px}
.tag{display:inline-block;font-size:12px;font-weight:600;border-radius:3px;padding:1px 6px;margin-right:6px;vertical-align:middle}
.tag-est{background:#dbe9f7;color:#1f4e7a}
.tag-sample{background:#eceff3;color:#4a5561}
.sample-only{border-left:3px solid #c9d1da;padding-left:14px;margin-top:28px}
details summary{cursor:pointer;color:var(--mute);margin:6px 0}
`;

/** The tag on every heading of a figure that counts the sampled keys unweighted. */
export const SAMPLE_ONLY_TAG = '<span class="tag tag-sample">sample only</span>';
const ESTIMATE_TAG = '<span class="tag tag-est">population estimate</span>';

function notice(s: SampleSummary): string {
  return s.notice.charAt(0).toUpperCase() + s.notice.slice(1);
}

/** The line under each table and chart of estimates. */
function caption(s: SampleSummary, extra = '', intervals = true): string {
  return `<p class="est-note">${esc(notice(s))}${intervals ? ' · 95% design-based intervals' : ''}${extra ? ` · ${esc(extra)}` : ''}</p>`;
}

/** The banner at the top of the page. */
export function sampleNotice(j: CompareJson): string {
  const s = j.sample;
  if (!s) return '';
  const by =
    s.design.stratify_by.map((b) => (b.group ? `${b.column} by ${b.group}` : b.column)).join(' and ') || 'nothing';
  const missing =
    s.not_compared > 0
      ? ` ${fmtInt(s.not_compared)} sampled keys could not be compared (failed or missing: see The sample) and are left out.`
      : '';
  return `<p class="sample-notice"><b>${esc(notice(s))}</b> rows of the input: a stratified random sample (strata: ${esc(by)}; seed <code>${esc(s.design.seed)}</code>). The population estimates below speak for all ${esc(fmtInt(s.design.population))} rows, each with a 95% interval.${esc(missing)} Sections marked ${SAMPLE_ONLY_TAG} count the ${esc(fmtInt(s.compared))} sampled keys unweighted: they describe the sample, not the population.</p>`;
}

/** The design, the rows not compared and the strata (folded). */
export function sampleSection(j: CompareJson): string {
  const s = j.sample;
  if (!s) return '';
  const d = s.design;
  const ask = d.size !== null ? `${fmtInt(d.size)} rows` : `${fmtPct(d.share, 0)} of each stratum`;
  const failedB = s.failed.b === null ? '' : ` · B ${fmtInt(s.failed.b)}`;
  const unfinished = s.not_processed.a + (s.not_processed.b ?? 0);
  const rows: string[][] = [
    [td('Population (rows of the input, in strata)'), td(fmtInt(d.population), true)],
    [
      td('Sampled'),
      td(
        `${fmtInt(d.sampled)} <span class="note">(${esc(d.allocation)}, ${esc(ask)}, at least 2 per stratum)</span>`,
        true,
      ),
    ],
    [td('Sampled keys compared (the estimates\u2019 units)'), td(fmtInt(s.compared), true)],
    [td('Sampled rows that failed (errors.ndjson)'), td(`A ${fmtInt(s.failed.a)}${esc(failedB)}`, true)],
    [td('Sampled rows not compared, in all'), td(fmtInt(s.not_compared), true)],
    [td('Strata / with no compared key'), td(`${fmtInt(d.strata.length)} / ${fmtInt(s.uncovered.strata)}`, true)],
  ];
  const warnings: string[] = [];
  if (s.not_compared > 0) {
    warnings.push(
      `${fmtInt(s.not_compared)} sampled rows could not be compared. Each is a sampled row outside the compared keys (a zero in its stratum, never a smaller stratum): the estimates are of what a run of every row would compare, its failed rows left out the same way. If the failures were passing trouble (time-outs, 503s), re-run with <code>--retry-errors</code> and compare again.`,
    );
  }
  if (unfinished > 0)
    warnings.push(
      `A run has not finished: ${fmtInt(unfinished)} sampled rows are in neither results nor errors. Counts and totals are short by their share; resume the run (the same command) and compare again.`,
    );
  const strataWord = (n: number, verb: string, verbs: string): string =>
    `${fmtInt(n)} ${n === 1 ? `stratum ${verb}` : `strata ${verbs}`}`;
  if (s.uncovered.strata > 0)
    warnings.push(
      `${strataWord(s.uncovered.strata, 'has', 'have')} no compared key (${fmtInt(s.uncovered.population)} rows of the population: ${esc(s.uncovered.names.slice(0, 5).join(', '))}${s.uncovered.strata > 5 ? ', …' : ''}): the estimates do not speak for ${s.uncovered.strata === 1 ? 'its' : 'their'} rows.`,
    );
  if (s.lonely_strata > 0)
    warnings.push(
      `${strataWord(s.lonely_strata, 'has', 'have')} a single sampled row of several: its variance cannot be measured and is taken as the average of the other strata's (R's survey.lonely.psu = "average").`,
    );
  const strata = table(
    [
      'stratum',
      'population N_h',
      'sampled n_h',
      'weight N_h/n_h',
      'compared',
      'failed A',
      ...(s.failed.b === null ? [] : ['failed B']),
    ],
    d.strata.map((x) => [
      td(esc(x.name)),
      td(fmtInt(x.population), true),
      td(fmtInt(x.sample), true),
      td(fmtNum(x.weight, 2), true),
      td(fmtInt(x.compared), true),
      td(fmtInt(x.failed_a), true),
      ...(x.failed_b === null ? [] : [td(fmtInt(x.failed_b), true)]),
    ]),
  );
  return `<section><h3>The sample</h3><p class="note">Seed <code>${esc(d.seed)}</code>; ${esc(d.method)}. Each sampled key stands for N_h / n_h rows of its stratum. ${esc(s.same_sample === 'one run' ? 'Both sides are stages of one run: the same sample.' : `Runs A and B: ${s.same_sample}.`)}</p>${table(['', 'rows'], rows)}${warnings.map((w) => `<p class="warn">${w}</p>`).join('')}<details><summary>The ${esc(fmtInt(d.strata.length))} strata</summary>${strata}</details></section>`;
}

function ciText(e: Estimate | null | undefined, fmt: (x: number) => string): string {
  if (!e) return '–';
  if (!e.ci) return e.note ? `<span title="${esc(e.note)}">no interval</span>` : 'no interval';
  return esc(`${fmt(e.ci.lower)} to ${fmt(e.ci.upper)}`);
}

function value(e: Estimate | null | undefined, fmt: (x: number) => string): string {
  return e ? esc(fmt(e.estimate)) : '–';
}

const pct = (x: number): string => fmtPct(x);
const pp = (x: number): string => fmtPp(x);
const int = (x: number): string => fmtInt(x);
const money = (x: number): string => fmtNum(x);
const three = (x: number): string => fmtNum(x, 3);

function row(label: string, e: Estimate | null | undefined, fmt: (x: number) => string, sample: string): string[] {
  return [td(esc(label)), td(value(e, fmt), true), td(ciText(e, fmt), true), td(esc(sample), true)];
}

function kpis(s: SampleSummary, e: SampleEstimates): string {
  const a = e.approval;
  const w = e.swaps;
  if (!a || !w) return '';
  const box = (v: string, label: string, est: Estimate | null, fmt: (x: number) => string): string =>
    `<div class="kpi"><b>${v}</b><span>${esc(label)} (95%: ${ciText(est, fmt)})<br>${esc(s.notice)}</span></div>`;
  return `<div class="kpis">${[
    box(value(a.a, pct), 'approval rate A', a.a, pct),
    box(value(a.b, pct), 'approval rate B', a.b, pct),
    box(value(a.difference, pp), 'difference B − A', a.difference, pp),
    box(value(w.swap_in.count, int), 'swap-in: approved by B only', w.swap_in.count, int),
    box(value(w.swap_out.count, int), 'swap-out: approved by A only', w.swap_out.count, int),
  ].join('')}</div>`;
}

/** Estimates with their intervals on one 0–100% axis: the approval rates and the approved sets' bad rates. */
function intervalChart(title: string, items: readonly { label: string; e: Estimate | null; color: string }[]): string {
  const shown = items.filter((i) => i.e !== null);
  if (shown.length === 0) return '';
  const labelW = 220;
  const plotW = 420;
  const valueW = 170;
  const rowH = 30;
  const top = 30;
  const height = top + shown.length * rowH + 10;
  const width = labelW + plotW + valueW;
  const max = Math.min(
    1,
    Math.max(0.1, ...shown.map((i) => (i.e as Estimate).ci?.upper ?? (i.e as Estimate).estimate)) * 1.1,
  );
  const x = (v: number): number => labelW + (Math.max(0, Math.min(max, v)) / max) * plotW;
  const parts: string[] = [];
  const step = max > 0.5 ? 0.2 : max > 0.2 ? 0.1 : 0.05;
  for (let t = 0; t <= max + 1e-9; t += step) {
    parts.push(
      `<line x1="${x(t).toFixed(1)}" y1="${top - 6}" x2="${x(t).toFixed(1)}" y2="${height - 8}" class="gr"/><text x="${x(t).toFixed(1)}" y="${top - 10}" text-anchor="middle" class="tk">${esc(fmtPct(t, 0))}</text>`,
    );
  }
  shown.forEach((item, k) => {
    const e = item.e as Estimate;
    const y = top + k * rowH + rowH / 2;
    parts.push(`<text x="${labelW - 8}" y="${y + 4}" text-anchor="end" class="lb">${esc(item.label)}</text>`);
    if (e.ci) {
      parts.push(
        `<line x1="${x(e.ci.lower).toFixed(1)}" y1="${y}" x2="${x(e.ci.upper).toFixed(1)}" y2="${y}" stroke="${item.color}" stroke-width="3"/>`,
      );
      for (const end of [e.ci.lower, e.ci.upper])
        parts.push(
          `<line x1="${x(end).toFixed(1)}" y1="${y - 6}" x2="${x(end).toFixed(1)}" y2="${y + 6}" stroke="${item.color}" stroke-width="2"/>`,
        );
    }
    parts.push(
      `<circle cx="${x(e.estimate).toFixed(1)}" cy="${y}" r="5" fill="${item.color}"><title>${esc(`${item.label}: ${fmtPct(e.estimate)}${e.ci ? ` (95%: ${fmtPct(e.ci.lower)} to ${fmtPct(e.ci.upper)})` : ''}`)}</title></circle>`,
    );
    parts.push(
      `<text x="${labelW + plotW + 10}" y="${y + 4}" class="vl">${esc(`${fmtPct(e.estimate)}${e.ci ? `  [${fmtPct(e.ci.lower)}, ${fmtPct(e.ci.upper)}]` : ''}`)}</text>`,
    );
  });
  parts.push(`<line x1="${labelW}" y1="${top - 6}" x2="${labelW}" y2="${height - 8}" class="ax"/>`);
  return svg(title, width, height, parts);
}

function swapRows(label: string, w: SwapEstimate): string[][] {
  return [
    row(`${label}: keys`, w.count, int, fmtInt(w.sample)),
    row(`${label}: share of compared keys`, w.share, pct, ''),
  ];
}

function badRow(label: string, b: BadRateEstimate): string[] {
  return [
    td(esc(label)),
    td(value(b.bad_rate, pct), true),
    td(ciText(b.bad_rate, pct), true),
    td(value(b.coverage, pct), true),
    td(esc(`${fmtInt(b.sample)} / ${fmtInt(b.sample_known)} / ${fmtInt(b.sample_bad)}`), true),
  ];
}

function scoreRows(label: string, side: 'A' | 'B', p: ScorePowerEstimate): string[] {
  const at = p.ks
    ? Number.isInteger(p.ks.at_score)
      ? fmtNum(p.ks.at_score)
      : String(Number(p.ks.at_score.toPrecision(6)))
    : '';
  const ks = p.ks ? `${value(p.ks, three)} <span class="note">at ${esc(at)}</span>` : '–';
  return [
    td(`<code>${esc(label)}</code> ${side}`),
    td(value(p.auc, three), true),
    td(ciText(p.auc, three), true),
    td(value(p.gini, three), true),
    td(ciText(p.gini, three), true),
    td(ks, true),
    td(ciText(p.ks, three), true),
    td(esc(`${fmtInt(p.sample_good)} / ${fmtInt(p.sample_bad)}`), true),
  ];
}

/** The population estimates of one comparison. */
export function estimatesSection(c: ComparisonJson, j: CompareJson): string {
  const e = c.estimates;
  const s = j.sample;
  if (!e || !s) return '';
  const head = `<h3>${ESTIMATE_TAG}Population estimates</h3><p class="note">Over the ${esc(fmtInt(e.population))} rows of the strata with a compared key; every figure estimated from the ${esc(fmtInt(e.compared))} sampled keys compared, weighted by their strata (N_h / n_h). The intervals are design-based: the stratified variance with the finite population correction (rates, counts, amounts) and a bootstrap within strata (AUC, Gini, KS).</p>`;
  const parts: string[] = [head, kpis(s, e)];
  const ap = e.approval;
  if (ap && e.swaps) {
    const items = [
      { label: 'approval rate A', e: ap.a, color: COLOR_A },
      { label: 'approval rate B', e: ap.b, color: COLOR_B },
      ...(e.bad_rates
        ? [
            { label: 'bad rate of A\u2019s approved', e: e.bad_rates.a_approved.bad_rate, color: COLOR_A },
            { label: 'bad rate of B\u2019s approved', e: e.bad_rates.b_approved.bad_rate, color: COLOR_B },
            { label: 'bad rate of swap-ins', e: e.bad_rates.swap_in.bad_rate, color: COLOR_B },
            { label: 'bad rate of swap-outs', e: e.bad_rates.swap_out.bad_rate, color: COLOR_A },
          ]
        : []),
    ];
    parts.push(
      `<div class="chartbox">${intervalChart(`Rates with their 95% intervals, ${s.notice}`, items)}</div>${caption(s, 'dot: estimate; bar: 95% interval')}`,
    );
    parts.push(
      `<h4>Approvals and swaps</h4>${table(
        ['figure', 'estimate', '95% interval', 'sampled keys'],
        [
          row('approval rate A', ap.a, pct, ''),
          row('approval rate B', ap.b, pct, ''),
          row('difference B − A', ap.difference, pp, fmtInt(e.compared)),
          ...swapRows('swap-in (B only)', e.swaps.swap_in),
          ...swapRows('swap-out (A only)', e.swaps.swap_out),
          ...swapRows('approved by both', e.swaps.both_approve),
          ...swapRows('approved by neither', e.swaps.both_reject),
          row('net swaps (in − out)', e.swaps.net, int, ''),
          row('keys compared', e.compared_population, int, fmtInt(e.compared)),
        ],
      )}${caption(s)}`,
    );
  }
  if (e.bad_rates) {
    const b = e.bad_rates;
    parts.push(
      `<h4>Bad rates (outcome <code>${esc(j.options.outcome ?? '')}</code>)</h4><p class="note">Each a ratio: the set's bads over its keys with a known outcome. Coverage: the estimated share of the set with a known outcome (read a swap-in rate with it: applicants a strategy rejected were rarely lent to).</p>${table(
        ['set', 'bad rate', '95% interval', 'coverage', 'sampled: keys / known / bad'],
        [
          badRow('approved by A', b.a_approved),
          badRow('approved by B', b.b_approved),
          badRow('swap-in (B only)', b.swap_in),
          badRow('swap-out (A only)', b.swap_out),
          badRow('approved by both', b.both_approve),
          badRow('approved by neither', b.both_reject),
          badRow('all compared keys', b.all),
        ],
      )}${caption(s)}`,
    );
  }
  if (e.amounts) {
    const m = e.amounts;
    const amount = (label: string, x: Estimate): string[] => row(label, x, money, '').slice(0, 3);
    parts.push(
      `<h4>Loan amounts</h4>${table(
        ['total', 'estimate', '95% interval'],
        [
          amount('amount approved by A', m.a_total),
          amount('amount approved by B', m.b_total),
          amount('change B − A', m.change),
          amount('new amount on swap-ins (B)', m.swap_in_total),
          amount('amount no longer lent on swap-outs (A)', m.swap_out_total),
        ],
      )}${caption(s)}`,
    );
  }
  if (e.scores && e.scores.length > 0) {
    const rows = e.scores.flatMap((sc) => [
      scoreRows(sc.label, 'A', sc.a),
      scoreRows(sc.label, 'B', sc.b),
      [
        td(`<code>${esc(sc.label)}</code> AUC B − A`),
        td(value(sc.difference, three), true),
        td(ciText(sc.difference, three), true),
        td(''),
        td(''),
        td(''),
        td(''),
        td(esc(sc.difference ? `${fmtInt(sc.difference.sample)} with both` : ''), true),
      ],
    ]);
    parts.push(
      `<h4>Score power</h4>${table(['score', 'AUC', '95% interval', 'Gini', '95% interval', 'KS', '95% interval', 'sampled good / bad'], rows)}${caption(s, `AUC, Gini, KS with the design weights; intervals from ${fmtInt(s.replicates)} bootstrap replicates within strata`)}`,
    );
  }
  if (e.psi.length > 0) {
    const shown = e.psi.slice(0, 20);
    parts.push(
      `<h4>Feature stability (PSI), A against B</h4>${table(
        ['feature', 'type', 'PSI', 'band'],
        shown.map((f) => [
          td(`<code>${esc(f.feature)}</code>`),
          td(esc(f.type)),
          td(esc(fmtNum(f.psi, 3)), true),
          td(f.band ? `<span class="band band-${esc(f.band)}">${esc(f.band)}</span>` : '–'),
        ]),
        2,
      )}${e.psi.length > shown.length ? `<p class="note">${esc(fmtInt(e.psi.length - shown.length))} more in compare.json.</p>` : ''}${caption(s, 'PSI from the estimated population shares of A\u2019s bins; no interval: near 0, where most PSIs are, its sampling distribution is not normal', false)}`,
    );
  }
  return `<section>${parts.join('')}</section>`;
}

/** Tags every figure heading of `html` as sample only, under a line that says what that means. */
export function markSampleOnly(html: string, s: SampleSummary): string {
  if (html === '') return '';
  const tagged = html.replace(/<h3>/g, `<h3>${SAMPLE_ONLY_TAG}`);
  return `<div class="sample-only"><p class="note">${SAMPLE_ONLY_TAG}The figures below count the ${esc(fmtInt(s.compared))} sampled keys unweighted (their intervals are for the sample's own keys): they describe the sample, not the population. The population estimates are above.</p>${tagged}</div>`;
}
