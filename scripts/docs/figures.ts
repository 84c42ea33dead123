/**
 * The back-testing page's figures (docs/backtesting.md), written from what `compare` gives for the shipped
 * champion_challenger sample, whole and as a 20% sample by application month: each figure block of the page
 * sits between `<!-- figures:NAME -->` and `<!-- /figures -->` and is rewritten by `npm run docs:pictures`;
 * test/docs/figures.test.ts runs the same commands and fails when a block differs from what they give.
 */

/** The commands the blocks are written from, run in a folder holding samples/champion_challenger.csv. */
export const FIGURE_COMMANDS = {
  full: [
    'run',
    'champion_challenger',
    '--input',
    'samples/champion_challenger.csv',
    '--out',
    'output/bt',
    '--rate',
    'off',
  ],
  fullCompare: [
    'compare',
    'output/bt',
    'output/bt',
    '--outcome',
    'defaulted',
    '--by',
    'state',
    '--score',
    'bureau_intel.bureau_score',
    '--score',
    'mobile_intel.vendor_payday_score',
    '--period',
    'application_date',
    '--out',
    'output/bt-compare',
  ],
  sample: [
    'run',
    'champion_challenger',
    '--input',
    'samples/champion_challenger.csv',
    '--out',
    'output/cc-20',
    '--rate',
    'off',
    '--sample-share',
    '0.2',
    '--stratify-by',
    'application_date:month',
  ],
  sampleCompare: [
    'compare',
    'output/cc-20',
    'output/cc-20',
    '--outcome',
    'defaulted',
    '--score',
    'bureau_intel.bureau_score',
    '--out',
    'output/cc-20-compare',
  ],
} as const;

/* The parts of compare.json the blocks read. */
interface Interval {
  readonly lower: number;
  readonly upper: number;
}
interface Estimate {
  readonly estimate: number;
  readonly ci: Interval | null;
}
interface BadRate {
  readonly rows: number;
  readonly known: number;
  readonly bad_rate: number | null;
  readonly coverage: number | null;
}
interface ScoreSide {
  readonly scored: { readonly keys: number };
  readonly no_score: { readonly keys: number };
  readonly power: { readonly auc: number; readonly gini: number } | null;
  readonly ks: { readonly ks: number; readonly at_score: number } | null;
  readonly iv: number | null;
}
interface Comparison {
  readonly n: number;
  readonly approval: {
    readonly a: { readonly rate: number };
    readonly b: { readonly rate: number };
    readonly difference: number;
  };
  readonly swaps: { readonly swap_in: number; readonly swap_out: number };
  readonly amounts: { readonly a_total: number; readonly b_total: number };
  readonly bad_rates: Readonly<Record<'a_approved' | 'b_approved' | 'swap_out' | 'both_approve', BadRate>>;
  readonly scores?: readonly { readonly label: string; readonly a: ScoreSide }[];
  readonly periods?: {
    readonly periods: readonly {
      readonly period: string;
      readonly bad_rate_a_approved: BadRate;
      readonly bad_rate_b_approved: BadRate;
    }[];
  };
  readonly estimates?: {
    readonly population: number;
    readonly compared: number;
    readonly approval: { readonly a: Estimate; readonly b: Estimate; readonly difference: Estimate };
    readonly swaps: Readonly<Record<'swap_in' | 'swap_out', { readonly count: Estimate; readonly share: Estimate }>>;
    readonly bad_rates: Readonly<
      Record<'a_approved' | 'b_approved' | 'swap_out', { readonly bad_rate: Estimate | null }>
    >;
    readonly amounts: Readonly<Record<'a_total' | 'b_total', Estimate>>;
    readonly scores: readonly {
      readonly label: string;
      readonly a: Readonly<Record<'auc' | 'gini' | 'ks', Estimate>>;
    }[];
  } | null;
}
export interface CompareJson {
  readonly comparisons: readonly Comparison[];
  readonly stability_top_movers?: readonly { readonly name: string; readonly max?: { readonly period: string } }[];
  readonly input_stability?: {
    readonly columns: readonly { readonly name: string; readonly max: { readonly period: string } }[];
  };
}

