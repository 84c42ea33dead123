/**
 * report.html: one self-contained page (inline CSS and SVG, no script, no external resource) built from
 * compare.json alone, so what people read and what scripts read cannot disagree. Readable on a laptop,
 * printable (@media print keeps the colours of the heat map and PSI bands, avoids breaking inside a chart).
 */
import type { ApprovalFigures, BadRate, ComparisonFigures } from './comparison.js';
import type { CompareJson, ComparisonJson, RunSummary } from './compare-json.js';
import type { FeatureFigures } from './features.js';
import { ci, PRINT_CSS, runLabel, signed, table, td, th } from '@bre-batch/formats/page/html';
import { coverageWarning, periodsSection, RISK_CSS, scoreSections, stabilitySection } from './report-risk.js';
import {
  estimatesSection,
  markSampleOnly,
  SAMPLE_CSS,
  SAMPLE_ONLY_TAG,
  sampleNotice,
  sampleSection,
} from './sampled/report.js';
import {
  COLOR_A,
  COLOR_B,
  esc,
  fmtInt,
  fmtNum,
  fmtPct,
  fmtPp,
  groupedBars,
  heatMap,
  histogramChart,
} from '@bre-batch/formats/page/svg';

/** Rows shown in the rules and PSI tables (compare.json has them all). */
const TABLE_ROWS = 40;

const CSS = `
:root{--a:${COLOR_A};--b:${COLOR_B};--ink:#1d2733;--mute:#5b6775;--line:#d9dee5;--bg:#f6f8fa}
*{box-sizing:border-box}
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--ink);margin:0;background:#fff}
main{max-width:1080px;margin:0 auto;padding:24px 28px 48px}
h1{font-size:26px;margin:0 0 4px}
h2{font-size:21px;margin:36px 0 8px;padding-top:12px;border-top:3px solid var(--ink)}
h3{font-size:17px;margin:26px 0 8px}
h4{font-size:15px;margin:18px 0 6px}
p.sub,p.note{color:var(--mute);margin:4px 0 12px}
p.note{font-size:13px}
code{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--bg);padding:1px 4px;border-radius:3px;word-break:break-all}
table{border-collapse:collapse;margin:8px 0 12px;font-size:14px;min-width:50%}
.tw{overflow-x:auto;max-width:100%}
th,td{border:1px solid var(--line);padding:5px 8px;text-align:left;vertical-align:top}
th{background:var(--bg);font-weight:600}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
td.n{white-space:nowrap}
.kpis{display:flex;flex-wrap:wrap;gap:12px;margin:12px 0}
.kpi{border:1px solid var(--line);border-radius:6px;padding:10px 14px;min-width:150px}
.kpi b{display:block;font-size:22px}
.kpi span{color:var(--mute);font-size:13px}
.sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:5px;vertical-align:baseline}
.band{font-weight:600;border-radius:3px;padding:1px 6px}
.band-stable{background:#dff3e4;color:#1e6b34}
.band-moderate{background:#fff1c7;color:#7a5a00}
.band-major{background:#fbdcdc;color:#9b1c1c}
.pos{color:#1e6b34}.neg{color:#9b1c1c}
.warn{background:#fff7e0;border-left:4px solid #e0a800;padding:8px 12px;margin:12px 0}
.chartbox{overflow-x:auto;margin:6px 0 10px}
svg.chart{max-width:100%;height:auto;font-family:inherit}
svg .lg,svg .lb{font-size:12px;fill:var(--ink)}
svg .vl,svg .tk{font-size:11px;fill:var(--mute)}
svg .at{font-size:12px;fill:var(--mute);font-weight:600}
svg .hv{font-size:15px;font-weight:600;fill:var(--ink)}
svg .hp{font-size:11px;fill:var(--mute)}
svg .dk{fill:#fff}
svg .dg{stroke:#1d2733;stroke-width:1.5}
svg .ax{stroke:#8895a4;stroke-width:1}
svg .gr{stroke:#eef1f4;stroke-width:1}
svg .zb{fill:#9aa5b1}svg .pb{fill:#2f8a4c}svg .nb{fill:#c0392b}svg .mb{fill:#7f8c8d}
footer{margin-top:40px;color:var(--mute);font-size:13px}${RISK_CSS}${SAMPLE_CSS}
${PRINT_CSS}`;

