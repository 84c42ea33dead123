/**
 * Errors a person can act on, read as they are printed and written, in-process: a personal field's value is
 * described by its kind the same way in every message and in the row's `input` (never quoted, never a bare
 * "[redacted]"), and a dry run's and a run's closing lines break the errors down by field and code, the run's
 * over every session of its folder.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { folderRoot } from '../../src/input/files-root.js';
import { ErrorGroups } from '../../src/output/error-groups.js';
import { formatSummary } from '../../src/output/summary-text.js';
import { runPipeline } from '../../src/pipeline/runner.js';
import type { RunSettings } from '../../src/pipeline/settings.js';
import { startSandbox, type Sandbox } from '@bre-batch/sandbox';
import { locationSettings } from '../helpers/run-settings.js';
import { tempDir } from '../helpers/temp.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, rate: { workflow: null, bureau: null, account: null } });
});
afterAll(async () => {
  await sandbox.close();
});

/** Rows 1-3 are bad latitudes (91, N/A, 19,076), row 4 a bad longitude, row 5 and 6 good, row 7 both bad. */
function input(dir: string): string {
  const path = join(dir, 'in.csv');
  writeFileSync(
    path,
    [
      'reference_id,user_id,lead_id,latitude,longitude',
      'A1,u1,l1,91,72.1',
      'A2,u2,l2,N/A,72.1',
      'A3,u3,l3,"19,076",72.1',
      'A4,u4,l4,19.07,abc',
      'A5,u5,l5,19.07,72.8',
      'A6,u6,l6,19.07,72.8',
      'A7,u7,l7,-95,-200',
      '',
    ].join('\n'),
  );
  return path;
}

function settings(inputPath: string, outDir: string, more: Partial<RunSettings> = {}): RunSettings {
  return locationSettings(sandbox, inputPath, outDir, {
    filesRoot: folderRoot(resolve(inputPath, '..'), false),
    ...more,
  });
}

interface ErrorLine {
  key: string;
  message: string;
  errors: { field: string; message: string }[];
  input: Record<string, unknown>;
}

const lines = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as ErrorLine);

const EXPECTED_LAT = 'latitude: Expected a number between -90 and 90, got';

describe('a dry run', () => {
  it('describes each bad latitude by its kind, in the message and in the row, and counts them by field and code', async () => {
    const dir = tempDir('bre-errsum-');
    const out = join(dir, 'out');
    const result = await runPipeline(settings(input(dir), out, { dryRun: true }));
    const byKey = new Map(lines(join(out, 'dry-run-errors.ndjson')).map((l) => [l.key, l]));
    expect(byKey.get('A1')!.message).toBe(`${EXPECTED_LAT} a number above 90`);
    expect(byKey.get('A2')!.message).toBe(`${EXPECTED_LAT} text of 3 characters`);
    expect(byKey.get('A3')!.message).toBe(`${EXPECTED_LAT} a number with a decimal comma: see --decimal-comma`);
    expect(byKey.get('A4')!.message).toBe(
      'longitude: Expected a number between -180 and 180, got text of 3 characters',
    );
    // The row's input shows what cannot be rounded to about 1 km by the same words, never a bare [redacted].
    expect(byKey.get('A2')!.input.latitude).toBe('[text of 3 characters]');
    expect(byKey.get('A3')!.input.latitude).toBe('[a number with a decimal comma]');
    expect(JSON.stringify([...byKey.values()])).not.toMatch(/N\/A|19,076|'91'|redacted/);
    expect(byKey.get('A7')!.errors.map((e) => e.message)).toEqual([
      `${EXPECTED_LAT} a number below -90`,
      'longitude: Expected a number between -180 and 180, got a number below -180',
    ]);

    expect(result.summary.errors_by_field).toEqual([
      { field: 'latitude', stage: null, code: 'INVALID_ROW', rows: 4 },
      { field: 'longitude', stage: null, code: 'INVALID_ROW', rows: 2 },
    ]);
    const text = formatSummary(result.summary).split('\n');
    expect(text[1]).toMatch(/^ {2}rows: 7 read, 2 valid, 5 would fail \(see .*dry-run-errors\.ndjson\)$/);
    expect(text[2]).toBe('  would fail, by field and code: latitude INVALID_ROW 4, longitude INVALID_ROW 2');
  });
});

describe('a run', () => {
  it('counts the errors of every session of its folder by field and code', async () => {
    const dir = tempDir('bre-errsum-');
    const out = join(dir, 'out');
    const path = input(dir);
    const first = await runPipeline(settings(path, out, { limit: 2 }));
    expect(first.summary.errors_by_field).toEqual([{ field: 'latitude', stage: null, code: 'INVALID_ROW', rows: 2 }]);
    const second = await runPipeline(settings(path, out));
    expect(second.summary.rows).toMatchObject({ succeeded: 2, failed: 5, failed_this_session: 3 });
    expect(second.summary.errors_by_field).toEqual([
      { field: 'latitude', stage: null, code: 'INVALID_ROW', rows: 4 },
      { field: 'longitude', stage: null, code: 'INVALID_ROW', rows: 2 },
    ]);
    expect(formatSummary(second.summary).split('\n').slice(1, 3)).toEqual([
      '  rows: 2 succeeded, 5 in errors, 2 already done before (resumed)',
      '  errors, by field and code: latitude INVALID_ROW 4, longitude INVALID_ROW 2',
    ]);
    const errors = lines(join(out, 'errors.ndjson'));
    expect(errors.find((l) => l.key === 'A2')!.message).toBe(`${EXPECTED_LAT} text of 3 characters`);
  });

  it('--keep-personal-data quotes each value as given', async () => {
    const dir = tempDir('bre-errsum-');
    const out = join(dir, 'out');
    await runPipeline(settings(input(dir), out, { keepPersonalData: true }));
    const byKey = new Map(lines(join(out, 'errors.ndjson')).map((l) => [l.key, l]));
    expect(byKey.get('A1')!.message).toBe(`${EXPECTED_LAT} '91'`);
    expect(byKey.get('A3')!.message).toBe(
      `${EXPECTED_LAT} '19,076', a number with a decimal comma: see --decimal-comma`,
    );
    expect(byKey.get('A3')!.input.latitude).toBe('19,076');
  });
});

describe('ErrorGroups', () => {
  it('a failed call counts by stage, each bad field of a row by field; most rows first, then by name', () => {
    const g = new ErrorGroups();
    g.add({ stage: 'location', code: 'UPSTREAM_5XX', status: 503 });
    g.add({ stage: 'location', code: 'INVALID_ROW', field: 'b', errors: [{ field: 'b' }, { field: 'a' }] });
    g.add({ stage: null, code: 'MALFORMED_ROW', field: '(row)' });
    g.add({ stage: 'location', code: 'UPSTREAM_5XX', status: 502 });
    expect(g.result()).toEqual([
      { field: null, stage: 'location', code: 'UPSTREAM_5XX', rows: 2 },
      { field: '(row)', stage: null, code: 'MALFORMED_ROW', rows: 1 },
      { field: 'a', stage: null, code: 'INVALID_ROW', rows: 1 },
      { field: 'b', stage: null, code: 'INVALID_ROW', rows: 1 },
    ]);
  });
});
