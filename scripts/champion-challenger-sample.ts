#!/usr/bin/env node
/**
 * Writes samples/champion_challenger.csv: 1,500 synthetic applicants over 15 months (July 2024 to September
 * 2025), with an application date and an observed outcome (`defaulted`) that follows the risk the sandbox's own
 * features describe, so a back-test of the sample teaches something:
 *
 *   - Each row's features are the sandbox's (the same functions it answers with): the bureau profile the
 *     workflow "fetches" from the PAN, the mobile features from app_user_id and the declared income.
 *   - The chance of default is logistic in those features: a lower bureau score, a lower vendor payday score,
 *     overdue accounts, a risky-customer flag, many recent enquiries and a lower income all raise it; no bureau
 *     hit (new to credit) raises it a little. Applications from January to May 2025 carry an extra risk (a
 *     loosened market), which the vintage table shows.
 *   - What is observed is what a lender would observe: applicants the champion (bureau_mobile_bre) approved
 *     have an outcome unless they applied in the last two months (not yet matured: empty); of those it
 *     rejected, only about a third have one (seen later in the bureau on another lender's loan). The rest is
 *     empty: unknown, which the back-test counts and reports (outcome coverage).
 *   - From March 2025 a partner channel brings about 40% of the applications, with lower incomes: the input
 *     column `channel` and the income-driven features move (the report's stability over time shows them).
 *   - Three rows have no application date (counted under "(missing)"); July 2024 starts on the 22nd (a small
 *     period, marked in the report).
 *
 * Deterministic (seeded):
 *
 *     npx tsx scripts/champion-challenger-sample.ts [out.csv] [--rows N]
 *
 * (`--rows` writes an input of another size of the same make, e.g. the 20,000 rows of the bench's coverage
 * simulation; the committed sample is the default 1,500.)
 *
 * packages/backtest/test/sample.test.ts checks that the committed sample is what this script writes.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { syntheticProfile } from '@bre-batch/sandbox/logic/bureau';
import { mulberry32 } from '@bre-batch/sandbox/logic/hash';
import { mobileFeatures } from '@bre-batch/sandbox/logic/mobile';
import { runChain } from '@bre-batch/sandbox/logic/workflows/common';
import { CUTOFFS, basicStage, bureauIntel, bureauStage, mobileStage } from '@bre-batch/sandbox/logic/workflows/rules';

export const ROWS = 1500;
const SEED = 20250930;
const STATES = [
  'Maharashtra',
  'West Bengal',
  'Tamil Nadu',
  'Karnataka',
  'Telangana',
  'Delhi',
  'Gujarat',
  'Uttar Pradesh',
];
const HEADER = [
  'reference_id',
  'user_id',
  'lead_id',
  'app_user_id',
  'declared_income',
  'pan_number',
  'name_aadhar',
  'address_aadhar',
  'state_aadhar',
  'city_aadhar',
  'pincode_aadhar',
  'phone',
  'pan_name',
  'dob',
  'profession',
  'salary_source',
  'loan_purpose',
  'income_type',
  'gender',
  'state',
  'channel',
  'application_date',
  'defaulted',
];

/** Months of the sample: [year, month, first day, relative volume]; volume grows as the product ramps up. */
const MONTHS: readonly (readonly [number, number, number, number])[] = [
  [2024, 7, 22, 0.25],
  [2024, 8, 1, 0.7],
  [2024, 9, 1, 0.8],
  [2024, 10, 1, 0.9],
  [2024, 11, 1, 1],
  [2024, 12, 1, 1],
  [2025, 1, 1, 1.05],
  [2025, 2, 1, 1.05],
  [2025, 3, 1, 1.1],
  [2025, 4, 1, 1.1],
  [2025, 5, 1, 1.15],
  [2025, 6, 1, 1.15],
  [2025, 7, 1, 1.2],
  [2025, 8, 1, 1.2],
  [2025, 9, 1, 1.25],
];
/** Outcomes are observed up to this month (applications after it have not had time to go bad). */
const MATURED_UNTIL = '2025-07';
/** Vintages with the extra risk. */
const LOOSE = new Set(['2025-01', '2025-02', '2025-03', '2025-04', '2025-05']);
/** Share of the champion's rejects whose outcome is seen anyway (a loan elsewhere, in the bureau). */
const REJECT_OBSERVED = 0.35;