function summarySection(j: CompareJson): string {
  const run = (r: RunSummary, side: 'A' | 'B'): string[] => [
    `<td>${runLabel(side)}</td>`,
    td(`<code>${esc(r.dir)}</code>`),
    td(esc(r.pipeline ?? '–')),
    td(fmtInt(r.results_rows), true),
    td(r.errors ? fmtInt(r.errors.rows) : '–', true),
    td(fmtInt(r.malformed_lines), true),
  ];
  const runs = `<div class="tw"><table><thead><tr>${th('run')}${th('folder')}${th('pipeline')}${th('results rows', true)}${th('error rows', true)}${th('unreadable lines', true)}</tr></thead><tbody><tr>${run(j.a, 'A').join('')}</tr><tr>${run(j.b, 'B').join('')}</tr></tbody></table></div>`;
  const jn = j.join;
  const joinRows: string[][] = [
    [td('Keys in both runs (compared)'), td(fmtInt(jn.matched), true)],
    [td('Keys only in A'), td(fmtInt(jn.only_a), true)],
    [td('Keys only in B'), td(fmtInt(jn.only_b), true)],
    [
      td('Duplicate keys (left out)'),
      td(
        `${fmtInt(jn.duplicates.keys)} <span class="note">(A rows ${fmtInt(jn.duplicates.a_rows)}, B rows ${fmtInt(jn.duplicates.b_rows)})</span>`,
        true,
      ),
    ],
    [td('Rows without a key (left out)'), td(`A ${fmtInt(jn.no_key.a_rows)} · B ${fmtInt(jn.no_key.b_rows)}`, true)],
  ];
  const o = j.options;
  const opts = [
    `product <code>${esc(o.product)}</code> (decision field <code>${esc(o.decision_field)}</code>, amount <code>${esc(o.amount_field)}</code>)`,
    o.outcome ? `outcome column <code>${esc(o.outcome)}</code> (1 = bad)` : '',
    o.by ? `segments by <code>${esc(o.by)}</code>` : '',
    o.by_version ? 'segments by strategy version' : '',
    ...o.scores.map(
      (sc) =>
        `score <code>${esc(sc.label)}</code> (${sc.direction === 'higher_is_better' ? 'higher' : 'lower'} is better)`,
    ),
    o.period ? `periods: <code>${esc(o.period.column)}</code> by ${esc(o.period.unit)}` : '',
    o.input ? `input <code>${esc(o.input)}</code>` : '',
  ]
    .filter(Boolean)
    .join(' · ');
  const warn =
    jn.matched === 0
      ? `<p class="warn">No key is present in both runs: there is nothing to compare. Check that both runs read the same input.</p>`
      : '';
  return `<section><h2 class="first">Summary</h2>${runs}${table(['join', 'count'], joinRows)}${warn}<p class="note">${opts}</p></section>${sampleSection(j)}`;
}

function kpis(c: ComparisonFigures): string {
  const a = c.approval as ApprovalFigures;
  const s = c.swaps as NonNullable<ComparisonFigures['swaps']>;
  const box = (value: string, label: string): string => `<div class="kpi"><b>${value}</b><span>${label}</span></div>`;
  return `<div class="kpis">${[
    box(esc(fmtPct(a.a.rate)), `approval rate A (${esc(ci(a.a.ci))})`),
    box(esc(fmtPct(a.b.rate)), `approval rate B (${esc(ci(a.b.ci))})`),
    box(esc(fmtPp(a.difference)), `difference B − A (95%: ${esc(ci(a.difference_ci, true))})`),
    box(esc(fmtInt(s.swap_in)), 'swap-in: approved by B only'),
    box(esc(fmtInt(s.swap_out)), 'swap-out: approved by A only'),
  ].join('')}</div>`;
}

