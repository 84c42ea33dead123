/**
 * `run`'s run-control options (src/cli/run-options/control.ts): --dry-run, --plan, --window-hours,
 * --stop-grace, --max-consecutive-failures, --max-failure-share, --failure-window.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CIRCUIT } from '../../../src/pipeline/circuit.js';
import { resolveExpectVersion } from '../../../src/cli/run-options/control.js';
import { refusal, resolveArgs } from './parse.js';

describe('--dry-run', () => {
  it('is off by default', () => {
    expect(resolveArgs([]).settings.dryRun).toBe(false);
    expect(resolveArgs(['--dry-run']).settings.dryRun).toBe(true);
  });
});

describe('--plan and --window-hours', () => {
  it('run by default; --plan says the plan instead', () => {
    expect(resolveArgs([]).plan).toBeUndefined();
    expect(resolveArgs(['--plan']).plan).toEqual({});
    expect(resolveArgs(['--plan', '--window-hours', '6']).plan).toEqual({ windowHours: 6 });
  });

  it.each(['0', 'six'])('refuse window %s with --plan, quoted as given', (given) => {
    expect(refusal(['--plan', '--window-hours', given])).toEqual({
      code: 'USAGE',
      message: `Expected --window-hours to be a number of hours above 0, got '${given}'`,
    });
  });
});

describe('--stop-grace', () => {
  it('defaults to 10 s; a bare number is seconds', () => {
    expect(resolveArgs([]).settings.stopGraceMs).toBe(10_000);
    expect(resolveArgs(['--stop-grace', '3']).settings.stopGraceMs).toBe(3000);
  });

  it('refuses what is no duration', () => {
    expect(refusal(['--stop-grace', 'later']).message).toMatch(/Expected --stop-grace to be a duration .*got 'later'/);
  });
});

describe('the circuit breaker: --max-consecutive-failures, --max-failure-share, --failure-window', () => {
  it("default to the circuit's", () => {
    expect(resolveArgs([]).settings.circuit).toEqual(DEFAULT_CIRCUIT);
  });

  it('take what is given; 0 and 1 mean never', () => {
    expect(
      resolveArgs(['--max-consecutive-failures', '0', '--max-failure-share', '1', '--failure-window', '50']).settings
        .circuit,
    ).toEqual({ consecutive: 0, share: 1, window: 50 });
  });

  it.each([
    ['--max-consecutive-failures', '-1', "Expected --max-consecutive-failures to be a whole number >= 0, got '-1'"],
    ['--max-consecutive-failures', 'x', "Expected --max-consecutive-failures to be a whole number >= 0, got 'x'"],
    [
      '--max-failure-share',
      '0',
      "Expected --max-failure-share to be a share above 0 and at most 1 (1 = never), got '0'",
    ],
    [
      '--max-failure-share',
      'half',
      "Expected --max-failure-share to be a share above 0 and at most 1 (1 = never), got 'half'",
    ],
    ['--failure-window', '0', "Expected --failure-window to be a whole number >= 1, got '0'"],
  ])('refuse %s %s, quoted as given', (flag, given, message) => {
    expect(refusal([`${flag}=${given}`])).toEqual({ code: 'USAGE', message });
  });
});

describe('--job and its options', () => {
  it('join no job by default', () => {
    expect(resolveArgs([]).settings.job).toBeUndefined();
  });

  it('take a name, with a --sink; this worker named by the context', () => {
    expect(resolveArgs(['--job', 'nightly', '--sink', 'postgres://app@db/risk']).settings.job).toEqual({
      name: 'nightly',
      worker: 'host-1-42',
      leaseMs: 60_000,
      heartbeatMs: 10_000,
      retryErrors: false,
    });
  });

  it('refuse what picks rows or no sink, and a heartbeat above a third of the lease', () => {
    expect(refusal(['--job', 'n']).message).toMatch(/^Expected --sink URL with --job/);
    expect(refusal(['--job', 'n', '--sink', 'postgres://app@db/risk', '--limit', '5']).message).toMatch(
      /^Expected no --limit with --job, got --limit 5/,
    );
    expect(
      refusal(['--job', 'n', '--sink', 'postgres://app@db/risk', '--job-lease', '30s', '--job-heartbeat', '11s'])
        .message,
    ).toMatch(/^Expected --job-heartbeat to be at most a third of --job-lease/);
    expect(refusal(['--job', 'n', '--sink', 'postgres://app@db/risk', '--job-chunk-rows', 'lots']).message).toBe(
      "Expected --job-chunk-rows to be a whole number from 1 to 1000000, got 'lots'",
    );
  });

  it("take --retry-errors as the job's, without --out", () => {
    const r = resolveArgs(['--job', 'n', '--sink', 'postgres://app@db/risk', '--retry-errors']);
    expect(r.settings.job?.retryErrors).toBe(true);
    expect(r.settings.retryErrors).toBe(false);
  });
});

describe('--expect-version', () => {
  it('none by default; WORKFLOW=VERSION, repeatable, the last of a workflow wins', () => {
    expect(resolveArgs([]).settings.expectVersion).toBeUndefined();
    expect(
      resolveArgs([
        '--expect-version',
        'location=v1',
        '--expect-version',
        'repeat=v3',
        '--expect-version',
        'location=v2',
      ]).settings.expectVersion,
    ).toEqual({ location: 'v2', repeat: 'v3' });
  });

  it('over the pipeline file expect_version, workflow by workflow', () => {
    expect(resolveExpectVersion(['location=v2'], { location: 'v1', bank: 'v1' })).toEqual({
      location: 'v2',
      bank: 'v1',
    });
    expect(resolveExpectVersion(undefined, { bank: 'v1' })).toEqual({ bank: 'v1' });
  });

  it.each(['v1', 'location', 'location=', '=v1', 'a=b=c', 'location=v 1'])('refuses %s, quoted as given', (given) => {
    expect(refusal(['--expect-version', given])).toEqual({
      code: 'USAGE',
      message: `Expected --expect-version WORKFLOW=VERSION (the two parts of workflow_<name>_<version>, e.g. location=v1), got '${given}'`,
    });
  });
});
