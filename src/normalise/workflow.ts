/**
 * A workflow execution answer (spec 2.3-2.5) as one flat normalised result (CONTRACT "Normalised results"):
 * the fixed fields first (`workflowResultColumns`), then the features and the other parts in the answer's order
 * (`normaliseWorkflow` says which). Pure.
 */
import { BreError } from '@bre-batch/core/errors';
import { define } from '@bre-batch/formats/input/fields';
import { resultFields, type Json, type NormalisedResult, type ResultField } from '@bre-batch/core/types';
import { describeShape } from './shape.js';

const OFFER_FIELDS = [
  'product_code',
  'tenure_months',
  'pf_percent',
  'interest_rate',
  'emi_amount',
  'loan_amount',
] as const;

const FIXED_COLUMNS: readonly ResultField[] = [
  ...resultFields('string', 'decision', 'decision_reason'),
  ...resultFields('double', 'loan_amount'),
  ...resultFields('string', 'repayment_date', 'emi_decision'),
  ...resultFields('json', 'loan_offers'),
  ...resultFields('int64', 'offers_count'),
  ...resultFields('string', 'best_offer.product_code'),
  ...resultFields('int64', 'best_offer.tenure_months'),
  ...resultFields('double', ...OFFER_FIELDS.slice(2).map((f) => `best_offer.${f}`)),
  ...resultFields('string', 'rule_engine_name', 'rules_version'),
  ...resultFields('json', 'rules_failed'),
  ...resultFields('string', 'workflow', 'workflow_version', 'request_id'),
];

/** The fixed result fields, in a stable order (the start of the stage's results.csv columns), typed. */
export function workflowResultColumns(): ResultField[] {
  return [...FIXED_COLUMNS];
}

/** final_decision keys that map to fixed fields. */
const KNOWN_DECISION_KEYS = new Set([
  'Decision',
  'DecisionReason',
  'LoanAmount',
  'ReplaymentDate',
  'RepaymentDate',
  'EmiDecision',
  'LoanOffers',
  'RulesEvaluation',
  'version',
  'rule_engine_name',
]);

/** First segments of generated names; an engine called so would collide with them. */
const RESERVED_PREFIXES = new Set([
  'best_offer',
  'final_decision',
  'prev',
  'features',
  'rules_output',
  'output_features',
]);

type Obj = Record<string, Json>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function bad(message: string): BreError {
  return new BreError('BAD_RESPONSE', `Unexpected workflow answer: ${message}`, {
    service: 'workflow',
    expected: 'a workflow result (spec 2.3)',
  });
}

/** A number, or numeric text as a number; anything else unchanged (null when absent). */
function numeric(v: Json | undefined): Json {
  if (v === undefined) return null;
  if (typeof v === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(v)) return Number(v);
  return v;
}

function asNumber(v: Json | undefined): number | undefined {
  const n = numeric(v);
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
}

/**
 * The best offer: the largest loan_amount; among equal amounts the lowest interest_rate, then the lowest
 * emi_amount, then the first listed. Offers without a numeric loan_amount come last.
 */
export function bestOffer(offers: readonly Json[]): Obj | undefined {
  let best: Obj | undefined;
  const key = (o: Obj): [number, number, number] => [
    asNumber(o.loan_amount) ?? -Infinity,
    -(asNumber(o.interest_rate) ?? Infinity),
    -(asNumber(o.emi_amount) ?? Infinity),
  ];
  for (const o of offers) {
    if (!isObj(o)) continue;
    if (!best) {
      best = o;
      continue;
    }
    const a = key(o);
    const b = key(best);
    if (a[0] > b[0] || (a[0] === b[0] && (a[1] > b[1] || (a[1] === b[1] && a[2] > b[2])))) best = o;
  }
  return best;
}

