/**
 * One pure module for bureau data, shared by the bureau feature endpoint (decision spec 2.8, 4.7) and the
 * workflows' bureau_intel engine (2.5), so both agree for the same report:
 *   raw_data (base64) -> text -> document (JSON, or XML for bureau_b_xml) -> BureauProfile -> features.
 * Reports are read defensively: keys are matched ignoring case, '-' and '_' (bureau_b_json uses snake case,
 * bureau_b_hardpull and bureau_b_json_v2 upper-case hyphenated keys, XML whatever its tags say).
 */
import { parseXml, XmlError } from './xml.js';
import { intBetween, unit } from './hash.js';

/** external.bureau_type values accepted by the workflows (decision spec 2.7). */
export const WORKFLOW_BUREAU_FORMATS = [
  'bureau_a_json',
  'bureau_b_json',
  'bureau_b_json_v2',
  'bureau_b_xml',
  'bureau_b_hardpull',
  'bureau_c_softpull_json',
  'bureau_d_softpull_json',
  'bureau_c_softpull_json_v2',
] as const;

/** format_type values accepted by /api/bureau (decision spec 2.7: the list above without bureau_c_softpull_json_v2). */
export const FEATURE_BUREAU_FORMATS = WORKFLOW_BUREAU_FORMATS.filter((f) => f !== 'bureau_c_softpull_json_v2');

export type BureauFormat = (typeof WORKFLOW_BUREAU_FORMATS)[number];

/** A report that cannot be read: the message is the reason after "error in decoding raw_data: ". */
export class ReportError extends Error {}

export interface BureauProfile {
  /** False for a no-hit / thin-file report (no score). */
  readonly hit: boolean;
  readonly score: number | null;
  readonly totalAccounts: number;
  readonly activeAccounts: number;
  readonly overdueAccounts: number;
  readonly overdueAmount: number;
  readonly currentBalance: number;
  readonly sanctionedAmount: number;
  /** Monthly instalments when the report states them (bureau_d), else null (estimated from balances). */
  readonly statedMonthlyObligation: number | null;
  readonly recentEnquiries: number;
  readonly writeOffs: number;
}

/** The flat features of /api/bureau (after reference_id) and the base of bureau_intel. */
export interface BureauFeatures {
  readonly cbs_stpl_v1: number;
  readonly cbs_monthly_affordability_v1: number;
  readonly cbs_risk_grade_v1: number;
  readonly is_risky_customer: boolean;
  readonly score: number;
  readonly income_calculated: number;
  readonly bureau_hit: boolean;
  readonly total_accounts: number;
  readonly active_accounts: number;
  readonly overdue_accounts: number;
  readonly overdue_amount: number;
  readonly total_current_balance: number;
  readonly total_sanctioned_amount: number;
  readonly monthly_obligation: number;
  readonly recent_enquiries: number;
  readonly write_off_accounts: number;
}

