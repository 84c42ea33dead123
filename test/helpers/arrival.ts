/** Row orders as a run's answers might finish them, for the tests of the results files' row order. */

/** `rows` in the order answers might finish: each row late by up to `jitter` places (seeded, repeatable). */
export function arrival(rows: readonly number[], jitter: number, seed = 1): number[] {
  let s = seed;
  const rnd = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
  return rows
    .map((r, i) => ({ r, at: i + rnd() * jitter }))
    .sort((a, b) => a.at - b.at)
    .map((x) => x.r);
}
