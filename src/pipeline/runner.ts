/**
 * A run, as a story: open (the input's first rows, the output folder and its lock, the limiters and the
 * client), feed (rows into a bounded window of rows in flight, each running its stages), drain (wait for
 * the rows in flight, then let go of the services), finish (results.csv, transactions.csv, summary.json).
 * Whatever step throws, `close` gives back what is held, in reverse order of its acquisition (./run.ts).
 *
 * Since many rows are in flight at once, the stages overlap across rows (row 1 in its workflow call while
 * rows 2..n are in their bureau calls), so a pipeline takes about as long as its slowest stage. Every call
 * goes through the service's limiter (src/http/chain.ts), which is what keeps the run at the per-IP limit;
 * the window only has to be wide enough to keep every limiter busy.
 */
import { feed } from './feed.js';
import { finish, type RunResult } from './finish.js';
import { Run, type RunHooks } from './run.js';
import type { RunSettings } from './settings.js';

export type { RunHooks } from './run.js';
export type { RunResult } from './finish.js';

export async function runPipeline(s: RunSettings, hooks: RunHooks = {}): Promise<RunResult> {
  // Gives back what it acquired itself if it fails half-way.
  const run = await Run.open(s, hooks);
  let result: RunResult;
  try {
    await feed(run);
    await drain(run);
    result = await finish(run);
  } catch (err) {
    // A stop that ends without the end files (a full disk: ./finish.ts) is a stopped run, not a failed one.
    // The failure thrown is the one told; a failure to give something back after it goes to the log.
    await run.close(err === run.stopped ? 'stopped' : 'failed', true);
    throw err;
  }
  await run.close(result.stopped ? 'stopped' : 'finished');
  return result;
}

/** Every row in flight has its line in results or errors; the services are not needed any more. */
async function drain(run: Run): Promise<void> {
  await run.window.drained();
  await run.letGoOfServices();
}