/**
 * `workflow_bureau_mobile_bank_v1` -> { bureau_mobile_bank, v1 }. The name may contain underscores; the
 * version is the last segment when it looks like one (v1, v2.1, 3). A path-like value keeps its last part,
 * without a .json/.yaml extension. Without a recognisable version the whole rest is the name.
 */
export function parseWorkflowVersionPath(path: Json | undefined): { workflow: string | null; version: string | null } {
  if (typeof path !== 'string' || path.trim() === '') return { workflow: null, version: null };
  let s = path.trim();
  s = s.slice(s.lastIndexOf('/') + 1).replace(/\.(json|ya?ml)$/i, '');
  if (s.startsWith('workflow_')) s = s.slice('workflow_'.length);
  const cut = s.lastIndexOf('_');
  if (cut > 0 && /^v?\d+(\.\d+)*$/i.test(s.slice(cut + 1)))
    return { workflow: s.slice(0, cut), version: s.slice(cut + 1) };
  return { workflow: s || null, version: null };
}

function rulesFailed(evaluation: Json | undefined): string[] {
  const failed: string[] = [];
  if (!isObj(evaluation)) return failed;
  for (const k of Object.keys(evaluation)) {
    const v = evaluation[k];
    if (v === false || (typeof v === 'string' && v.trim().toLowerCase() === 'false')) failed.push(k);
  }
  return failed;
}

function offersOf(v: Json | undefined): Json[] {
  if (Array.isArray(v)) return v;
  if (isObj(v)) return [v]; // one offer not wrapped in a list
  return [];
}

/** A run calls one workflow, so its answers carry the same path: parsed once, not per row. */
let lastPath: Json | undefined;
let lastParsed: { workflow: string | null; version: string | null } = { workflow: null, version: null };
function versionOf(path: Json | undefined): { workflow: string | null; version: string | null } {
  if (path !== lastPath || typeof path === 'object') {
    lastParsed = parseWorkflowVersionPath(path);
    lastPath = path;
  }
  return lastParsed;
}

/**
 * Adds a generated key unless an earlier part already wrote it. An own-property check, so a key named like
 * an Object.prototype member is still an ordinary key.
 */
function put(out: NormalisedResult, key: string, value: Json | undefined): void {
  if (value !== undefined && !Object.hasOwn(out, key)) define(out, key, value);
}

/** `<prefix><engine>.<name>` for every engine object of `engines`, skipping the keys in `skip`. */
function flatten(
  out: NormalisedResult,
  prefix: string,
  engines: Json | undefined,
  reserve: boolean,
  skip?: readonly string[],
  skipEmpty = false,
): void {
  if (!isObj(engines)) return;
  for (const engine of Object.keys(engines)) {
    if (skip?.includes(engine)) continue;
    const feats = engines[engine];
    if (isObj(feats)) {
      const names = Object.keys(feats);
      if (skipEmpty && names.length === 0) continue;
      const base = reserve && RESERVED_PREFIXES.has(engine) ? `output_features.${engine}.` : `${prefix}${engine}.`;
      for (const name of names) put(out, base + name, feats[name]);
    } else {
      put(out, reserve && RESERVED_PREFIXES.has(engine) ? `output_features.${engine}` : `${prefix}${engine}`, feats);
    }
  }
}

const FEATURE_PARTS = ['output_features', 'prev_output_features'];
const RULES_PARTS = ['final_decision'];

