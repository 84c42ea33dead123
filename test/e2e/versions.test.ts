/**
 * Strategy versions watched: the sandbox switches location_bre from v1 to v2 at a third of a run. Without an
 * expectation the run finishes, and its summary, closing lines, time series and report show both versions with
 * their counts and the moment of change; with --expect-version location=v1 it stops (exit 3) with no v2 row
 * written, and the resume with location=v2 finishes every row once.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runArgs, spawnCli } from '../helpers/cli.js';
import { invariantProblems, locationCsv, readOutput } from '../helpers/output.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { runCompare } from '@bre-batch/backtest';

const ROWS = 300;
const SWITCH_AT = 101;

type Summary = {
  versions: Record<
    string,
    {
      by_version: Record<string, { rows: number; workflow: string; decisions: Record<string, number> }>;
      first_answers: { version: string; row: number; at: string; session: number }[];
      mixed: boolean;
    }
  >;
  rows: Record<string, number>;
  expect_version?: { expected: Record<string, string>; answers_checked: number; unexpected_not_written: number };
  stopped: { code: string } | null;
};

const versionsOf = (out: string) =>
  readOutput(out).results.map(
    (l) => (l.stages as Record<string, { workflow_version: string }>).location.workflow_version,
  );

describe('strategy versions', () => {
  let sb: TestSandbox;
  let dir: string;
  let input: string;
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: null } });
    dir = tempDir();
    input = locationCsv(dir, ROWS);
  });
  afterAll(async () => {
    await sb?.close();
  });
  const switchAtAThird = () =>
    sb.sandbox.setVersionSwitches([{ endpoint: 'location_bre', to: 'v2', atCall: SWITCH_AT }]);

  it('a run across the switch: both versions counted, the change marked once', async () => {
    switchAtAThird();
    const out = join(dir, 'mixed');
    const r = await spawnCli(runArgs('location', input, out, '--concurrency', '1', '--rate', 'workflow=off'), sb.env());
    expect(r.code, r.stderr).toBe(0);
    const folder = readOutput(out);
    expect(invariantProblems(ROWS, folder)).toEqual([]);
    const s = folder.summary as unknown as Summary;
    const v = s.versions.location;
    expect(v.mixed).toBe(true);
    expect(v.by_version.v1.rows).toBe(SWITCH_AT - 1);
    expect(v.by_version.v2.rows).toBe(ROWS - SWITCH_AT + 1);
    expect(v.by_version.v2.workflow).toBe('location');
    const sum = (d: Record<string, number>) => Object.values(d).reduce((a, b) => a + b, 0);
    expect(sum(v.by_version.v1.decisions) + sum(v.by_version.v2.decisions)).toBe(ROWS);
    expect(v.first_answers.map((f) => [f.version, f.row])).toEqual([
      ['v1', 1],
      ['v2', SWITCH_AT],
    ]);
    // Logged once, when v2 first answered; the closing lines say the results mix versions.
    expect(r.stderr.match(/answered with a new version/g)).toHaveLength(1);
    expect(r.stderr).toMatch(/new version, location v2 \(row 101; v1 before\)/);
    expect(r.stdout + r.stderr).toMatch(/versions \(stage location\): MIXED, v1 100 rows, v2 200 rows/);
    const timeline = readFileSync(join(out, '.state', 'timeline.ndjson'), 'utf8');
    expect(timeline.match(/"kind":"version"/g)).toHaveLength(2);
    const report = readFileSync(join(out, 'report.html'), 'utf8');
    expect(report).toContain('Strategy versions');
    expect(report).toMatch(/v2 first answered/);
  });

  it('--expect-version location=v1 stops at the first v2 answer, writing none; the resume with v2 finishes each row once', async () => {
    switchAtAThird();
    const out = join(dir, 'expect');
    const args = runArgs('location', input, out, '--concurrency', '4', '--rate', 'workflow=off');
    const first = await spawnCli([...args, '--expect-version', 'location=v1'], sb.env());
    expect(first.code, first.stderr).toBe(3);
    expect(first.stderr).toMatch(/VERSION_UNEXPECTED|--expect-version location=v1 expects another/);
    const stopped = readOutput(out);
    expect(versionsOf(out).filter((x) => x !== 'v1')).toEqual([]);
    expect(stopped.results.length).toBe(SWITCH_AT - 1);
    const s1 = stopped.summary as unknown as Summary;
    expect(s1.stopped?.code).toBe('VERSION_UNEXPECTED');
    expect(s1.rows.unexpected_version_not_written).toBeGreaterThanOrEqual(1);
    expect(s1.expect_version).toMatchObject({
      expected: { location: 'v1' },
      unexpected_not_written: s1.rows.unexpected_version_not_written,
    });
    expect(s1.versions.location.first_answers.map((f) => f.version)).toEqual(['v1', 'v2']);

    // The same expectation again stops again at once; the changed one resumes.
    const resumed = await spawnCli([...args, '--expect-version', 'location=v2'], sb.env());
    expect(resumed.code, resumed.stderr).toBe(0);
    const folder = readOutput(out);
    expect(invariantProblems(ROWS, folder)).toEqual([]);
    const versions = versionsOf(out);
    expect(versions.filter((x) => x === 'v1')).toHaveLength(SWITCH_AT - 1);
    expect(versions.filter((x) => x === 'v2')).toHaveLength(ROWS - SWITCH_AT + 1);
    const s2 = folder.summary as unknown as Summary;
    expect(s2.rows.resumed).toBe(SWITCH_AT - 1);
    // The change was news in the first session only.
    expect(resumed.stderr).not.toMatch(/answered with a new version/);
    expect(s2.versions.location.first_answers.map((f) => [f.version, f.session])).toEqual([
      ['v1', 1],
      ['v2', 1],
    ]);
    // A resumed folder verifies: both sessions recorded, the first ended with exit 3.
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'));
    expect(manifest.sessions.map((x: { exit_code: number }) => x.exit_code)).toEqual([3, 0]);
    expect(manifest.sessions[1].options.expect_version).toEqual({ location: 'v2' });
    const verified = await spawnCli(['verify', out], {});
    expect(verified.code, verified.stdout).toBe(0);
  });

  it('compare says when a side mixes versions, and --by-version breaks the figures down by them', async () => {
    const mixed = join(dir, 'mixed');
    const resumed = join(dir, 'expect');
    const { report } = await runCompare({ outA: mixed, outB: resumed, out: join(dir, 'cmp'), byVersion: true });
    const c = report.comparisons[0];
    expect(c.versions).toMatchObject({
      a: { v1: 100, v2: 200 },
      b: { v1: 100, v2: 200 },
      a_mixed: true,
      b_mixed: true,
      differ: false,
    });
    expect(c.versions?.notes[0]).toBe(
      'side A mixes strategy versions: v1 (100 keys), v2 (200 keys); its figures blend them',
    );
    // Keys decided by v1 on one side and v2 on the other (calls arriving out of row order) are a segment of their own.
    const segments = new Map(c.segments?.map((x) => [x.segment, x.approval.n]));
    expect([...segments.values()].reduce((a, b) => a + b, 0)).toBe(ROWS);
    expect(segments.get('v1')).toBeGreaterThan(90);
    expect(segments.get('v2')).toBeGreaterThan(190);
    const html = readFileSync(join(dir, 'cmp', 'report.html'), 'utf8');
    expect(html).toContain('<b>Strategy versions</b>: side A mixes strategy versions');
    expect(html).toContain("Segments by strategy version (A's → B's)");
    await expect(runCompare({ outA: mixed, outB: resumed, by: 'state', byVersion: true })).rejects.toThrow(
      'Expected --by or --by-version, not both',
    );
  });
});