function decisionsSection(c: ComparisonFigures): string {
  const d = c.decisions;
  if (!d) return '';
  const bars = groupedBars(`Decisions of ${c.stage_a} (A) and ${c.stage_b} (B)`, d.categories, [
    { name: `A: ${c.stage_a}`, color: COLOR_A, values: d.categories.map((k) => d.a[k] ?? 0) },
    { name: `B: ${c.stage_b}`, color: COLOR_B, values: d.categories.map((k) => d.b[k] ?? 0) },
  ]);
  const heat = heatMap(
    `Decision crosstab, ${c.stage_a} (A) by ${c.stage_b} (B)`,
    d.categories,
    d.crosstab,
    `A: ${c.stage_a}`,
    `B: ${c.stage_b}`,
  );
  const s = c.swaps as NonNullable<ComparisonFigures['swaps']>;
  const swaps = table(
    ['swap class', 'keys', 'share'],
    [
      ['both_approve', s.both_approve],
      ['swap_in', s.swap_in],
      ['swap_out', s.swap_out],
      ['both_reject', s.both_reject],
    ].map(([k, v]) => [
      td(`<code>${esc(k)}</code>`),
      td(fmtInt(v as number), true),
      td(fmtPct(c.n > 0 ? (v as number) / c.n : null), true),
    ]),
  );
  return (
    `<section><h3>Decisions</h3><div class="chartbox">${bars}</div></section>` +
    `<section><h3>Decision crosstab (swap matrix)</h3><p class="note">Rows: A's decision; columns: B's. Cells off the outlined diagonal are keys whose decision changed. Share of all ${esc(fmtInt(c.n))} compared keys under each count.</p><div class="chartbox">${heat}</div>${swaps}</section>`
  );
}

function amountsSection(c: ComparisonFigures): string {
  const m = c.amounts;
  if (!m) return '';
  const rows: string[][] = [
    [
      td('Total amount of approved keys'),
      td(fmtNum(m.a_total), true),
      td(fmtNum(m.b_total), true),
      td(signed(m.total_change), true),
    ],
    [
      td('Approved keys with an amount'),
      td(fmtInt(m.a_approved_with_amount), true),
      td(fmtInt(m.b_approved_with_amount), true),
      td(signed(m.b_approved_with_amount - m.a_approved_with_amount), true),
    ],
    [
      td('Mean amount'),
      td(fmtNum(m.a_mean), true),
      td(fmtNum(m.b_mean), true),
      td(m.a_mean !== null && m.b_mean !== null ? signed(m.b_mean - m.a_mean) : '–', true),
    ],
  ];
  const tbl = table(['', 'A', 'B', 'B − A'], rows);
  const ba = m.both_approve;
  const moves = table(
    ['keys both approved, amount on both sides', 'value'],
    [
      [td('keys'), td(fmtInt(ba.n), true)],
      [td('amount increased'), td(fmtInt(ba.increased), true)],
      [td('amount decreased'), td(fmtInt(ba.decreased), true)],
      [td('amount unchanged'), td(fmtInt(ba.unchanged), true)],
      [td('total change'), td(signed(ba.total_change), true)],
      [td('mean change'), td(signed(ba.mean_change, 2), true)],
      [td('smallest / largest change'), td(`${signed(ba.min_change)} / ${signed(ba.max_change)}`, true)],
      [td('new amount on swap-ins (B)'), td(fmtNum(m.swap_in_total), true)],
      [td('amount no longer lent on swap-outs (A)'), td(fmtNum(m.swap_out_total), true)],
    ],
  );
  const hist =
    m.histogram && (m.histogram.bins.length > 0 || m.histogram.unchanged > 0)
      ? `<div class="chartbox">${histogramChart(`Histogram of loan amount changes (B − A), ${c.label}`, m.histogram.bins, m.histogram.unchanged)}</div>`
      : '<p class="note">No key was approved with an amount on both sides: no histogram of changes.</p>';
  return `<section><h3>Loan amounts</h3>${tbl}${hist}${moves}</section>`;
}

