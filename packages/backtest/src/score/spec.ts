/**
 * Which scores to assess: `--score FIELD` (the same normalised field in A's and B's stage, e.g.
 * bureau_intel.bureau_score) or `--score FIELD_A:FIELD_B` (a challenger score under another name), with
 * `--score-direction NAME=lower` for a score where lower is better (a risk grade, a probability of default).
 */
import { BreError } from '@bre-batch/core/errors';
import type { Direction } from './table.js';

export interface ScoreSpec {
  /** FIELD, or FIELD_A:FIELD_B: the name in compare.json, compare.csv and --score-direction. */
  readonly label: string;
  readonly fieldA: string;
  readonly fieldB: string;
  readonly direction: Direction;
  /**
   * Values that mean "no score" (`--score-missing`): a bureau's no-history marker is not the riskiest score.
   * Keys holding one are counted apart and left out of the power, the deciles and the cut-off table.
   */
  readonly markers: readonly number[];
}

/**
 * The default of `--score-missing`: -1, what the bureaus send for an applicant with no credit history (CIBIL's
 * "000-1", the bureau features' `score` of a no-hit report). Thin-file ranks (CIBIL's 1 to 5) are not in it:
 * the same numbers are real values of other scores (a risk grade, a probability of 1); give them when the
 * score is a bureau score.
 */
const DEFAULT_SCORE_MISSING: readonly number[] = [-1];

/** `--score-missing -1,0` (numbers, comma-separated, repeatable) or `none`. */
function parseScoreMissing(value: string | readonly string[] | undefined): number[] {
  if (value === undefined) return [...DEFAULT_SCORE_MISSING];
  const parts = list(value)
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
  if (parts.length === 1 && parts[0].toLowerCase() === 'none') return [];
  const out: number[] = [];
  for (const p of parts) {
    const n = Number(p);
    if (!/^[-+]?(\d+\.?\d*|\.\d+)$/.test(p) || !Number.isFinite(n))
      throw new BreError('USAGE', `Expected --score-missing to list numbers (e.g. -1,0) or none, got '${p}'`, {
        field: 'score-missing',
      });
    if (!out.includes(n)) out.push(n);
  }
  if (out.length === 0)
    throw new BreError('USAGE', `Expected --score-missing to list numbers (e.g. -1,0) or none, got nothing`, {
      field: 'score-missing',
    });
  return out;
}

/** A key's value of a score: NaN when absent, not a number, or one of the score's no-score markers. */
export function scoreValue(v: unknown, spec: Pick<ScoreSpec, 'markers'>): number {
  return typeof v === 'number' && Number.isFinite(v) && !spec.markers.includes(v) ? v : Number.NaN;
}

/** More than this many scores would make the report unreadable and the join slow. */
const MAX_SCORES = 20;

function list(value: string | readonly string[] | undefined): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).map((v) => String(v));
}

export function parseScoreSpecs(
  scores: string | readonly string[] | undefined,
  directions: string | readonly string[] | undefined,
  missing?: string | readonly string[],
): ScoreSpec[] {
  const markers = parseScoreMissing(missing);
  const specs: { label: string; fieldA: string; fieldB: string }[] = [];
  for (const raw of list(scores)) {
    const text = raw.trim();
    const parts = text.split(':');
    if (text === '' || parts.length > 2 || parts.some((p) => p.trim() === '')) {
      throw new BreError(
        'USAGE',
        `Expected --score FIELD or FIELD_A:FIELD_B (a numeric field of the compared stages, e.g. bureau_intel.bureau_score), got '${raw}'`,
        { field: 'score' },
      );
    }
    const [fieldA, fieldB = fieldA] = parts.map((p) => p.trim());
    const label = fieldA === fieldB ? fieldA : `${fieldA}:${fieldB}`;
    if (specs.some((s) => s.label === label))
      throw new BreError('USAGE', `Expected each --score once, got '${label}' twice`, { field: 'score' });
    specs.push({ label, fieldA, fieldB });
  }
  if (specs.length > MAX_SCORES)
    throw new BreError('USAGE', `Expected at most ${MAX_SCORES} --score options, got ${specs.length}`, {
      field: 'score',
    });
  const dir = new Map<string, Direction>();
  for (const raw of list(directions)) {
    const m = /^(.+)=(higher|lower)$/.exec(raw.trim());
    const names = specs.map((s) => s.label).join(', ') || 'none';
    if (!m)
      throw new BreError(
        'USAGE',
        `Expected --score-direction NAME=higher or NAME=lower (higher/lower is better), got '${raw}'`,
        { field: 'score-direction' },
      );
    const name = m[1].trim();
    if (!specs.some((s) => s.label === name)) {
      throw new BreError('USAGE', `Expected --score-direction to name a --score (${names}), got '${name}'`, {
        field: 'score-direction',
      });
    }
    dir.set(name, m[2] === 'lower' ? 'lower_is_better' : 'higher_is_better');
  }
  return specs.map((s) => ({ ...s, direction: dir.get(s.label) ?? 'higher_is_better', markers }));
}
