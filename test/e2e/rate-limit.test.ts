/**
 * A configured rate against a sandbox enforcing the same rate with its strict sliding window (issue 16): the
 * limiter's pacing and its log of calls (each at its answer) keep every window under the limit, so the
 * sandbox refuses nothing. Behaviour only, no clock: what reached the sandbox, not how fast. The sandbox runs
 * in this test's process, which the rest of the suite can stall for longer than the default path bound: with
 * --rate-slack 2s only an answer bounds a call, so a stall cannot decide the outcome; the default's
 * figures are the benchmark's (`npm run bench -- --only sweep`).
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadRunSummary } from '@bre-batch/formats';
import { runArgs, spawnCli } from '../helpers/cli.js';
import { invariantProblems, locationCsv, readOutput } from '../helpers/output.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

describe('a configured rate against the same limit on the server', () => {
  let sb: TestSandbox | undefined;
  afterEach(async () => {
    await sb?.close();
    sb = undefined;
  });

  it.each([
    ['40/s', 40, 200],
    ['2000/s (more starts a second than timers: many per wake-up)', 2000, 4000],
  ])('%s: every row done, no 429, never more than the limit in any window', async (_name, perSecond, rows) => {
    sb = await startTestSandbox({ rate: { workflow: { limit: perSecond, windowMs: 1000 } } });
    const dir = tempDir();
    const input = locationCsv(dir, rows);
    const out = join(dir, 'out');
    const r = await spawnCli(
      runArgs('location', input, out, '--rate', `workflow=${perSecond}/s`, '--rate-slack', '2s'),
      sb.env(),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(invariantProblems(rows, readOutput(out))).toEqual([]);
    const st = sb.sandbox.stats().services.workflow;
    expect(st.throttled).toBe(0);
    expect(st.admitted).toBe(rows);
    expect(st.maxInWindow).toBeLessThanOrEqual(perSecond);
    // the tightest limit+1 calls the sandbox saw spanned more than its window: room was left
    expect(st.tightestSpanMs).toBeGreaterThan(1000);
    const summary = loadRunSummary(out);
    expect(summary.services.workflow?.throttled_429).toBe(0);
    expect(summary.services.workflow?.attempts).toBe(rows);
  });
});
