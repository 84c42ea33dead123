/**
 * Which scores to assess: `--score FIELD` (the same normalised field in A's and B's stage, e.g.
 * bureau_intel.bureau_score) or `--score FIELD_A:FIELD_B` (a challenger score under another name), with
 * `--score-direction NAME=lower` for a score where lower is better (a risk grade, a probability of default).
 */
import { BreError } from '../../errors.js';
import type { Direction } from './table.js';

export interface ScoreSpec {
  /** FIELD, or FIELD_A:FIELD_B: the name in compare.json, compare.csv and --score-direction. */
  readonly label: string;
  readonly fieldA: string;
  readonly fieldB: string;
  readonly direction: Direction;
}

/** More than this many scores would make the report unreadable and the join slow. */
export const MAX_SCORES = 20;

function list(value: string | readonly string[] | undefined): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).map((v) => String(v));
}

export function parseScoreSpecs(scores: string | readonly string[] | undefined, directions: string | readonly string[] | undefined): ScoreSpec[] {
  const specs: { label: string; fieldA: string; fieldB: string }[] = [];
  for (const raw of list(scores)) {
    const text = raw.trim();
    const parts = text.split(':');
    if (text === '' || parts.length > 2 || parts.some((p) => p.trim() === '')) {
      throw new BreError('USAGE', `Expected --score FIELD or FIELD_A:FIELD_B (a numeric field of the compared stages, e.g. bureau_intel.bureau_score), got '${raw}'`, { field: 'score' });
    }
    const [fieldA, fieldB = fieldA] = parts.map((p) => p.trim());
    const label = fieldA === fieldB ? fieldA : `${fieldA}:${fieldB}`;
    if (specs.some((s) => s.label === label)) throw new BreError('USAGE', `Expected each --score once, got '${label}' twice`, { field: 'score' });
    specs.push({ label, fieldA, fieldB });
  }
  if (specs.length > MAX_SCORES) throw new BreError('USAGE', `Expected at most ${MAX_SCORES} --score options, got ${specs.length}`, { field: 'score' });
  const dir = new Map<string, Direction>();
  for (const raw of list(directions)) {
    const m = /^(.+)=(higher|lower)$/.exec(raw.trim());
    const names = specs.map((s) => s.label).join(', ') || 'none';
    if (!m) throw new BreError('USAGE', `Expected --score-direction NAME=higher or NAME=lower (higher/lower is better), got '${raw}'`, { field: 'score-direction' });
    const name = m[1].trim();
    if (!specs.some((s) => s.label === name)) {
      throw new BreError('USAGE', `Expected --score-direction to name a --score (${names}), got '${name}'`, { field: 'score-direction' });
    }
    dir.set(name, m[2] === 'lower' ? 'lower_is_better' : 'higher_is_better');
  }
  return specs.map((s) => ({ ...s, direction: dir.get(s.label) ?? 'higher_is_better' }));
}
