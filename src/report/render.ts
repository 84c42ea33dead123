/**
 * report.html of a run: one self-contained page (inline CSS and SVG, no script, no external resource,
 * printable), built from the folder's data alone (./data.ts). Every text from the run (error messages,
 * keys, decisions, stage names, paths) is escaped.
 */
import { cells, PRINT_CSS, table, td } from '@bre-batch/formats/page/html';
import { esc, fmtInt, fmtNum, fmtPct } from '@bre-batch/formats/page/svg';
import type { TimelineSample } from '../metrics/timeline-lines.js';
import {
  bucketsOf,
  coveredMs,
  fmtDuration,
  MIN_POINTS,
  shortRunSentence,
  spansOf,
  stackedBars,
  timeChart,
  type Bucket,
  type Line,
  type Span,
} from './charts.js';
import type { RunReportData } from './data.js';
import { versionMarks, versionsSection } from './versions.js';
import { money, spendChart, spendTable } from './spend.js';

const SERVICE_COLORS: Record<string, string> = { workflow: '#3b6ea8', bureau: '#e07b24', account: '#2f8a4c' };
const PALETTE = ['#3b6ea8', '#e07b24', '#2f8a4c', '#8e44ad', '#c0392b', '#16a085', '#7f8c8d', '#d4ac0d'];
const colorOf = (service: string, i: number) => SERVICE_COLORS[service] ?? PALETTE[i % PALETTE.length];

const CSS = `
:root{--ink:#1d2733;--mute:#5b6775;--line:#d9dee5;--bg:#f6f8fa}
*{box-sizing:border-box}
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;color:var(--ink);margin:0;background:#fff}
main{max-width:1040px;margin:0 auto;padding:24px 28px 48px}
h1{font-size:26px;margin:0 0 4px}
h2{font-size:20px;margin:34px 0 8px;padding-top:10px;border-top:3px solid var(--ink)}
p.sub,p.note{color:var(--mute);margin:4px 0 12px}
p.note{font-size:13px}
code{font:13px/1.4 ui-monospace,Menlo,Consolas,monospace;background:var(--bg);padding:1px 4px;border-radius:3px;word-break:break-all}
table{border-collapse:collapse;margin:8px 0 12px;font-size:14px;min-width:50%}
.tw{overflow-x:auto;max-width:100%}
th,td{border:1px solid var(--line);padding:5px 8px;text-align:left;vertical-align:top}
th{background:var(--bg);font-weight:600}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.kpis{display:flex;flex-wrap:wrap;gap:12px;margin:12px 0}
.kpi{border:1px solid var(--line);border-radius:6px;padding:10px 14px;min-width:150px}
.kpi b{display:block;font-size:22px}
.kpi span{color:var(--mute);font-size:13px}
.state{display:inline-block;font-weight:600;border-radius:4px;padding:2px 8px;font-size:14px}
.ok{background:#dff3e4;color:#1e6b34}.stop{background:#fbdcdc;color:#9b1c1c}.part{background:#fff1c7;color:#7a5a00}
.warn{background:#fff7e0;border-left:4px solid #e0a800;padding:8px 12px;margin:12px 0}
.sample{background:#eaf2fb;border-left:4px solid #3b6ea8;padding:8px 12px;margin:12px 0}
figure{margin:10px 0 16px}
figcaption{font-weight:600;margin-bottom:4px}
.chartbox{overflow-x:auto}
svg.chart{max-width:100%;height:auto;font-family:inherit}
svg .lg,svg .lb{font-size:12px;fill:var(--ink)}
svg .vl,svg .tk{font-size:11px;fill:var(--mute)}
svg .at{font-size:12px;fill:var(--mute);font-weight:600}
svg .gp{font-size:11px;fill:#7a5a00}
svg .ax{stroke:#8895a4;stroke-width:1}
svg .dt{font-weight:600;fill:var(--ink)}
svg .gr{stroke:#eef1f4;stroke-width:1}
ul.ex{margin:0;padding-left:18px;font-size:13px}
footer{margin-top:40px;color:var(--mute);font-size:13px}
${PRINT_CSS}`;

const kpi = (value: string, label: string) => `<div class="kpi"><b>${value}</b><span>${esc(label)}</span></div>`;

