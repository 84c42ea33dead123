/** Waiting in tests: for a condition, never for a guessed time. */

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * Polls `cond` every 25 ms until it holds; throws after `timeoutMs`, naming `what`. The time-out only keeps
 * a broken build from hanging the run: it is never what a test asserts.
 */
export async function waitFor(
  cond: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what = 'condition',
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(25);
  }
}