const pct = (x: number, digits = 1): string => `${(x * 100).toFixed(digits)}%`;
const pp = (x: number): string => `${x < 0 ? '−' : ''}${Math.abs(x * 100).toFixed(1)} pp`;
const whole = (x: number): string => Math.round(x).toLocaleString('en-US');
const three = (x: number): string => x.toFixed(3);
const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const monthName = (period: string): string => {
  const [y, m] = period.split('-').map(Number);
  return `${MONTHS[m - 1]} ${y}`;
};

function between(e: Estimate | null | undefined, show: (x: number) => string, noInterval: string): string {
  if (!e) return 'none';
  return e.ci
    ? `${show(e.estimate)} (${show(e.ci.lower)} to ${show(e.ci.upper)})`
    : `${show(e.estimate)} (${noInterval})`;
}

const within = (e: Estimate | null | undefined, x: number | null): boolean =>
  !e?.ci || x === null || (x >= e.ci.lower && x <= e.ci.upper);

/** The paragraph on what the whole sample's report shows. */
function story(full: Comparison, top: CompareJson): string {
  const bureau = full.scores?.find((s) => s.label === 'bureau_intel.bureau_score');
  const months = (full.periods?.periods ?? []).filter((p) => p.period !== '(missing)');
  let unknownTail = 0;
  for (const p of [...months].reverse()) {
    if (p.bad_rate_a_approved.known + p.bad_rate_b_approved.known > 0) break;
    unknownTail += 1;
  }
  const mover = top.input_stability?.columns.find((c) => c.name === top.stability_top_movers?.[0]?.name);
  const so = full.bad_rates.swap_out;
  const both = full.bad_rates.both_approve;
  return [
    `On the shipped sample (${whole(full.n)} applicants over ${months.length} months whose outcomes follow the`,
    "sandbox's own features; written by `scripts/champion-challenger-sample.ts`) the report shows that the bureau",
    `score separates goods from bads (Gini ${three(bureau?.a.power?.gini ?? Number.NaN)} over the`,
    `${whole(bureau?.a.scored.keys ?? 0)} applicants with a score; ${whole(bureau?.a.no_score.keys ?? 0)} carry the bureaus' no-history marker and`,
    'are counted apart), that the champion approves worse applicants than a plain cut-off on that score would at its',
    `approval rate, that the challenger's swap-outs went bad more often (${pct(so.bad_rate ?? Number.NaN)} against`,
    `${pct(both.bad_rate ?? Number.NaN)} for what both approve, over the ${pct(so.coverage ?? Number.NaN, 0)} of them whose outcome is known),`,
    `that the last ${unknownTail === 1 ? 'month has' : `${unknownTail} months have`} no outcome yet, and that a new sales ${mover?.name ?? 'channel'}`,
    `from ${mover ? monthName(mover.max.period) : '?'} moved the applicant population:`,
  ].join('\n');
}