// ---------------------------------------------------------------- decoding

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** base64 -> UTF-8 text, strictly (Node's decoder silently skips bad characters; the service does not). */
function decodeBase64Report(raw: string): string {
  const s = raw.replace(/\s+/g, '');
  if (s.length === 0) throw new ReportError('raw_data is empty');
  if (!BASE64.test(s))
    throw new ReportError('Invalid base64-encoded string: contains characters outside the base64 alphabet');
  if (s.length % 4 !== 0) throw new ReportError('Incorrect padding');
  const bytes = Buffer.from(s, 'base64');
  try {
    return utf8.decode(bytes);
  } catch {
    throw new ReportError("'utf-8' codec can't decode the report bytes");
  }
}

/** Report text -> document: XML for bureau_b_xml, JSON (an object) for every other format. */
function parseReportText(text: string, format: BureauFormat): Record<string, unknown> {
  if (format === 'bureau_b_xml') {
    try {
      return parseXml(text.replace(/^\uFEFF/, ''));
    } catch (err) {
      throw new ReportError(`not well-formed XML: ${err instanceof XmlError ? err.message : String(err)}`);
    }
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new ReportError(`invalid JSON: ${(err as Error).message}`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
    throw new ReportError('the report is not a JSON object');
  return doc as Record<string, unknown>;
}

// ---------------------------------------------------------------- key-insensitive access

type Obj = Record<string, unknown>;

function norm(k: string): string {
  return k.toLowerCase().replace(/[^a-z0-9]/g, '');
}

function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** First element of an array, or the value itself (XML turns one-element lists into plain elements). */
function first(v: unknown): unknown {
  return Array.isArray(v) ? v[0] : v;
}

function asList(v: unknown): unknown[] {
  if (v === undefined || v === null || v === '') return [];
  return Array.isArray(v) ? v : [v];
}

/**
 * The records of a list, whatever its wrapping: a JSON array, a wrapper object with one list/record inside
 * (JSON {"SCORE": [...]}, XML <SCORE><SCORE-ITEM>...</SCORE-ITEM></SCORE>), or a single record.
 */
function items(v: unknown): unknown[] {
  if (isObj(v)) {
    const vals = Object.values(v);
    if (vals.length === 1 && vals[0] !== null && typeof vals[0] === 'object') return items(vals[0]);
    return [v];
  }
  return asList(v).flatMap((x) =>
    isObj(x) && Object.keys(x).length === 1 && Array.isArray(Object.values(x)[0]) ? items(x) : [x],
  );
}

/** Value of the first key of `o` whose normalised name is one of `names` (already normalised). */
function pick(o: unknown, ...names: string[]): unknown {
  if (!isObj(o)) return undefined;
  for (const name of names) {
    for (const k of Object.keys(o)) if (norm(k) === name) return o[k];
  }
  return undefined;
}

/** Breadth-first search for a key (normalised name) anywhere below `o`. */
function deepFind(o: unknown, name: string, maxDepth = 10): unknown {
  let level: unknown[] = [o];
  for (let depth = 0; depth < maxDepth && level.length > 0; depth++) {
    const next: unknown[] = [];
    for (const v of level) {
      if (Array.isArray(v)) {
        next.push(...v);
        continue;
      }
      if (!isObj(v)) continue;
      for (const k of Object.keys(v)) {
        if (norm(k) === name) return v[k];
        next.push(v[k]);
      }
    }
    level = next;
  }
  return undefined;
}

/** A number from a number or numeric text ("00750", "1,20,000", " 42 "); null otherwise. */
export function toNum(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v !== 'string') return null;
  const s = v.replace(/[,\s]/g, '');
  if (s === '' || !/^[-+]?\d*\.?\d+$/.test(s)) return null;
  return Number(s);
}

function num(o: unknown, ...names: string[]): number {
  return toNum(first(pick(o, ...names))) ?? 0;
}

/** A score of 0, negative, non-numeric (e.g. "000-1", the NTC marker) or missing means no hit. */
function scoreOf(v: unknown): number | null {
  const n = toNum(v);
  return n !== null && n > 0 ? n : null;
}

function mismatch(format: string, expected: string): never {
  throw new ReportError(`the report is not a ${format} report (expected ${expected})`);
}

const WRITE_OFF = /writ(?:ten|e)[\s_-]*off|settled/i;

function countWriteOffs(list: unknown[]): number {
  let n = 0;
  for (const item of list) {
    if (!isObj(item)) continue;
    for (const v of Object.values(item))
      if (typeof v === 'string' && WRITE_OFF.test(v)) {
        n++;
        break;
      }
  }
  return n;
}

// ---------------------------------------------------------------- per-format extraction

function profileA(doc: Obj, format: string): BureauProfile {
  const ccd = first(pick(doc, 'consumercreditdata'));
  if (!isObj(ccd)) mismatch(format, 'consumerCreditData[]');
  const scores = asList(pick(ccd, 'scores'));
  const score = scoreOf(pick(first(scores), 'score'));
  const summary = pick(doc, 'consumersummarydata');
  const acc = pick(summary, 'accountsummary');
  const inq = pick(summary, 'inquirysummary');
  const total = num(acc, 'totalaccounts');
  const zero = num(acc, 'zerobalanceaccounts');
  const enquiries = inq === undefined ? asList(pick(ccd, 'enquiries')).length : num(inq, 'inquirypast12months');
  return {
    hit: score !== null,
    score,
    totalAccounts: total,
    activeAccounts: Math.max(0, total - zero),
    overdueAccounts: num(acc, 'overdueaccounts'),
    overdueAmount: num(acc, 'overduebalance'),
    currentBalance: num(acc, 'currentbalance'),
    sanctionedAmount: num(acc, 'highcreditamount'),
    statedMonthlyObligation: null,
    recentEnquiries: enquiries,
    writeOffs: countWriteOffs(asList(pick(ccd, 'accounts'))),
  };
}

function profileB(doc: Obj, format: string): BureauProfile {
  const root = pick(doc, 'cirreportfile', 'indvreportfile');
  if (!isObj(root)) mismatch(format, 'a cir_report_file / CIR-REPORT-FILE / INDV-REPORT-FILE root');
  const summary = deepFind(root, 'accountssummary');
  const primary = pick(summary, 'primaryaccountssummary') ?? summary;
  const secondary = pick(summary, 'secondaryaccountssummary');
  const both = (...names: string[]) =>
    num(primary, ...names) + num(secondary, ...names.map((n) => n.replace(/^primary/, 'secondary')));
  // score[] (json, hardpull), SCORE (xml), SCORES{SCORE[]} or SCORES[] (json_v2), <SCORE><SCORE-ITEM> (xml lists).
  let score: number | null = null;
  for (const node of items(deepFind(root, 'score') ?? deepFind(root, 'scores'))) {
    score = isObj(node) ? scoreOf(first(pick(node, 'value', 'scorevalue', 'score'))) : scoreOf(node);
    if (score !== null) break;
  }
  const enquiries = items(deepFind(root, 'inquiryhistory')).length;
  return {
    hit: score !== null,
    score,
    totalAccounts: both('numberofaccounts', 'primarynumberofaccounts'),
    activeAccounts: both('activeaccounts', 'primaryactivenumberofaccounts', 'activenumberofaccounts'),
    overdueAccounts: both('overdueaccounts', 'primaryoverduenumberofaccounts', 'overduenumberofaccounts'),
    overdueAmount: both('totalamtoverdue', 'primaryoverdueamount', 'overdueamount'),
    currentBalance: both('totalcurrentbalance', 'primarycurrentbalance', 'currentbalance'),
    sanctionedAmount: both('totalsanctionedamt', 'primarysanctionedamount', 'sanctionedamount', 'totaldisbursedamt'),
    statedMonthlyObligation: null,
    recentEnquiries: enquiries,
    writeOffs: countWriteOffs(items(deepFind(root, 'tradelines'))),
  };
}

function profileC(doc: Obj, format: string): BureauProfile {
  const root = first(pick(doc, 'inprofileresponse')) ?? first(deepFind(doc, 'inprofileresponse', 6));
  if (!isObj(root)) mismatch(format, 'an INProfileResponse root');
  const score = scoreOf(pick(pick(root, 'score'), 'bureauscore'));
  const cais = pick(root, 'caisaccount');
  const caisSummary = pick(cais, 'caissummary');
  const credit = pick(caisSummary, 'creditaccount');
  const outstanding = pick(caisSummary, 'totaloutstandingbalance');
  const details = asList(pick(cais, 'caisaccountdetails'));
  let overdueAccounts = 0;
  let overdueAmount = 0;
  let sanctioned = 0;
  let writeOffs = 0;
  for (const d of details) {
    const due = num(d, 'amountpastdue');
    if (due > 0) {
      overdueAccounts++;
      overdueAmount += due;
    }
    sanctioned += num(d, 'highestcreditororiginalloanamount');
    if (num(d, 'writtenoffamttotal') > 0) writeOffs++;
  }
  const capsTotal = Math.max(
    num(pick(root, 'totalcapssummary'), 'totalcapslast180days'),
    num(pick(pick(root, 'caps'), 'capssummary'), 'capslast180days'),
  );
  return {
    hit: score !== null,
    score,
    totalAccounts: num(credit, 'creditaccounttotal') || details.length,
    activeAccounts: num(credit, 'creditaccountactive'),
    overdueAccounts: Math.max(overdueAccounts, num(credit, 'creditaccountdefault')),
    overdueAmount,
    currentBalance: num(outstanding, 'outstandingbalanceall'),
    sanctionedAmount: sanctioned,
    statedMonthlyObligation: null,
    recentEnquiries: Math.max(capsTotal, asList(pick(pick(root, 'caps'), 'capsapplicationdetails')).length),
    writeOffs,
  };
}

function profileD(doc: Obj, format: string): BureauProfile {
  const ccr = pick(doc, 'ccrresponse');
  const entry = first(pick(ccr, 'cirreportdatalst'));
  const data = pick(entry, 'cirreportdata');
  if (!isObj(data)) mismatch(format, 'CCRResponse.CIRReportDataLst[].CIRReportData');
  const scoreList = [
    ...asList(pick(data, 'scoredetails')),
    ...asList(pick(entry, 'score')),
    ...asList(pick(doc, 'score')),
  ];
  let score: number | null = null;
  for (const s of scoreList) {
    score = scoreOf(pick(s, 'value'));
    if (score !== null) break;
  }
  const sum = pick(data, 'retailaccountssummary');
  const enq = pick(data, 'enquirysummary');
  const stated = toNum(first(pick(sum, 'totalmonthlypaymentamount')));
  return {
    hit: score !== null,
    score,
    totalAccounts: num(sum, 'noofaccounts'),
    activeAccounts: num(sum, 'noofactiveaccounts'),
    overdueAccounts: num(sum, 'noofpastdueaccounts'),
    overdueAmount: num(sum, 'totalpastdue'),
    currentBalance: num(sum, 'totalbalanceamount'),
    sanctionedAmount: num(sum, 'totalsanctionamount') || num(sum, 'totalhighcredit'),
    statedMonthlyObligation: stated,
    recentEnquiries: num(enq, 'past12months'),
    writeOffs: num(sum, 'noofwriteoffs'),
  };
}

function extractProfile(doc: Record<string, unknown>, format: BureauFormat): BureauProfile {
  switch (format) {
    case 'bureau_a_json':
      return profileA(doc, format);
    case 'bureau_b_json':
    case 'bureau_b_json_v2':
    case 'bureau_b_xml':
    case 'bureau_b_hardpull':
      return profileB(doc, format);
    case 'bureau_c_softpull_json':
    case 'bureau_c_softpull_json_v2':
      return profileC(doc, format);
    case 'bureau_d_softpull_json':
      return profileD(doc, format);
  }
}

/** raw_data + format -> profile; throws ReportError with the reason. */
export function profileFromRaw(raw: string, format: BureauFormat): BureauProfile {
  return extractProfile(parseReportText(decodeBase64Report(raw), format), format);
}

// ---------------------------------------------------------------- features

const FOIR: Record<number, number> = { 1: 0.6, 2: 0.55, 3: 0.5, 4: 0.4, 5: 0.3 };
const STPL_MULTIPLE: Record<number, number> = { 1: 3, 2: 2.5, 3: 2, 4: 1, 5: 0 };

const round100 = (x: number) => Math.round(x / 100) * 100;
const floor500 = (x: number) => Math.floor(x / 500) * 500;

/** 1 (best) .. 5 (worst): score band, one notch down for overdue accounts and for many recent enquiries. */
function riskGrade(p: BureauProfile): number {
  let g: number;
  if (!p.hit || p.score === null) g = 4;
  else if (p.score >= 780) g = 1;
  else if (p.score >= 730) g = 2;
  else if (p.score >= 680) g = 3;
  else if (p.score >= 620) g = 4;
  else g = 5;
  if (p.hit && p.overdueAccounts > 0) g++;
  if (p.recentEnquiries > 6) g++;
  return Math.min(g, 5);
}

export function bureauFeatures(p: BureauProfile): BureauFeatures {
  const grade = riskGrade(p);
  const obligation = Math.round(p.statedMonthlyObligation ?? 0.035 * p.currentBalance);
  const income =
    p.activeAccounts > 0 || p.totalAccounts > 0 ? round100(Math.max(obligation / 0.35, p.sanctionedAmount / 15)) : 0;
  const affordability = Math.max(0, Math.round(income * FOIR[grade] - obligation));
  const risky = (p.hit && grade >= 5) || p.writeOffs > 0 || p.overdueAmount > 10_000;
  return {
    cbs_stpl_v1: risky ? 0 : floor500(Math.min(affordability * STPL_MULTIPLE[grade], 200_000)),
    cbs_monthly_affordability_v1: affordability,
    cbs_risk_grade_v1: grade,
    is_risky_customer: risky,
    score: p.score ?? -1,
    income_calculated: income,
    bureau_hit: p.hit,
    total_accounts: p.totalAccounts,
    active_accounts: p.activeAccounts,
    overdue_accounts: p.overdueAccounts,
    overdue_amount: p.overdueAmount,
    total_current_balance: p.currentBalance,
    total_sanctioned_amount: p.sanctionedAmount,
    monthly_obligation: obligation,
    recent_enquiries: p.recentEnquiries,
    write_off_accounts: p.writeOffs,
  };
}

/**
 * A deterministic bureau profile for a workflow that "fetches the bureau itself" (decision spec 4.3,
 * personal fields instead of external): derived from a hash of the PAN, ~8% no-hit, scores around 690.
 */
export function syntheticProfile(pan: string): BureauProfile {
  const key = pan.toUpperCase();
  if (unit(key, 'bureau.hit') < 0.08) {
    return {
      hit: false,
      score: null,
      totalAccounts: 0,
      activeAccounts: 0,
      overdueAccounts: 0,
      overdueAmount: 0,
      currentBalance: 0,
      sanctionedAmount: 0,
      statedMonthlyObligation: null,
      recentEnquiries: intBetween(key, 'bureau.enq', 0, 3),
      writeOffs: 0,
    };
  }
  const score = Math.min(
    900,
    Math.round(480 + 140 * (unit(key, 'bureau.s1') + unit(key, 'bureau.s2') + unit(key, 'bureau.s3'))),
  );
  const total = intBetween(key, 'bureau.total', 1, 12);
  const active = Math.max(1, Math.round(total * (0.3 + 0.6 * unit(key, 'bureau.active'))));
  const overdue =
    unit(key, 'bureau.od') < (score < 650 ? 0.5 : 0.12) ? intBetween(key, 'bureau.odn', 1, Math.min(3, active)) : 0;
  const sanctioned = round100(active * (40_000 + 300_000 * unit(key, 'bureau.sanction') ** 2));
  return {
    hit: true,
    score,
    totalAccounts: total,
    activeAccounts: active,
    overdueAccounts: overdue,
    overdueAmount: overdue > 0 ? round100(overdue * (1_000 + 20_000 * unit(key, 'bureau.odamt'))) : 0,
    currentBalance: round100(sanctioned * (0.2 + 0.6 * unit(key, 'bureau.bal'))),
    sanctionedAmount: sanctioned,
    statedMonthlyObligation: null,
    recentEnquiries: Math.floor(11 * unit(key, 'bureau.enq') ** 3),
    writeOffs: unit(key, 'bureau.wo') < 0.03 ? 1 : 0,
  };
}