/**
 * Fixed fields, always present (null when the answer lacks them), in `workflowResultColumns()` order:
 *   decision, decision_reason, loan_amount      <- final_decision.Decision, DecisionReason, LoanAmount
 *   repayment_date                               <- final_decision.ReplaymentDate (spelled so by the API;
 *                                                   a corrected `RepaymentDate` is read too)
 *   emi_decision, loan_offers, offers_count      <- EmiDecision, LoanOffers (always an array, [] when absent)
 *   best_offer.<field>                           <- the best of LoanOffers (see `bestOffer`)
 *   rule_engine_name, rules_version              <- final_decision.rule_engine_name, version
 *   rules_failed                                 <- names in RulesEvaluation whose value is false
 *   workflow, workflow_version                   <- workflow_version_path `workflow_<name>_<version>`
 *   request_id
 * Then, in the answer's order:
 *   final_decision.<Key>      any other key of final_decision, verbatim (kept, never fatal)
 *   <engine>.<feature>        output_data.features.output_features (an engine named like one of the
 *                             reserved prefixes below is written output_features.<engine>.<feature>)
 *   prev.<engine>.<feature>   prev_output_features, inside features or beside it in output_data (2.3)
 *   features.<engine>.<key>   other per-engine objects under features, when not empty
 *   rules_output.<engine>.<key> other per-engine objects under rules_output (basic, pre_bureau...), when not empty
 * Feature values that are objects or arrays stay JSON. output_data.ecm (fetched raw data: large, personal)
 * and engine_history (shape not shown) are not copied. Only final_decision is required: an answer without
 * output_data.rules_output.final_decision has no decision and is a BAD_RESPONSE; any other part may be missing.
 */
export function normaliseWorkflow(response: unknown): NormalisedResult {
  if (!isObj(response)) throw bad(`expected an object, got ${describeShape(response)}`);
  const od = response.output_data;
  if (!isObj(od))
    throw bad(`output_data should be an object, got ${describeShape(od)} (answer: ${describeShape(response)})`);
  const ro = od.rules_output;
  if (!isObj(ro))
    throw bad(
      `output_data.rules_output should be an object, got ${describeShape(ro)} (output_data: ${describeShape(od)})`,
    );
  const fd = ro.final_decision;
  if (!isObj(fd))
    throw bad(
      `output_data.rules_output.final_decision should be an object, got ${describeShape(fd)} (rules_output: ${describeShape(ro)})`,
    );

  const offers = offersOf(fd.LoanOffers);
  const best = bestOffer(offers);
  const { workflow, version } = versionOf(response.workflow_version_path);
  // One object literal in FIXED_COLUMNS order: V8 gives every result the same shape, which is far cheaper
  // to fill and to serialise than a null-prototype (dictionary) object at thousands of rows a second.
  const out: NormalisedResult = {
    decision: fd.Decision ?? null,
    decision_reason: fd.DecisionReason ?? null,
    loan_amount: numeric(fd.LoanAmount),
    repayment_date: fd.ReplaymentDate ?? fd.RepaymentDate ?? null,
    emi_decision: fd.EmiDecision ?? null,
    loan_offers: offers,
    offers_count: offers.length,
    'best_offer.product_code': best ? (best.product_code ?? null) : null,
    'best_offer.tenure_months': best ? numeric(best.tenure_months) : null,
    'best_offer.pf_percent': best ? numeric(best.pf_percent) : null,
    'best_offer.interest_rate': best ? numeric(best.interest_rate) : null,
    'best_offer.emi_amount': best ? numeric(best.emi_amount) : null,
    'best_offer.loan_amount': best ? numeric(best.loan_amount) : null,
    rule_engine_name: fd.rule_engine_name ?? null,
    rules_version: fd.version ?? null,
    rules_failed: rulesFailed(fd.RulesEvaluation),
    workflow,
    workflow_version: version,
    request_id: response.request_id ?? null,
  };

  for (const k of Object.keys(fd)) if (!KNOWN_DECISION_KEYS.has(k)) put(out, `final_decision.${k}`, fd[k]);

  const features = isObj(od.features) ? od.features : undefined;
  if (features) flatten(out, '', features.output_features, true);
  if (features) flatten(out, 'prev.', features.prev_output_features, false);
  flatten(out, 'prev.', od.prev_output_features, false);
  if (features) flatten(out, 'features.', features, false, FEATURE_PARTS, true);
  flatten(out, 'rules_output.', ro, false, RULES_PARTS, true);
  return out;
}