/** Per bucket, per label set of the series: the samples' figures added up. */
function serviceNames(samples: readonly TimelineSample[]): string[] {
  return [...new Set(samples.flatMap((s) => s.series.map((x) => x.labels.service)))];
}

function perService(b: Bucket, service: string) {
  let calls = 0;
  let retries = 0;
  let throttled = 0;
  const weighted = { p50: 0, p95: 0, p99: 0, n: 0 };
  // A limit per shard (each has its own address and limit when merged); adaptive limits move: the highest.
  const limits = new Map<string, number>();
  for (const s of b.samples) {
    for (const x of s.series) {
      if (x.labels.service !== service) continue;
      calls += x.calls;
      retries += x.retries;
      throttled += x.throttled;
      if (x.p50 !== null && x.calls > 0) {
        weighted.p50 += x.p50 * x.calls;
        weighted.p95 += (x.p95 ?? x.p50) * x.calls;
        weighted.p99 += (x.p99 ?? x.p50) * x.calls;
        weighted.n += x.calls;
      }
      if (x.limit_per_min !== null) {
        const k = `${s.shard ?? ''}|${Object.entries(x.labels)
          .filter(([l]) => l !== 'service')
          .map(([l, v]) => `${l}=${v}`)
          .join(',')}`;
        limits.set(k, Math.max(limits.get(k) ?? 0, x.limit_per_min));
      }
    }
  }
  const minutes = Math.max(1, coveredMs(b)) / 60_000;
  const limit = limits.size > 0 ? [...limits.values()].reduce((a, c) => a + c, 0) : null;
  const w = weighted.n;
  return {
    callsPerMin: calls / minutes,
    retriesPerMin: retries / minutes,
    throttledPerMin: throttled / minutes,
    limit,
    p50: w ? weighted.p50 / w : null,
    p95: w ? weighted.p95 / w : null,
    p99: w ? weighted.p99 / w : null,
  };
}