function offersSection(c: ComparisonFigures): string {
  const o = c.offers;
  if (!o) return '';
  return `<section><h3>Offers</h3>${table(
    ['', 'value'],
    [
      [td('keys with an offer count on both sides'), td(fmtInt(o.n), true)],
      [td('offers A / B'), td(`${fmtInt(o.a_offers)} / ${fmtInt(o.b_offers)}`, true)],
      [
        td('keys with more / fewer / as many offers in B'),
        td(`${fmtInt(o.more)} / ${fmtInt(o.fewer)} / ${fmtInt(o.same)}`, true),
      ],
      [
        td('best offer loan amount, total A / B'),
        td(`${fmtNum(o.best_offer.a_total)} / ${fmtNum(o.best_offer.b_total)}`, true),
      ],
      [td('mean change of the best offer amount'), td(signed(o.best_offer.mean_change, 2), true)],
    ],
  )}</section>`;
}

function rulesSection(c: ComparisonFigures): string {
  if (c.rules.length === 0)
    return `<section><h3>Rules failed</h3><p class="note">No rule failed on either side (<code>rules_failed</code> empty).</p></section>`;
  const shown = c.rules.slice(0, TABLE_ROWS);
  const rows = shown.map((r) => [
    td(esc(r.rule)),
    td(fmtInt(r.a_failed), true),
    td(fmtPct(r.a_rate), true),
    td(fmtInt(r.b_failed), true),
    td(fmtPct(r.b_rate), true),
    td(
      r.difference === null
        ? '–'
        : `<span class="${r.difference > 0 ? 'neg' : r.difference < 0 ? 'pos' : ''}">${esc(fmtPp(r.difference))}</span>`,
      true,
    ),
    td(fmtInt(r.newly_failing), true),
    td(fmtInt(r.no_longer_failing), true),
  ]);
  const more =
    c.rules.length > shown.length
      ? `<p class="note">${esc(fmtInt(c.rules.length - shown.length))} more rules in compare.json.</p>`
      : '';
  return `<section><h3>Rules failed</h3><p class="note">Share of keys (where the stage ran) with the rule in <code>rules_failed</code>; largest changes first.</p>${table(['rule', 'A failed', 'A rate', 'B failed', 'B rate', 'B − A', 'newly failing in B', 'no longer failing'], rows)}${more}</section>`;
}

function bandCell(f: FeatureFigures): string {
  if (f.psi === null || f.band === null) return td('–', true);
  return td(`<span class="band band-${esc(f.band)}">${esc(fmtNum(f.psi, 3))} ${esc(f.band)}</span>`, true);
}

function featuresSection(c: ComparisonFigures): string {
  if (c.features.length === 0)
    return `<section><h3>Feature stability (PSI)</h3><p class="note">No feature in A's results for this stage.</p></section>`;
  const shown = c.features.slice(0, TABLE_ROWS);
  const rows = shown.map((f) => [
    td(`<code>${esc(f.feature)}</code>`),
    td(esc(f.type)),
    bandCell(f),
    td(fmtNum(f.mean_a, 2), true),
    td(fmtNum(f.mean_b, 2), true),
    td(signed(f.mean_change, 2), true),
    td(fmtInt(f.changed), true),
  ]);
  const more =
    c.features.length > shown.length
      ? `<p class="note">${esc(fmtInt(c.features.length - shown.length))} more features in compare.json.</p>`
      : '';
  const onlyB =
    c.features_only_in_b.length > 0
      ? `<p class="note">Only in B (no bins from A): ${c.features_only_in_b.map((f) => `<code>${esc(f)}</code>`).join(', ')}</p>`
      : '';
  return `<section><h3>Feature stability (PSI)</h3><p class="note">Bins from A (deciles, or the most frequent values); <span class="band band-stable">&lt; 0.1 stable</span> <span class="band band-moderate">0.1–0.25 moderate</span> <span class="band band-major">≥ 0.25 major</span></p>${table(['feature', 'type', 'PSI', 'mean A', 'mean B', 'mean change', 'keys changed'], rows, 2)}${more}${onlyB}</section>`;
}

function badRow(label: string, b: BadRate): string[] {
  return [
    td(esc(label)),
    td(fmtInt(b.rows), true),
    td(fmtInt(b.known), true),
    td(fmtInt(b.bad), true),
    td(fmtPct(b.bad_rate), true),
    td(esc(ci(b.ci)), true),
    td(fmtPct(b.coverage), true),
    td(b.rows > 0 ? esc(`${fmtPct(b.bad_rate_best)} – ${fmtPct(b.bad_rate_worst)}`) : '–', true),
  ];
}

