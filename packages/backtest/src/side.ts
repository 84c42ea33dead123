/**
 * One side's view of one stage's normalised result for one key: what the back-test figures need, nothing more.
 *
 * Decision mapping (spec 2.4: observed values Approve, Reject, Proceed to Next Rule; "Proceed To Bank" named;
 * the complete set is "not shown"): 'approve' / 'approved' in any case count as approved and are shown as
 * "Approve"; 'reject' / 'rejected' / 'decline' / 'declined' are shown as "Reject"; any other value is its own
 * crosstab category, spelled as the API sent it (trimmed), and is not approved. A stage skipped by its
 * condition is "(skipped)", a result without the decision field "(none)", a row without the stage "(absent)".
 */
import type { Json, NormalisedResult } from '@bre-batch/core/types';

/** payday: Decision / LoanAmount; emi: EmiDecision / the best offer's loan_amount (spec 1.6, 2.4). */
export type Product = 'payday' | 'emi';

const APPROVE = 'Approve';
const REJECT = 'Reject';
const SKIPPED = '(skipped)';
const NO_DECISION = '(none)';
const ABSENT = '(absent)';

export interface SideView {
  /** The row has this stage and it ran (not skipped). */
  readonly ran: boolean;
  readonly category: string;
  readonly approved: boolean;
  /** LoanAmount (payday) or best offer loan_amount (emi); null when not a finite number. */
  readonly amount: number | null;
  readonly offersCount: number | null;
  readonly bestOfferAmount: number | null;
  readonly rulesFailed: readonly string[];
  /** Feature name -> value, for fields that are features (see isFeatureField). */
  readonly features: Readonly<Record<string, Json>>;
}

const APPROVE_WORDS = new Set(['approve', 'approved']);
const REJECT_WORDS = new Set(['reject', 'rejected', 'decline', 'declined']);

export function decisionCategory(value: Json | undefined): string {
  if (value === undefined || value === null) return NO_DECISION;
  const text = String(value).trim();
  if (text === '') return NO_DECISION;
  const lower = text.toLowerCase();
  if (APPROVE_WORDS.has(lower)) return APPROVE;
  if (REJECT_WORDS.has(lower)) return REJECT;
  return text;
}

/** Fields of a workflow stage's normalised result that are not features (CONTRACT: Normalised results). */
const NON_FEATURE_FIELDS = new Set([
  'decision',
  'decision_reason',
  'loan_amount',
  'repayment_date',
  'emi_decision',
  'loan_offers',
  'offers_count',
  'rule_engine_name',
  'rules_version',
  'rules_failed',
  'workflow',
  'workflow_version',
  'request_id',
  'skipped',
  'reference_id',
  'user_id',
]);

/** A feature is any other scalar field: `<engine>.<feature>` of a workflow, or a bureau stage's flat feature. */
export function isFeatureField(name: string, value: Json): boolean {
  if (NON_FEATURE_FIELDS.has(name) || name.startsWith('best_offer.')) return false;
  return value === null || typeof value !== 'object';
}

function finite(value: Json | undefined): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function decisionField(product: Product): 'decision' | 'emi_decision' {
  return product === 'emi' ? 'emi_decision' : 'decision';
}

export function amountField(product: Product): 'loan_amount' | 'best_offer.loan_amount' {
  return product === 'emi' ? 'best_offer.loan_amount' : 'loan_amount';
}

const ABSENT_VIEW: SideView = {
  ran: false,
  category: ABSENT,
  approved: false,
  amount: null,
  offersCount: null,
  bestOfferAmount: null,
  rulesFailed: [],
  features: {},
};
const SKIPPED_VIEW: SideView = { ...ABSENT_VIEW, category: SKIPPED };

export function sideView(result: NormalisedResult | undefined | null, product: Product): SideView {
  if (result === undefined || result === null || typeof result !== 'object' || Array.isArray(result))
    return ABSENT_VIEW;
  if (result.skipped === true) return SKIPPED_VIEW;
  const category = decisionCategory(result[decisionField(product)]);
  const rules = Array.isArray(result.rules_failed)
    ? result.rules_failed.filter((r): r is string => typeof r === 'string')
    : [];
  const features: Record<string, Json> = {};
  for (const [name, value] of Object.entries(result)) if (isFeatureField(name, value)) features[name] = value;
  return {
    ran: true,
    category,
    approved: category === APPROVE,
    amount: finite(result[amountField(product)]),
    offersCount: finite(result.offers_count) ?? (Array.isArray(result.loan_offers) ? result.loan_offers.length : null),
    bestOfferAmount: finite(result['best_offer.loan_amount']),
    rulesFailed: rules,
    features,
  };
}

/** Whether a result carries a decision at all (a workflow stage) rather than features only. */
export function hasDecision(result: NormalisedResult | undefined | null): boolean {
  return !!result && typeof result === 'object' && ('decision' in result || 'emi_decision' in result);
}

export type SwapClass = 'swap_in' | 'swap_out' | 'both_approve' | 'both_reject';

/** swap-in: B approves what A did not; swap-out: A approved what B does not. Not approved includes skipped. */
export function swapClass(a: SideView, b: SideView): SwapClass {
  if (a.approved) return b.approved ? 'both_approve' : 'swap_out';
  return b.approved ? 'swap_in' : 'both_reject';
}

/** Crosstab order: Approve, Reject, other decisions alphabetically, then the pseudo-categories. */
export function sortCategories(categories: Iterable<string>): string[] {
  const pseudo = [SKIPPED, NO_DECISION, ABSENT];
  const rank = (c: string): number =>
    c === APPROVE ? 0 : c === REJECT ? 1 : pseudo.includes(c) ? 3 + pseudo.indexOf(c) : 2;
  return [...new Set(categories)].sort((x, y) => rank(x) - rank(y) || (x < y ? -1 : x > y ? 1 : 0));
}
