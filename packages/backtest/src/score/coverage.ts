/**
 * How far a bad rate can be trusted when some outcomes are unknown. Applicants the champion rejected were
 * never lent to, so their outcome is usually unknown (the reject-inference problem), and recent applications
 * have not had time to go bad. Whatever the unknown outcomes are, the set's true bad rate lies between the
 * rate if every unknown were good and the rate if every unknown were bad.
 */

export interface Coverage {
  /** Keys with a known outcome / keys in the set; null for an empty set. */
  readonly coverage: number | null;
  readonly unknown: number;
  /** bad / rows (every unknown good) and (bad + unknown) / rows (every unknown bad). */
  readonly bad_rate_best: number | null;
  readonly bad_rate_worst: number | null;
}

export function coverage(rows: number, known: number, bad: number): Coverage {
  const unknown = rows - known;
  if (rows <= 0) return { coverage: null, unknown: 0, bad_rate_best: null, bad_rate_worst: null };
  return { coverage: known / rows, unknown, bad_rate_best: bad / rows, bad_rate_worst: (bad + unknown) / rows };
}

/** Below this share of known outcomes a bad rate gets a warning in the report. */
export const LOW_COVERAGE = 0.8;
