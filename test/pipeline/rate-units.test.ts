/**
 * The achieved rate and the limit beside it are told in one unit, calls a minute, whatever unit --rate used:
 * the progress bar's `workflow 1194.7/min of 1200/min` (not `of 20/s`), the closing lines and report.html.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { limitPerMinute } from '@bre-batch/core/rates';
import { CallStats } from '../../src/metrics/service-stats.js';
import type { RunSummary } from '@bre-batch/formats';
import { formatSummary } from '../../src/output/summary-text.js';
import { ratesText } from '../../src/pipeline/progress.js';
import { loadRunReport } from '../../src/report/data.js';
import { perService } from '@bre-batch/core/types';
import { tempDir } from '../helpers/temp.js';

/** 20 attempts a second for 10 s, less a little: 1194.7 a minute as the limiter measures it. */
function workflowStats() {
  const stats = perService(() => new CallStats());
  for (let i = 0; i < 200; i += 1) stats.workflow.recordAttempt(1000 + i * 50.22, 10, 200);
  return stats;
}

describe('rates in one unit', () => {
  it('the progress bar: the limit a minute beside the achieved rate a minute', () => {
    const text = ratesText(workflowStats(), {
      workflow: { limit: 20, windowMs: 1000 },
      bureau: null,
      account: null,
    });
    expect(text).toBe('workflow 1194.7/min of 1200/min');
    expect(
      ratesText(
        perService(() => new CallStats()),
        perService(() => null),
      ),
    ).toBe('starting');
  });

  it('limitPerMinute: a second turned into a minute; a minute and off as they are', () => {
    expect(limitPerMinute('20/s')).toBe('1200/min');
    expect(limitPerMinute('0.5/s')).toBe('30/min');
    expect(limitPerMinute('500/min')).toBe('500/min');
    expect(limitPerMinute('off')).toBe('off');
  });

  const summary = {
    pipeline: 'location',
    input: 'in.csv',
    out: 'out',
    dry_run: false,
    finished: true,
    stopped: null,
    shard: null,
    rows: { succeeded: 200, failed: 0, read: 200, resumed: 0 },
    seconds: 10,
    services: {
      workflow: {
        rate_limit: '20/s',
        attempts: 200,
        retries: 0,
        throttled_429: 0,
        achieved_per_minute: 1194.7,
        latency_ms: { p50: 9, p95: 10, p99: 10 },
      },
    },
    decisions: {},
  } as unknown as RunSummary;

  it('the closing lines: the limit a minute, --rate as given beside it', () => {
    expect(formatSummary(summary)).toContain(
      '  workflow: 200 calls, 0 retries, 0 x 429, achieved 1194.7/min (limit 1200/min, --rate 20/s), p95 10 ms',
    );
  });

  it("report.html's services table: the limit a minute", async () => {
    const dir = tempDir('bre-rate-units-');
    writeFileSync(join(dir, 'summary.json'), JSON.stringify(summary));
    const data = await loadRunReport(dir);
    expect(data.services.map((s) => [s.service, s.achievedPerMinute, s.limit])).toEqual([
      ['workflow', 1194.7, '1200/min'],
    ]);
  });
});