function timeSections(d: RunReportData): string {
  const tl = d.timeline;
  if (!tl) return '';
  const spans: Span[] = spansOf(tl);
  const buckets = bucketsOf(tl, spans);
  const mid = (b: Bucket) => (b.start + b.end) / 2;
  const services = serviceNames(tl.samples);
  const out: string[] = [];
  const gaps = spans.length - 1;
  const sessions = new Set(tl.sessions.map((s) => `${s.shard ?? ''}#${s.session}`)).size;
  const sessionsText = `${fmtInt(sessions)} session${sessions === 1 ? '' : 's'}${d.merged ? ' over all shards' : ''}`;
  if (buckets.filter((b) => b.samples.length > 0).length < MIN_POINTS) {
    out.push('<h2>Over time</h2>');
    out.push(
      `<p class="short">${esc(
        shortRunSentence(
          spans.reduce((n, s) => n + (s.end - s.start), 0),
          tl.samples.length,
        ),
      )}</p>`,
    );
    if (sessions > 1) out.push(`<p class="note">${sessionsText}.</p>`);
    return out.join('');
  }
  out.push(
    `<p class="note">${sessionsText}${gaps > 0 ? `; ${gaps} pause${gaps === 1 ? '' : 's'} between them, drawn as hatched bands (not to scale)` : ''}. Times are UTC.</p>`,
  );

  const rowsLine: Line = {
    name: 'rows a second',
    color: '#3b6ea8',
    points: buckets.map(
      (b) =>
        [
          mid(b),
          b.samples.length
            ? b.samples.reduce((n, s) => n + s.rows.succeeded + s.rows.failed, 0) / (Math.max(1, coveredMs(b)) / 1000)
            : null,
        ] as const,
    ),
  };
  out.push(`<h2>Throughput</h2>`);
  out.push(timeChart('Rows done a second', 'rows/s', spans, [rowsLine], versionMarks(d.versions)));
  out.push(spendChart(spans, buckets));
  const etaPoints = buckets.map((b) => {
    const last = new Map<string, number | null>();
    for (const s of b.samples) last.set(s.shard ?? '', s.eta_s);
    const v = [...last.values()].filter((x): x is number => x !== null);
    return [mid(b), v.length ? Math.max(...v) / 60 : null] as const;
  });
  if (etaPoints.some((p) => p[1] !== null))
    out.push(
      timeChart('ETA shown during the run (time left at the rate of the last minute)', 'minutes', spans, [
        { name: 'ETA', color: '#8e44ad', points: etaPoints },
      ]),
    );

  out.push(`<h2>Calls per minute against the limit</h2>`);
  services.forEach((svc, i) => {
    const f = buckets.map((b) => [mid(b), b.samples.length ? perService(b, svc) : null] as const);
    const lines: Line[] = [
      {
        name: `${svc} calls/min`,
        color: colorOf(svc, i),
        points: f.map(([t, x]) => [t, x ? x.callsPerMin : null] as const),
      },
    ];
    if (f.some(([, x]) => x?.limit !== null && x?.limit !== undefined))
      lines.push({
        name: 'limit',
        color: '#c0392b',
        dashed: true,
        points: f.map(([t, x]) => [t, x?.limit ?? null] as const),
      });
    out.push(timeChart(`${svc}: attempts a minute (retries included)`, 'per minute', spans, lines));
  });

  out.push(`<h2>Latency over the run</h2>`);
  services.forEach((svc) => {
    const f = buckets.map((b) => [mid(b), b.samples.length ? perService(b, svc) : null] as const);
    out.push(
      timeChart(`${svc}: latency percentiles of each interval`, 'ms', spans, [
        { name: 'p50', color: '#2f8a4c', points: f.map(([t, x]) => [t, x?.p50 ?? null] as const) },
        { name: 'p95', color: '#e07b24', points: f.map(([t, x]) => [t, x?.p95 ?? null] as const) },
        { name: 'p99', color: '#c0392b', points: f.map(([t, x]) => [t, x?.p99 ?? null] as const) },
      ]),
    );
  });

  out.push(`<h2>Retries and 429s over time</h2>`);
  const lines: Line[] = [];
  services.forEach((svc, i) => {
    const f = buckets.map((b) => [mid(b), b.samples.length ? perService(b, svc) : null] as const);
    lines.push({
      name: `${svc} retries`,
      color: colorOf(svc, i),
      points: f.map(([t, x]) => [t, x ? x.retriesPerMin : null] as const),
    });
    lines.push({
      name: `${svc} 429s`,
      color: colorOf(svc, i),
      dashed: true,
      points: f.map(([t, x]) => [t, x ? x.throttledPerMin : null] as const),
    });
  });
  out.push(timeChart('Retries (solid) and 429 answers (dashed) a minute', 'per minute', spans, lines));
  return out.join('');
}

function stateBadge(d: RunReportData): string {
  if (d.finished) return '<span class="state ok">finished</span>';
  if (d.stopped) return '<span class="state stop">stopped</span>';
  return '<span class="state part">not finished</span>';
}

/** The notice at the top of a sampled run's report: what it is a sample of, and what its counts mean. */
function sampleNotice(x: NonNullable<RunReportData['sample']>): string {
  const by = x.columns.length > 0 ? `stratified by ${esc(x.columns.join(' and '))}` : 'one stratum (no --stratify-by)';
  return (
    `<div class="sample" id="sample-notice"><b>A sample of ${fmtInt(x.sampled)} of ${fmtInt(x.population)} rows</b>, ${by}, ${fmtInt(x.strata.length)} strat${x.strata.length === 1 ? 'um' : 'a'} (<code>${esc(x.options)}</code>). ` +
    "The counts on this page are the sampled rows' own, not the population's: each row carries its stratum and design weight N<sub>h</sub>/n<sub>h</sub> in results and errors, and <code>bre-batch compare</code> estimates the population from them, with intervals.</div>"
  );
}

