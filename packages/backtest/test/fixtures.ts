/** Writes small output folders (as `bre-batch run` leaves them) for the back-test tests. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface FolderSpec {
  readonly lines: readonly (object | string)[];
  readonly inputPath?: string;
  readonly pipeline?: string;
  readonly errors?: readonly object[];
}

export function writeRunFolder(dir: string, spec: FolderSpec): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'results.ndjson'),
    spec.lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n',
  );
  if (spec.errors)
    writeFileSync(join(dir, 'errors.ndjson'), spec.errors.map((e) => JSON.stringify(e)).join('\n') + '\n');
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({
      version: 1,
      tool: 'bre-batch',
      pipeline: { name: spec.pipeline ?? 'bureau_mobile', path: '/x/pipelines/bureau_mobile.yaml', sha256: '0' },
      input: { path: spec.inputPath ?? '/nonexistent/input.csv', format: 'csv', size: null, sha256: null },
      key: 'reference_id',
      shard: null,
      limit: null,
      created_at: '2025-01-01T00:00:00.000Z',
    }),
  );
  return dir;
}

type Dec = string | null;

/** A workflow stage result with the fields the back-test reads. */
export function wf(decision: Dec, amount: number | null, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    decision,
    decision_reason: 'x',
    loan_amount: amount,
    repayment_date: null,
    emi_decision: null,
    loan_offers: [],
    offers_count: 0,
    rule_engine_name: 'mobile_intel',
    rules_version: 'v1',
    rules_failed: [],
    workflow: 'bureau',
    workflow_version: 'v1',
    request_id: 'req',
    ...extra,
  };
}

export const SKIPPED = { skipped: true };

/**
 * The hand-computed case (see hand.test.ts for every expected figure):
 * rows 1..10 are keys k01..k10 in both runs; A also has k11 (only in A) and a row without key; B has
 * an HTML-looking key only in B, k13 twice (a duplicate) and one unreadable line.
 */
export const NASTY_KEY = '<img src=x onerror=alert(1)>';
export const FORMULA_KEY = '=HYPERLINK("http://x")';

export function handCase(root: string): { a: string; b: string; input: string } {
  const input = join(root, 'input.csv');
  const states = ['KA', 'KA', 'MH', 'MH', 'KA', 'MH', 'KA', 'MH', 'KA', 'MH', 'KA', 'MH', 'KA', 'MH', 'KA'];
  const bad = ['0', '0', '1', '1', '', '0', '1', '0', '', '0', '1', '0', '0', '0', ''];
  const keys = [
    'k01',
    'k02',
    'k03',
    'k04',
    'k05',
    'k06',
    'k07',
    'k08',
    'k09',
    'k10',
    FORMULA_KEY,
    NASTY_KEY,
    'k13',
    'k13b',
    '',
  ];
  writeFileSync(
    input,
    'reference_id,state,bad\n' + keys.map((k, i) => `"${k.replace(/"/g, '""')}",${states[i]},${bad[i]}\n`).join(''),
  );
  const score = (row: number): number => 500 + 10 * row;
  const flag = (v: boolean) => ({ 'mobile_intel.fraud_flag': v });
  const A: Record<string, unknown>[] = [
    wf('Approve', 1000, {
      'bureau_intel.bureau_score': score(1),
      ...flag(false),
      offers_count: 2,
      'best_offer.loan_amount': 1000,
    }),
    wf('Approve', 1000, {
      'bureau_intel.bureau_score': score(2),
      ...flag(false),
      offers_count: 2,
      'best_offer.loan_amount': 1000,
    }),
    wf('Approve', 2000, { 'bureau_intel.bureau_score': score(3), ...flag(true) }),
    wf('Approve', 2000, { 'bureau_intel.bureau_score': score(4), ...flag(false) }),
    wf('Approved', 3000, { 'bureau_intel.bureau_score': score(5), ...flag(false) }),
    wf('Reject', null, { 'bureau_intel.bureau_score': score(6), ...flag(false), rules_failed: ['bureau_score_min'] }),
    wf('Reject', null, { 'bureau_intel.bureau_score': score(7), ...flag(false), rules_failed: ['bureau_score_min'] }),
    wf('Reject', null, {
      'bureau_intel.bureau_score': score(8),
      ...flag(false),
      rules_failed: ['bureau_score_min', 'dpd_check'],
    }),
    wf('Proceed to Next Rule', null, {
      'bureau_intel.bureau_score': score(9),
      ...flag(false),
      rules_failed: ['dpd_check'],
    }),
    SKIPPED,
  ];
  const B: Record<string, unknown>[] = [
    wf('Approve', 1000, {
      'bureau_intel.bureau_score': 515,
      ...flag(false),
      offers_count: 3,
      'best_offer.loan_amount': 1200,
      'mobile_intel.new_score': 1,
    }),
    wf('Approve', 1500, {
      'bureau_intel.bureau_score': 525,
      ...flag(false),
      offers_count: 1,
      'best_offer.loan_amount': 900,
    }),
    wf('Approve', 1500, { 'bureau_intel.bureau_score': 535, ...flag(true) }),
    wf('Reject', null, { 'bureau_intel.bureau_score': 545, ...flag(true), rules_failed: ['bureau_score_min'] }),
    wf('Reject', null, { 'bureau_intel.bureau_score': 555, ...flag(false), rules_failed: ['income_check'] }),
    wf('Approve', 1000, { 'bureau_intel.bureau_score': 560, ...flag(false) }),
    wf('Reject', null, { 'bureau_intel.bureau_score': 570, ...flag(false), rules_failed: ['bureau_score_min'] }),
    wf('Proceed to Next Rule', null, { 'bureau_intel.bureau_score': 580, ...flag(false), rules_failed: ['dpd_check'] }),
    wf('approve', 2500, { 'bureau_intel.bureau_score': 590, ...flag(false) }),
    wf('Reject', null, { 'bureau_intel.bureau_score': 700, ...flag(false), rules_failed: ['income_check'] }),
  ];
  const line = (row: number, key: string | null, stage: unknown) => ({ row, key, stages: { bre: stage } });
  const aLines: (object | string)[] = A.map((s, i) => line(i + 1, keys[i], s));
  aLines.push(line(11, FORMULA_KEY, wf('Approve', 500)));
  aLines.push(line(13, 'k13', wf('Reject', null)));
  aLines.push(line(15, null, wf('Reject', null)));
  const bLines: (object | string)[] = B.map((s, i) => line(i + 1, keys[i], s));
  bLines.push(line(12, NASTY_KEY, wf('Approve', 700)));
  bLines.push('{"row": 16, this is not json');
  bLines.push(line(13, 'k13', wf('Approve', 100)));
  bLines.push(line(14, 'k13', wf('Reject', null)));
  const a = writeRunFolder(join(root, 'champion'), {
    lines: aLines,
    inputPath: input,
    pipeline: 'bureau_mobile',
    errors: [
      {
        row: 12,
        key: NASTY_KEY,
        stage: 'bre',
        status: 500,
        code: 'SERVER_ERROR',
        message: 'x',
        attempts: 1,
        input: {},
      },
    ],
  });
  const b = writeRunFolder(join(root, 'challenger'), {
    lines: bLines,
    inputPath: input,
    pipeline: 'bureau_mobile_v2',
    errors: [],
  });
  return { a, b, input };
}
