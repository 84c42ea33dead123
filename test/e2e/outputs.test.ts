/**
 * The outputs of a run as a user meets them (issue 13): the CLI against a sandbox writes results.parquet,
 * errors.parquet and report.html next to the CSV and says so; the Parquet file holds what results.ndjson
 * holds (read back with parquet-wasm, not the writer's library); --metrics-file writes a file a real exposition parser reads, and a path
 * that cannot be written is exit 2 before any call; --log-format json writes only JSON lines on stderr.
 * The runs whose folder and summary are the point run the CLI's code in this process (runInProcess: the same
 * options, resolution and executeRun, without a CLI's start-up each); `report` and the JSON log lines (written
 * to fd 2 directly) are the spawned CLI's.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectMatchesJournal, readParquet } from '../output/parquet-reader.js';
import { ROOT, runArgs, spawnCli } from '../helpers/cli.js';
import { runInProcess } from '../helpers/cli-in-process.js';
import { locationCsv } from '../helpers/output.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

type Family = { name: string; metrics: { value: string; labels?: Record<string, string> }[] };
const metric = (text: string, name: string, labels: Record<string, string> = {}) =>
  (parsePrometheusTextFormat(text) as Family[])
    .find((f) => f.name === name)
    ?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))?.value;

describe('run outputs', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: null, bureau: null } });
  });
  afterAll(async () => {
    await sb?.close();
  });

  it('the sample rescore run writes results.parquet, errors.parquet and report.html, and names them', async () => {
    const dir = tempDir();
    const out = join(dir, 'out');
    const run = await runInProcess(
      runArgs('rescore', join(ROOT, 'samples', 'rescore.csv'), out, '--rate', 'off'),
      sb.env(),
    );
    expect(run.code, run.stderr).toBe(0);
    for (const f of ['results.csv', 'results.parquet', 'errors.parquet', 'report.html'])
      expect(existsSync(join(out, f)), f).toBe(true);
    // The journals as the folder holds them: results.ndjson gzip'ed at the end, the empty errors.ndjson left.
    expect(run.stdout).toContain(
      'files: results.ndjson.gz, errors.ndjson, results.csv, results.parquet, errors.parquet',
    );
    expect(run.stdout).toContain(`report: ${join(out, 'report.html')}`);
    const header = readFileSync(join(out, 'results.csv'), 'utf8').split('\n')[0].split(',');
    await expectMatchesJournal(join(out, 'results.parquet'), join(out, 'results.ndjson'), header);
    const t = await readParquet(join(out, 'results.parquet'));
    const typeOf = Object.fromEntries(t.columns.map((c, i) => [c, t.types[i]]));
    expect(typeOf['decision.decision']).toBe('Utf8');
    expect(typeOf['decision.offers_count']).toBe('Int64');
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    expect(summary.files).toEqual(['results.csv', 'results.parquet', 'errors.parquet']);
    expect(summary.end_of_run.files_seconds).toBeGreaterThanOrEqual(0);
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toContain('Run report: rescore');
    expect(html).toContain('Decisions per workflow stage');

    // `report` rebuilds the page from the folder alone.
    writeFileSync(join(out, 'report.html'), '');
    const again = await spawnCli(['report', out], {});
    expect(again.code, again.stderr).toBe(0);
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('Run report: rescore');
    const notAFolder = await spawnCli(['report', join(dir, 'nothing-here')], {});
    expect(notAFolder.code).toBe(2);
    expect(notAFolder.stderr).toMatch(/Expected an output folder/);
  });

  it('--output-formats csv writes no Parquet; a wrong format is exit 2', async () => {
    const dir = tempDir();
    const input = locationCsv(dir, 5);
    const out = join(dir, 'out');
    const run = await runInProcess(
      runArgs('location', input, out, '--rate', 'off', '--output-formats', 'csv'),
      sb.env(),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(out, 'results.csv'))).toBe(true);
    expect(existsSync(join(out, 'results.parquet'))).toBe(false);
    const bad = await runInProcess(
      runArgs('location', input, join(dir, 'bad'), '--output-formats', 'csv,xls'),
      sb.env(),
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("Expected --output-formats to list csv and/or parquet (comma-separated), got 'xls'");
  });

  it('--metrics-file: a path that cannot be written is exit 2 before any call; a good one ends finished with the counts', async () => {
    const dir = tempDir();
    const input = locationCsv(dir, 12);
    const before = sb.sandbox.stats().services.workflow.requests;
    const bad = await runInProcess(
      runArgs('location', input, join(dir, 'bad'), '--metrics-file', join(dir, 'no', 'such', 'x.prom')),
      sb.env(),
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/cannot write --metrics-file .*Expected an existing folder/);
    expect(sb.sandbox.stats().services.workflow.requests).toBe(before);
    expect(existsSync(join(dir, 'bad'))).toBe(false);

    const file = join(dir, 'bre_batch.prom');
    const run = await runInProcess(
      runArgs('location', input, join(dir, 'out'), '--rate', 'off', '--metrics-file', file),
      sb.env(),
    );
    expect(run.code, run.stderr).toBe(0);
    const text = readFileSync(file, 'utf8');
    expect(metric(text, 'bre_batch_run_state', { state: 'finished', pipeline: 'location' })).toBe('1');
    expect(metric(text, 'bre_batch_rows_total', { outcome: 'succeeded' })).toBe('12');
    expect(metric(text, 'bre_batch_calls_total', { service: 'workflow' })).toBe('12');
    expect(Number(metric(text, 'bre_batch_last_success_timestamp_seconds'))).toBeGreaterThan(0);
    expect(metric(text, 'bre_batch_rows_done')).toBe('12');
  });

  it('--log-format json: every stderr line is one JSON object (time, level, message, code, service); the token never in it', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'in.csv'), 'reference_id,user_id,lead_id,latitude,longitude\nLOC-1,u1,l1,19.07,72.87\n');
    const wrong = 'tokJSONLOG0123456789abcdef';
    // A refused token stops the run: the stop is logged as an error with its code and service.
    const run = await spawnCli(
      runArgs('location', join(dir, 'in.csv'), join(dir, 'out'), '--log-format', 'json'),
      sb.env(undefined, { BRE_AUTH_TOKEN: wrong }),
    );
    expect(run.code).toBe(3);
    const lines = run.stderr.split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(0);
    const objects = lines.map((l) => JSON.parse(l));
    for (const o of objects) {
      expect(typeof o.time).toBe('string');
      expect(['info', 'warn', 'error']).toContain(o.level);
      expect(typeof o.message).toBe('string');
    }
    expect(objects).toContainEqual(
      expect.objectContaining({ level: 'error', code: 'AUTH_REFUSED', service: 'workflow', status: 401 }),
    );
    expect(run.stderr + run.stdout).not.toContain(wrong);
    expect(run.stderr + run.stdout).not.toContain(sb.token);
    const usage = await spawnCli(
      runArgs('nope', join(dir, 'in.csv'), join(dir, 'out2'), '--log-format', 'json'),
      sb.env(),
    );
    expect(usage.code).toBe(2);
    const last = JSON.parse(usage.stderr.trim().split('\n').at(-1)!);
    expect(last).toMatchObject({ level: 'error', code: expect.any(String) });
    expect(last.message).toMatch(/^bre-batch: /);
    // An option yargs does not know is a JSON line too.
    const unknown = await spawnCli(
      ['run', 'location', '--input', join(dir, 'in.csv'), '--bogus', '--log-format', 'json'],
      {},
    );
    expect(unknown.code).toBe(2);
    expect(JSON.parse(unknown.stderr.trim())).toMatchObject({
      level: 'error',
      code: 'USAGE',
      message: expect.stringMatching(/Unknown argument/),
    });
  });
});