/** The table of the whole run beside the 20% sample's estimates, and what to read in it. */
function sideBySide(full: Comparison, sample: Comparison): string {
  const e = sample.estimates!;
  const fb = full.scores?.find((s) => s.label === 'bureau_intel.bureau_score')?.a;
  const sb = e.scores.find((s) => s.label === 'bureau_intel.bureau_score')?.a;
  const rows: [string, string, Estimate | null | undefined, number | null, (x: number) => string][] = [
    ['approval rate A (champion)', pct(full.approval.a.rate), e.approval.a, full.approval.a.rate, pct],
    ['approval rate B (challenger)', pct(full.approval.b.rate), e.approval.b, full.approval.b.rate, pct],
    ['difference B − A', pp(full.approval.difference), e.approval.difference, full.approval.difference, pp],
    ['swap-in keys', whole(full.swaps.swap_in), e.swaps.swap_in.count, full.swaps.swap_in, whole],
    ['swap-out keys', whole(full.swaps.swap_out), e.swaps.swap_out.count, full.swaps.swap_out, whole],
    ['swap-out share', pct(full.swaps.swap_out / full.n), e.swaps.swap_out.share, full.swaps.swap_out / full.n, pct],
    [
      "bad rate of A's approved",
      pct(full.bad_rates.a_approved.bad_rate!),
      e.bad_rates.a_approved.bad_rate,
      full.bad_rates.a_approved.bad_rate,
      pct,
    ],
    [
      "bad rate of B's approved",
      pct(full.bad_rates.b_approved.bad_rate!),
      e.bad_rates.b_approved.bad_rate,
      full.bad_rates.b_approved.bad_rate,
      pct,
    ],
    [
      'bad rate of swap-outs',
      pct(full.bad_rates.swap_out.bad_rate!),
      e.bad_rates.swap_out.bad_rate,
      full.bad_rates.swap_out.bad_rate,
      pct,
    ],
    ['loan amount approved by A', whole(full.amounts.a_total), e.amounts.a_total, full.amounts.a_total, whole],
    ['loan amount approved by B', whole(full.amounts.b_total), e.amounts.b_total, full.amounts.b_total, whole],
    ['AUC of the bureau score (A)', three(fb?.power?.auc ?? Number.NaN), sb?.auc, fb?.power?.auc ?? null, three],
    ['Gini (A)', three(fb?.power?.gini ?? Number.NaN), sb?.gini, fb?.power?.gini ?? null, three],
    ['KS (A)', three(fb?.ks?.ks ?? Number.NaN), sb?.ks, fb?.ks?.ks ?? null, three],
  ];
  const missed = rows.filter(([, , est, truth]) => !within(est, truth)).map(([name]) => name);
  const callsFull = full.n * 2;
  const callsSample = e.compared * 2;
  const time = (calls: number): string => {
    const s = Math.round((calls / 500) * 60);
    return s % 60 === 0 ? `${s / 60} min` : `${Math.floor(s / 60)} min ${s % 60} s`;
  };
  return [
    `| figure | whole run (${whole(full.n)} rows) | ${pct(e.compared / e.population, 0)} sample: estimate (95% interval) |`,
    '|---|---|---|',
    ...rows.map(
      ([name, w, est, , show]) => `| ${name} | ${w} | ${between(est, show, 'no interval: none in the sample')} |`,
    ),
    '',
    missed.length === 0
      ? "Read it as a risk team would: this sample's intervals hold every figure of the whole run."
      : `Read it as a risk team would: this sample's intervals hold the whole run's figures but for ${missed.join(', ')}. A 95% interval misses about one sample in twenty, and this seed's sample is one of those for ${missed.length === 1 ? 'that figure' : 'those figures'}; the coverage table below shows how often over 200 samples.`,
    `Time at the documented limits (500 workflow calls a minute, two calls a row): the whole input **${time(callsFull)}**,`,
    `the sample **${time(callsSample)}** (${whole(callsSample)} calls).`,
  ].join('\n');
}

/** Every figure block of docs/backtesting.md, by name, from the two compare.json files. */
export function figureBlocks(full: CompareJson, sample: CompareJson): Record<string, string> {
  return {
    'backtest-story': story(full.comparisons[0], full),
    'backtest-side-by-side': sideBySide(full.comparisons[0], sample.comparisons[0]),
  };
}

const BLOCK = /<!-- figures:([a-z-]+) -->\n([\s\S]*?)\n<!-- \/figures -->/g;

/** The figure blocks a page holds, by name. */
export function blocksOf(page: string): Record<string, string> {
  return Object.fromEntries([...page.matchAll(BLOCK)].map((m) => [m[1], m[2]]));
}

/** The page with each of its figure blocks replaced by the one given under its name. */
export function withBlocks(page: string, blocks: Readonly<Record<string, string>>): string {
  return page.replace(BLOCK, (all, name: string) =>
    blocks[name] === undefined ? all : `<!-- figures:${name} -->\n${blocks[name]}\n<!-- /figures -->`,
  );
}