function badSection(c: ComparisonFigures, outcome: string | null): string {
  const b = c.bad_rates;
  if (!b) return '';
  const rows = [
    badRow('approved by A', b.a_approved),
    badRow('approved by B', b.b_approved),
    badRow('swap-in (B only)', b.swap_in),
    badRow('swap-out (A only)', b.swap_out),
    badRow('approved by both', b.both_approve),
    badRow('approved by neither', b.both_reject),
    badRow('all compared keys', b.all),
  ];
  return `<section><h3>Bad rates (outcome <code>${esc(outcome ?? '')}</code>, 1 = bad)</h3><p class="note">Over keys whose outcome is known (0 or 1); 95% Wilson interval. Coverage: the share of the set's keys with a known outcome; the last column is the range the set's bad rate can take whatever the unknown outcomes are (all good to all bad).</p>${table(['set', 'keys', 'outcome known', 'bad', 'bad rate', '95% interval', 'coverage', 'if unknown all good – all bad'], rows)}${coverageWarning(b)}</section>`;
}

/** A side that mixes strategy versions, or sides decided by different ones: said before any figure. */
function versionNotes(c: ComparisonJson): string {
  return (c.versions?.notes ?? []).map((n) => `<div class="warn"><b>Strategy versions</b>: ${esc(n)}</div>`).join('');
}

function segmentsSection(c: ComparisonFigures, by: string | null, byVersion: boolean): string {
  const segs = c.segments;
  if (!segs) return '';
  const withBad = segs.some((s) => s.bad_rate_a_approved !== undefined);
  const head = [
    'segment',
    'keys',
    'approval A',
    'approval B',
    'B − A (95% interval)',
    'swap-in',
    'swap-out',
    ...(withBad ? ['bad rate, A approved', 'bad rate, B approved'] : []),
  ];
  const rows = segs.map((s) => [
    td(esc(s.segment)),
    td(fmtInt(s.approval.n), true),
    td(fmtPct(s.approval.a.rate), true),
    td(fmtPct(s.approval.b.rate), true),
    td(esc(`${fmtPp(s.approval.difference)} (${ci(s.approval.difference_ci, true).replace(' pp', '')})`), true),
    td(fmtInt(s.swap_in), true),
    td(fmtInt(s.swap_out), true),
    ...(withBad
      ? [
          td(fmtPct(s.bad_rate_a_approved?.bad_rate ?? null), true),
          td(fmtPct(s.bad_rate_b_approved?.bad_rate ?? null), true),
        ]
      : []),
  ]);
  const title = byVersion ? "strategy version (A's → B's)" : `<code>${esc(by ?? '')}</code>`;
  return `<section><h3>Segments by ${title}</h3>${table(head, rows)}</section>`;
}

function approvalTable(a: ApprovalFigures): string {
  return table(
    ['', 'approved', 'keys', 'rate', '95% interval'],
    [
      [
        td('A'),
        td(fmtInt(a.a.count), true),
        td(fmtInt(a.n), true),
        td(fmtPct(a.a.rate), true),
        td(esc(ci(a.a.ci)), true),
      ],
      [
        td('B'),
        td(fmtInt(a.b.count), true),
        td(fmtInt(a.n), true),
        td(fmtPct(a.b.rate), true),
        td(esc(ci(a.b.ci)), true),
      ],
      [
        td('B − A'),
        td(signed(a.b.count - a.a.count), true),
        td(''),
        td(esc(fmtPp(a.difference)), true),
        td(esc(ci(a.difference_ci, true)), true),
      ],
    ],
  );
}