const pad = (n: number, w: number): string => String(n).padStart(w, '0');
const letters = (i: number): string =>
  String.fromCharCode(65 + (Math.floor(i / 26) % 26)) + String.fromCharCode(65 + (i % 26));

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** One application date per row, in order, spread over the months by their volume. */
function dates(rng: () => number, rows: number): string[] {
  const total = MONTHS.reduce((s, m) => s + m[3], 0);
  const out: string[] = [];
  MONTHS.forEach(([y, m, first, vol], i) => {
    const n = i === MONTHS.length - 1 ? rows - out.length : Math.round((rows * vol) / total);
    const days = daysIn(y, m) - first + 1;
    const list = Array.from({ length: n }, () => first + Math.floor(rng() * days)).sort((a, b) => a - b);
    for (const d of list) out.push(`${y}-${pad(m, 2)}-${pad(d, 2)}`);
  });
  return out.slice(0, rows);
}

/** Monthly income: log-normal around `median`, rounded to 1,000, between 8,000 and 200,000. */
function income(rng: () => number, median: number): number {
  const z = Math.sqrt(-2 * Math.log(1 - rng())) * Math.cos(2 * Math.PI * rng());
  return Math.min(200_000, Math.max(8_000, Math.round(Math.exp(Math.log(median) + 0.6 * z) / 1000) * 1000));
}

/** The partner channel opens in March 2025. */
const PARTNER_FROM = '2025-03';
const PARTNER_SHARE = 0.4;

/** The rows of the sample; `rows` other than ROWS gives a larger (or smaller) input of the same make (the bench's). */
export function sampleRows(rows = ROWS): (string | number)[][] {
  const rng = mulberry32(SEED);
  const when = dates(rng, rows);
  const out: (string | number)[][] = [];
  for (let i = 1; i <= rows; i += 1) {
    const id = pad(i, 5);
    const pan = `FAK${letters(i)}${pad(i % 10_000, 4)}Z`;
    const appUser = `app${id}`;
    const date = [17, 611, 1203].includes(i) ? '' : when[i - 1];
    const month = date.slice(0, 7);
    const channel = month >= PARTNER_FROM && rng() < PARTNER_SHARE ? 'partner' : 'direct';
    const declared = income(rng, channel === 'partner' ? 19_000 : 30_000);
    const b = bureauIntel(syntheticProfile(pan), declared);
    const m = mobileFeatures(appUser, declared);
    const champion = runChain([
      basicStage(CUTOFFS.v1, declared),
      bureauStage(CUTOFFS.v1, b),
      mobileStage(CUTOFFS.v1, m),
    ]).approved;
    const logit =
      -2.3 +
      (b.bureau_hit ? (650 - b.bureau_score) / 75 : 0.6) +
      (600 - m.vendor_payday_score) / 100 +
      0.45 * b.overdue_accounts +
      (b.is_risky_customer ? 0.9 : 0) +
      (b.recent_enquiries > 4 ? 0.4 : 0) -
      0.45 * Math.log(declared / 30_000) +
      (m.fraud_flag ? 1.2 : 0) +
      (LOOSE.has(month) ? 0.5 : 0);
    const bad = rng() < 1 / (1 + Math.exp(-logit)) ? 1 : 0;
    const matured = month !== '' && month <= MATURED_UNTIL;
    const seen = champion ? matured : matured && rng() < REJECT_OBSERVED;
    const state = STATES[Math.floor(rng() * STATES.length)];
    const dobYear = 1960 + Math.floor(rng() * 42);
    out.push([
      `CC-${id}`,
      `user${id}`,
      `lead${id}`,
      appUser,
      declared,
      pan,
      'FAKE TESTPERSON',
      `${i} FAKE LANE`,
      'Maharashtra',
      'Mumbai',
      '400001',
      `9${pad(i, 9)}`,
      'FAKE TESTPERSON',
      `${dobYear}-${pad(1 + (i % 12), 2)}-${pad(1 + (i % 28), 2)}`,
      'salaried',
      'bank_transfer',
      'personal',
      'salaried',
      rng() < 0.5 ? 'F' : 'M',
      state,
      channel,
      date,
      seen ? bad : '',
    ]);
  }
  return out;
}

export function sampleCsv(rows = ROWS): string {
  return [HEADER, ...sampleRows(rows)].map((r) => r.join(',')).join('\n') + '\n';
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--rows');
  const given = at === -1 ? undefined : args.splice(at, 2)[1];
  const rows = given === undefined ? ROWS : Number(given);
  if (!Number.isSafeInteger(rows) || rows < 1)
    throw new Error(`Expected --rows to be a whole number >= 1, got '${given ?? ''}'`);
  const out = args[0] ?? fileURLToPath(new URL('../samples/champion_challenger.csv', import.meta.url));
  writeFileSync(out, sampleCsv(rows));
  process.stdout.write(`wrote ${out}: ${rows} rows\n`);
}
