/** "Did you mean": the nearest of a few known names to a misspelt one, for commands, options and pipelines. */

/** Edits (insert, delete, replace, swap two neighbours) from one word to the other. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j += 1) d[0][j] = j;
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/**
 * The known name nearest to `given`, when it is near enough to be a slip (a third of its letters at most,
 * and at least one edit allowed); undefined otherwise, or when two are equally near.
 */
export function nearest(given: string, known: readonly string[]): string | undefined {
  const allowed = Math.max(1, Math.floor(given.length / 3));
  let best: string | undefined;
  let bestDistance = Infinity;
  let tied = false;
  for (const k of known) {
    const dist = editDistance(given.toLowerCase(), k.toLowerCase());
    if (dist < bestDistance) {
      best = k;
      bestDistance = dist;
      tied = false;
    } else if (dist === bestDistance && k !== best) tied = true;
  }
  return bestDistance <= allowed && !tied ? best : undefined;
}