function comparisonSection(c: ComparisonJson, j: CompareJson): string {
  const title = c.stage_a === c.stage_b ? `Stage ${c.stage_a}` : `Stage ${c.stage_a} (A) vs ${c.stage_b} (B)`;
  const head = `<h2>${esc(title)}</h2><p class="sub">${esc(fmtInt(c.n))} keys compared; the stage ran for ${esc(fmtInt(c.ran_a))} of them in A and ${esc(fmtInt(c.ran_b))} in B.</p>`;
  // On a sample, the population estimates come first and every figure counted over the sampled keys is marked.
  const sampled = (html: string): string =>
    j.sample && c.estimates ? estimatesSection(c, j) + markSampleOnly(html, j.sample) : html;
  if (!c.decisions) {
    return `${head}${versionNotes(c)}<p class="note">This stage carries no decision (features only).</p>${sampled(scoreSections(c, j.options.outcome) + featuresSection(c) + rulesSection(c))}`;
  }
  const kpi = j.sample ? '' : kpis(c);
  return `${head}${versionNotes(c)}${kpi}${sampled(
    `<section><h3>Approval rates</h3>${approvalTable(c.approval as ApprovalFigures)}</section>` +
      decisionsSection(c) +
      amountsSection(c) +
      offersSection(c) +
      badSection(c, j.options.outcome) +
      scoreSections(c, j.options.outcome) +
      periodsSection(c) +
      segmentsSection(c, j.options.by, j.options.by_version === true) +
      rulesSection(c) +
      featuresSection(c),
  )}`;
}

function keysSection(j: CompareJson): string {
  const jn = j.join;
  const list = (keys: readonly string[], total: number): string =>
    total === 0
      ? '<p class="note">none</p>'
      : `<p>${keys.map((k) => `<code>${esc(k)}</code>`).join(' ')}${total > keys.length ? ` <span class="note">… and ${esc(fmtInt(total - keys.length))} more (all are in compare.csv)</span>` : ''}</p>`;
  if (jn.only_a + jn.only_b + jn.duplicates.keys === 0) return '';
  return `<section><h2>Keys not compared</h2><h3>Only in A (${esc(fmtInt(jn.only_a))})</h3>${list(jn.only_a_keys, jn.only_a)}<h3>Only in B (${esc(fmtInt(jn.only_b))})</h3>${list(jn.only_b_keys, jn.only_b)}<h3>Duplicate keys (${esc(fmtInt(jn.duplicates.keys))})</h3>${list(jn.duplicates.sample, jn.duplicates.keys)}</section>`;
}

function methodsSection(j: CompareJson): string {
  return `<footer><h3>How the figures are computed</h3><ul>${Object.entries(j.methods)
    .map(([k, v]) => `<li><b>${esc(k.replace(/_/g, ' '))}</b>: ${esc(v)}</li>`)
    .join(
      '',
    )}</ul><p>Generated ${esc(j.generated_at)} by bre-batch compare. Every figure is also in compare.json; one line per key in compare.csv.</p></footer>`;
}

/**
 * On a sample, what the stability section counts: the input columns over every row of the input file (the
 * population itself, not an estimate), the result fields over the sampled keys only.
 */
function sampledStability(j: CompareJson, html: string): string {
  if (!j.sample || html === '') return html;
  const note = `<p class="note">${SAMPLE_ONLY_TAG}On this sample: the input columns (source <code>input</code>) are counted over every row of the input file, sampled or not: the population itself, not an estimate. The result fields (sources <code>a</code>, <code>b</code>) exist for the ${esc(fmtInt(j.sample.compared))} sampled keys only and are counted unweighted: sample only.</p>`;
  return html.replace('<h2>Stability over time</h2>', `<h2>Stability over time</h2>${note}`);
}

export function renderReport(j: CompareJson): string {
  const name = (r: RunSummary): string => r.pipeline ?? r.dir.split(/[\\/]/).pop() ?? r.dir;
  const title = `Back-test: ${name(j.a)} (A) vs ${name(j.b)} (B)`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>${esc(title)}</title>
<style>${CSS}</style>
</head>
<body>
<main>
<h1>${esc(title)}</h1>
${sampleNotice(j)}
<p class="sub">A = <code>${esc(j.a.dir)}</code> · B = <code>${esc(j.b.dir)}</code></p>
${summarySection(j)}
${j.comparisons.map((c) => comparisonSection(c, j)).join('\n')}
${sampledStability(j, stabilitySection(j.stability_top_movers, j.input_stability, j.options.period?.min_keys ?? null))}
${keysSection(j)}
${methodsSection(j)}
</main>
</body>
</html>
`;
}