/** The strata of a sampled run: N_h, n_h and the weight; a stratum with a missing value is named so. */
function sampleSection(x: NonNullable<RunReportData['sample']>): string {
  const out = ['<h2>Sample design</h2>'];
  out.push(
    table(
      ['stratum', 'rows in the input (N_h)', 'sampled (n_h)', 'weight N_h / n_h'],
      x.strata.map((st) =>
        cells([
          `${esc(st.name)}${st.missing ? ' <span class="note">— no readable value: a stratum of its own</span>' : ''}`,
          fmtInt(st.population),
          fmtInt(st.sample),
          fmtNum(st.weight, 3),
        ]),
      ),
    ),
  );
  const outside = (x.withoutKey ?? 0) + (x.unreadable ?? 0);
  out.push(
    `<p class="note">Every stratum gives at least 2 rows where it has 2, so that each has a variance. ${outside > 0 ? `${fmtInt(outside)} row${outside === 1 ? '' : 's'} of the input ${outside === 1 ? 'is' : 'are'} in no stratum (no key, or unreadable): ${outside === 1 ? 'it is an error' : 'they are errors'} of the run.` : 'Every row of the input with a key is in a stratum.'}</p>`,
  );
  return out.join('');
}

export function renderRunReport(d: RunReportData): string {
  const parts: string[] = [];
  parts.push(`<h1>${esc(d.title)}</h1>`);
  parts.push(
    `<p class="sub">${stateBadge(d)} folder <code>${esc(d.dir)}</code>${d.input ? ` · input <code>${esc(d.input)}</code>` : ''}${d.shard ? ` · shard ${esc(d.shard)}` : ''}</p>`,
  );
  if (d.sample) parts.push(sampleNotice(d.sample));
  for (const m of d.missing) parts.push(`<div class="warn">${esc(m)}</div>`);

  const total = d.rows.total;
  const kpis = [
    kpi(fmtInt(d.rows.succeeded), 'rows succeeded'),
    kpi(fmtInt(d.rows.failed), 'rows in errors'),
    total !== null ? kpi(fmtInt(total), d.sample ? 'rows the sample sends' : 'data rows in the input') : '',
    d.seconds !== null ? kpi(esc(fmtDuration(d.seconds * 1000)), d.merged ? 'slowest shard' : 'last session') : '',
    d.rowsPerSecond !== null ? kpi(fmtNum(d.rowsPerSecond, 1), 'rows a second (last session)') : '',
    d.spend
      ? kpi(esc(money(d.spend.total, d.spend.currency)), d.merged ? 'spent (every shard)' : 'spent (every session)')
      : '',
  ];
  parts.push(`<h2 class="first">Summary</h2><div class="kpis">${kpis.join('')}</div>`);
  if (d.stopped)
    parts.push(`<div class="warn"><b>Stopped</b> (${esc(d.stopped.code)}): ${esc(d.stopped.message)}</div>`);
  if (d.remaining)
    parts.push(
      `<p>What is left: about <b>${fmtInt(d.remaining.rows)}</b> rows, <b>${esc(d.remaining.time)}</b> at the configured limits. Re-run the same command to resume.</p>`,
    );
  else if (!d.finished && total !== null)
    parts.push(
      `<p>What is left: about <b>${fmtInt(Math.max(0, total - d.rows.succeeded - d.rows.failed))}</b> rows. Re-run the same command to resume.</p>`,
    );

  if (d.services.length > 0) {
    parts.push(
      table(
        ['service', 'calls', 'retries', '429s', 'p50 ms', 'p95 ms', 'p99 ms', 'achieved /min', 'limit'],
        d.services.map((s) =>
          cells([
            esc(s.service),
            fmtInt(s.calls),
            fmtInt(s.retries),
            fmtInt(s.throttled),
            fmtNum(s.p50, 1),
            fmtNum(s.p95, 1),
            fmtNum(s.p99, 1),
            fmtNum(s.achievedPerMinute, 1),
            esc(s.limit ?? '–'),
          ]),
        ),
      ),
    );
    if (d.merged) parts.push('<p class="note">Calls, retries and 429s are summed over the shards.</p>');
    if (d.spend) parts.push(spendTable(d.spend, d.merged));
    for (const svc of d.services)
      if (svc.concurrencyNote)
        parts.push(`<div class="warn"><b>Held by --concurrency</b>: ${esc(svc.concurrencyNote)}</div>`);
  }
  if (d.addresses.length > 0) {
    parts.push(
      table(
        ['source address', 'rows', 'calls', '429s', 'achieved', 'failures', 'rows moved away', 'circuit'],
        d.addresses.map((a) =>
          cells([
            esc(a.address),
            fmtInt(a.rows),
            fmtInt(a.calls),
            fmtInt(a.throttled),
            esc(a.achieved || '–'),
            fmtInt(a.failures),
            fmtInt(a.movedAway),
            esc(a.circuitOpen ? `open: ${a.circuitOpen}` : 'closed'),
          ]),
        ),
      ),
    );
    parts.push(
      '<p class="note">Each address has its own limits (last session). A row whose address failed at the network ran again, whole, from another.</p>',
    );
  }

  if (d.sample) parts.push(sampleSection(d.sample));
  parts.push(timeSections(d));

  parts.push('<h2>Stages</h2>');
  if (d.funnel.length > 0) {
    parts.push(
      stackedBars(
        'Rows per stage: ran, skipped (condition not met), failed',
        d.funnel.map((f) => ({
          label: `${f.stage}${f.kind ? ` (${f.kind})` : ''}`,
          parts: [
            { name: 'ran', value: f.ran, color: '#2f8a4c' },
            { name: 'skipped', value: f.skipped, color: '#9aa5b1' },
            { name: 'failed', value: f.failed, color: '#c0392b' },
          ],
        })),
      ),
    );
    parts.push(
      table(
        ['stage', 'ran', 'skipped', 'failed'],
        d.funnel.map((f) =>
          cells([
            `${esc(f.stage)}${f.kind ? ` <span class="note">${esc(f.kind)}</span>` : ''}`,
            fmtInt(f.ran),
            fmtInt(f.skipped),
            fmtInt(f.failed),
          ]),
        ),
      ),
    );
    parts.push(`<p class="note">Counted over ${esc(d.funnelSource)}.</p>`);
  } else parts.push('<p class="note">No stage counts in this folder.</p>');

  const decisionStages = Object.entries(d.decisions).filter(([, c]) => Object.keys(c).length > 0);
  parts.push('<h2>Decisions per workflow stage</h2>');
  if (decisionStages.length === 0)
    parts.push('<p class="note">No workflow decisions (no workflow stage, or no row succeeded).</p>');
  for (const [stage, counts] of decisionStages) {
    const sorted = Object.entries(counts).sort((a, b) => b[1] - a[1]);
    const n = sorted.reduce((s, [, c]) => s + c, 0);
    parts.push(
      stackedBars(
        `Stage ${stage}`,
        sorted.map(([dec, c], i) => ({
          label: dec,
          parts: [{ name: 'rows', value: c, color: PALETTE[i % PALETTE.length] }],
        })),
      ),
    );
    parts.push(
      table(
        ['decision', 'rows', 'share'],
        sorted.map(([dec, c]) => cells([esc(dec), fmtInt(c), fmtPct(c / n)])),
      ),
    );
  }

  parts.push(versionsSection(d.versions));

  parts.push('<h2>Errors by code</h2>');
  if (d.errors.length === 0) parts.push('<p>No row is in the errors file.</p>');
  else {
    const n = d.errors.reduce((s, e) => s + e.count, 0);
    parts.push(
      table(
        ['code', 'rows', 'share', 'examples (masked as in errors.ndjson)'],
        d.errors.map((e) => [
          td(`<code>${esc(e.code)}</code>`),
          td(fmtInt(e.count), true),
          td(fmtPct(e.count / n), true),
          td(
            `<ul class="ex">${e.examples.map((x) => `<li>row ${esc(x.row ?? '–')}${x.stage ? `, stage ${esc(x.stage)}` : ''}${x.field ? `, field <code>${esc(x.field)}</code>` : ''}: ${esc(x.message)}</li>`).join('')}</ul>`,
          ),
        ]),
        1,
      ),
    );
  }

  parts.push(
    `<footer>Generated ${esc(d.generatedAt)} from the output folder by bre-batch; rebuild it with <code>bre-batch report ${esc(d.dir)}</code>. Files: ${d.files.map((f) => `<code>${esc(f)}</code>`).join(' ')}</footer>`,
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(d.title)}</title><style>${CSS}</style></head>
<body><main>${parts.join('\n')}</main></body></html>
`;
}
