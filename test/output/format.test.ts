/**
 * The output folder format (src/output/format): what a run writes matches the schemas, the hand-written
 * line guards the readers use agree with the schemas, and the readers say why a file is refused.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  errorLineSchema,
  FILES,
  isErrorLine,
  isResultLine,
  manifestSchema,
  readManifest,
  readRunSummary,
  resultLineSchema,
  runSummarySchema,
} from '@bre-batch/formats';
import { runPipeline } from '../../src/pipeline/runner.js';
import { startSandbox, type Sandbox } from '@bre-batch/sandbox';
import { perService } from '@bre-batch/core/types';
import { locationSettings } from '../helpers/run-settings.js';
import { tempDir } from '../helpers/temp.js';

const lines = (path: string): unknown[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as unknown);

describe('a run writes the format', () => {
  let sandbox: Sandbox;
  let out: string;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, rate: perService(() => null) });
    out = tempDir('bre-format-');
    const dir = tempDir('bre-format-in-');
    const input = join(dir, 'in.csv');
    // Row 3's latitude is out of range: an errors.ndjson line.
    writeFileSync(
      input,
      'reference_id,user_id,lead_id,latitude,longitude\nR1,u1,l1,19.07,72.87\nR2,u2,l2,28.61,77.2\nR3,u3,l3,95,77.2\n',
    );
    await runPipeline(
      locationSettings(sandbox, input, out, {
        concurrency: perService(() => 2),
        outputFormats: new Set(['csv', 'parquet']),
      }),
    );
  });
  afterAll(async () => {
    await sandbox.close();
  });

  it('manifest.json, summary.json and every journal line parse with their schemas', () => {
    expect(manifestSchema.safeParse(JSON.parse(readFileSync(join(out, FILES.manifest), 'utf8'))).success).toBe(true);
    expect(
      runSummarySchema.safeParse(JSON.parse(readFileSync(join(out, FILES.summary), 'utf8'))).error,
    ).toBeUndefined();
    const results = lines(join(out, FILES.results));
    const errors = lines(join(out, FILES.errors));
    expect([results.length, errors.length]).toEqual([2, 1]);
    for (const l of results) expect(resultLineSchema.safeParse(l).error).toBeUndefined();
    for (const l of errors) expect(errorLineSchema.safeParse(l).error).toBeUndefined();
  });

  it('the readers return them typed', () => {
    expect(readManifest(out)?.key).toBe('reference_id');
    const summary = readRunSummary(out);
    expect(summary.state === 'ok' && summary.value.rows).toMatchObject({ succeeded: 2, failed: 1, read: 3 });
  });
});

describe('the line guards agree with the schemas', () => {
  it.each([
    [{ row: 1, key: 'K', stages: { s: { decision: 'Approve' } } }],
    [{ row: 1, key: null, stages: {} }],
    [{ row: 1, key: 'K', stages: { s: { skipped: true } } }],
    [{ row: 0, key: 'K', stages: {} }],
    [{ row: 1.5, key: 'K', stages: {} }],
    [{ row: 1, key: 7, stages: {} }],
    [{ row: 1, key: 'K', stages: { s: 'not an object' } }],
    [{ row: 1, key: 'K', stages: [] }],
    [{ key: 'K', stages: {} }],
    [null],
  ])('result line %j', (line) => {
    expect(isResultLine(line)).toBe(resultLineSchema.safeParse(line).success);
  });

  const error = {
    row: 2,
    line: 3,
    key: 'K',
    stage: 's',
    status: 422,
    code: 'VALIDATION_FAILED',
    message: 'm',
    attempts: 1,
    input: { a: 1 },
  };
  it.each([
    [error, true],
    [{ ...error, key: null, input: null }, true],
    [{ ...error, row: -1 }, false],
    [{ ...error, code: 5 }, false],
    [{ ...error, key: 3 }, false],
  ])('error line %j: %s', (line, ok) => {
    expect(errorLineSchema.safeParse(line).success).toBe(ok);
    // The guard checks only what its readers read (row, key, code): it never accepts what the schema refuses there.
    expect(isErrorLine(line)).toBe(ok);
  });
});

describe('the readers say why a file is refused', () => {
  it('a damaged manifest is OUTPUT_MISMATCH naming the field; a missing one is undefined', () => {
    const dir = tempDir('bre-format-');
    expect(readManifest(dir)).toBeUndefined();
    writeFileSync(join(dir, FILES.manifest), JSON.stringify({ version: 1, tool: 'bre-batch' }));
    expect(() => readManifest(dir)).toThrow(/manifest\.json is not a bre-batch manifest \(pipeline: .*\)/);
  });

  it('a summary.json without a field the merge reads is invalid, with the field named', () => {
    const dir = tempDir('bre-format-');
    writeFileSync(join(dir, FILES.summary), JSON.stringify({ pipeline: 'p', rows: {} }));
    const read = readRunSummary(dir);
    expect(read.state).toBe('invalid');
    expect(read.state === 'invalid' && read.problem).toMatch(/^(input|out|dry_run|finished|stopped|shard|rows\.\w+)/);
  });
});
