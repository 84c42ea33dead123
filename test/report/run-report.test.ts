/**
 * report.html of a run: its data gathered from the folder alone, what an older folder cannot show said in
 * words, and every text escaped. (The Chromium render is in run-report-render.process.test.ts.)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRunReport } from '../../src/report/data.js';
import { writeRunReport } from '../../src/report/write.js';
import { INJECTED, resumedRunFolder } from './fixtures.js';
import { tempDir } from '../helpers/temp.js';

describe('report.html', () => {
  it('gathers a resumed run: the funnel over every session, errors by code with a few examples, the stop and what is left', async () => {
    const dir = await resumedRunFolder(tempDir('bre-report-'));
    const d = await loadRunReport(dir);
    expect(d.missing).toEqual([]);
    expect(d.funnelSource).toBe('all sessions');
    expect(d.timeline!.sessions).toHaveLength(4);
    const decision = d.funnel.find((f) => f.stage === 'decision')!;
    expect(decision.kind).toBe('workflow');
    expect(decision.ran + decision.skipped + decision.failed).toBe(d.funnel.find((f) => f.stage === 'bureau')!.ran);
    expect(d.errors.map((e) => [e.code, e.count, e.examples.length])).toEqual([
      ['INVALID_ROW', 48, 3],
      ['SERVER_UNAVAILABLE', 1, 1],
      ['VALIDATION_FAILED', 1, 1],
    ]);
    expect(d.stopped).toEqual({ code: 'INTERRUPTED', message: 'interrupted by SIGTERM' });
    expect(d.remaining?.time).toBe('4 min');

    const { path } = await writeRunReport(dir);
    const html = readFileSync(path, 'utf8');
    expect(html).not.toContain(INJECTED);
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).not.toMatch(/<script|<link|@import|url\(http|src="http/i);
    // Three pauses, each marked with its length.
    expect(html.match(/paused 20 min 0 s/g)?.length).toBeGreaterThan(0);
    expect(html).toContain('paused 3 h 0 min');
    expect(html).toContain('paused 1 d 0 h');
  });

  it('an older folder (no time series, no summary) still reports and says what it cannot show', async () => {
    const dir = tempDir('bre-report-old-');
    writeFileSync(
      join(dir, 'manifest.json'),
      JSON.stringify({ pipeline: { name: 'location' }, input: { path: '/in.csv' }, shard: null }),
    );
    writeFileSync(
      join(dir, 'errors.ndjson'),
      `${JSON.stringify({ row: 1, code: 'INVALID_ROW', message: 'x', stage: null })}\n`,
    );
    const { path, missing } = await writeRunReport(dir);
    expect(missing).toHaveLength(2);
    expect(missing[0]).toMatch(/summary.json is missing/);
    expect(missing[1]).toMatch(/No time series in this folder .* cannot be shown/);
    const html = readFileSync(path, 'utf8');
    expect(html).toContain('No time series in this folder');
    expect(html).toContain('INVALID_ROW');
    expect(html).toContain('Run report: location');
  });
});
