/**
 * A night anyone can verify: manifest.json records the tool, the run's id, the options (never a secret), each
 * session and, at each end, every output file's size and sha256; every row carries the run's id and the session
 * that wrote it; `bre-batch verify` exits 0 on a finished (compacted) folder, a resumed one and a merged one, and
 * 1 naming what changed after one byte of results.csv is edited, a results line deleted, a row's session changed
 * or the input changed. The runs whose folder is the point are the CLI's code in this process (runInProcess);
 * the stopped run, merge and verify are spawned CLIs.
 */
import { appendFileSync, copyFileSync, cpSync, readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { runArgs, spawnCli, startCli, waitForLines } from '../helpers/cli.js';
import { runInProcess } from '../helpers/cli-in-process.js';
import { invariantProblems, locationCsv, readOutput } from '../helpers/output.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { verifyFolder } from '../../src/output/verify.js';

const ROWS = 60;

describe('manifest.json and verify', () => {
  let sb: TestSandbox;
  let dir: string;
  let input: string;
  let out: string;
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: null } });
    dir = tempDir();
    input = locationCsv(dir, ROWS);
    out = join(dir, 'night');
    const r = await runInProcess(runArgs('location', input, out, '--rate', 'workflow=off'), sb.env());
    expect(r.code, r.stderr).toBe(0);
  });
  afterAll(async () => {
    await sb?.close();
  });

  it('records the tool, the run id, the options without the token, the session and the output files', () => {
    const text = readFileSync(join(out, 'manifest.json'), 'utf8');
    expect(text).not.toContain(sb.token);
    const m = JSON.parse(text);
    expect(m.tool_version).toMatch(/^\d+\.\d+\.\d+/);
    expect(m.run_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(m.pipeline.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(m.sessions).toHaveLength(1);
    const [s] = m.sessions;
    expect(s).toMatchObject({
      session: 1,
      pid: expect.any(Number),
      rows: ROWS,
      exit_code: 0,
      tool_version: m.tool_version,
    });
    expect(s.host).not.toBe('');
    expect(s.options).toMatchObject({ rate: { workflow: 'off' }, keep_personal_data: false, limit: null });
    // compacted at the end: the journals are recorded by the names they have on disk
    expect(Object.keys(m.outputs.files).sort()).toEqual(
      ['errors.ndjson', 'errors.parquet', 'results.csv', 'results.ndjson.gz', 'results.parquet', 'summary.json'].sort(),
    );
  });

  it('exits 0 on the finished folder; 1 naming results.csv after one byte of it is edited', async () => {
    const ok = await spawnCli(['verify', out], {});
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toContain('as recorded, every row once');
    const edited = join(dir, 'edited');
    cpSync(out, edited, { recursive: true });
    const csv = readFileSync(join(edited, 'results.csv'));
    csv[csv.length - 2] = csv[csv.length - 2] === 0x31 ? 0x32 : 0x31;
    writeFileSync(join(edited, 'results.csv'), csv);
    const bad = await spawnCli(['verify', edited], {});
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/DIFFERS: results\.csv: changed since it was recorded/);
  });

  it('names a deleted results line and a changed input', async () => {
    const cut = join(dir, 'cut');
    cpSync(out, cut, { recursive: true });
    const gz = join(cut, 'results.ndjson.gz');
    const lines = gunzipSync(readFileSync(gz)).toString('utf8').split('\n');
    lines.splice(4, 1);
    writeFileSync(gz, gzipSync(lines.join('\n')));
    const r = await verifyFolder(cut);
    expect(r.problems[0]).toMatch(/^results\.ndjson\.gz: changed since it was recorded at \S+ \(sha256 /);
    expect(r.problems).toContain('1 input rows are in neither results nor errors: rows 5');
    expect(
      r.problems.some((p) => p.startsWith('summary.json counts 60 results and 0 errors; the journals hold 59')),
    ).toBe(true);

    const moved = join(dir, 'moved-input');
    cpSync(out, moved, { recursive: true });
    const copy = join(dir, 'input-copy.csv');
    copyFileSync(input, copy);
    appendFileSync(input, 'LOC-999999,user999999,lead999999,12.0000,77.0000\n');
    try {
      const changed = await verifyFolder(moved);
      expect(changed.problems).toHaveLength(1);
      expect(changed.problems[0]).toMatch(
        /^input .*input\.csv: changed since the run \(sha256 [0-9a-f]{16}\.\.\., now [0-9a-f]{16}\.\.\.; \d+ bytes, now \d+\)$/,
      );
    } finally {
      copyFileSync(copy, input);
    }
  });

  it("a resumed folder: each row says its session, results.csv's too; verify exits 0, and 1 naming a session the record lacks", async () => {
    const resumed = join(dir, 'resumed');
    // Slow enough to be stopped part-way (20 calls a second), then resumed at full speed.
    const first = startCli(runArgs('location', input, resumed, '--rate', 'workflow=20/s'), sb.env());
    await waitForLines(first, join(resumed, 'results.ndjson'), 10, 60_000);
    first.child.kill('SIGTERM');
    expect((await first.done).code).toBe(3);
    const done1 = new Set(readOutput(resumed).results.map((l) => l.row));
    expect(done1.size).toBeLessThan(ROWS);
    const again = await runInProcess(runArgs('location', input, resumed, '--rate', 'workflow=off'), sb.env());
    expect(again.code, again.stderr).toBe(0);
    const o = readOutput(resumed);
    expect(invariantProblems(ROWS, o)).toEqual([]);
    const m = o.manifest;
    expect(m.sessions).toHaveLength(2);
    expect(m.run_id).toBe(JSON.parse(readFileSync(join(resumed, 'manifest.json'), 'utf8')).run_id);
    for (const l of o.results)
      expect([l.run_id, l.run_session], `row ${l.row}`).toEqual([m.run_id, done1.has(l.row) ? 1 : 2]);
    const records = parse(readFileSync(join(resumed, 'results.csv'), 'utf8'), { columns: true }) as Record<
      string,
      string
    >[];
    expect(records).toHaveLength(ROWS);
    for (const r of records)
      expect([r.run_id, r.run_session], `row ${r.row}`).toEqual([m.run_id, done1.has(Number(r.row)) ? '1' : '2']);
    const ok = await spawnCli(['verify', resumed], {});
    expect(ok.code, ok.stdout).toBe(0);
    expect(ok.stdout).toContain(
      `checked: every row's run_id is this run's (${m.run_id}) and its run_session one of the 2 recorded (rows by session: session 1: ${done1.size}, session 2: ${ROWS - done1.size})`,
    );

    // A row's session changed in the journal: its sha256 and the session the record lacks are both named.
    const edited = join(dir, 'resumed-edited');
    cpSync(resumed, edited, { recursive: true });
    const gz = join(edited, 'results.ndjson.gz');
    const text = gunzipSync(readFileSync(gz)).toString('utf8');
    writeFileSync(gz, gzipSync(text.replace('"run_session":2', '"run_session":3')));
    const r = await verifyFolder(edited);
    expect(r.problems[0]).toMatch(/^results\.ndjson\.gz: changed since it was recorded/);
    expect(r.problems).toContain(
      'rows carry run_session 3, which manifest.json does not record (it records 2 sessions)',
    );
  });

  it('exits 0 on a merged folder of two shards', async () => {
    const shards = [1, 2].map((i) => join(dir, `shard${i}`));
    for (const [i, s] of shards.entries()) {
      const r = await runInProcess(
        runArgs('location', input, s, '--rate', 'workflow=off', '--shard', `${i + 1}/2`),
        sb.env(),
      );
      expect(r.code, r.stderr).toBe(0);
    }
    const merged = join(dir, 'merged');
    const m = await spawnCli(['merge', ...shards, '--out', merged], {});
    expect(m.code, m.stderr).toBe(0);
    const r = await spawnCli(['verify', merged], {});
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toContain('(every shard merged) once, in results or errors');
    expect(r.stdout).toContain("checked: every row's run_id is one of the 2 merged shards' runs");
    // Its rows keep the run of the shard that wrote them.
    const runs = shards.map((s) => JSON.parse(readFileSync(join(s, 'manifest.json'), 'utf8')).run_id as string);
    const mergedRuns = new Set(readOutput(merged).results.map((l) => l.run_id));
    expect([...mergedRuns].sort()).toEqual([...runs].sort());
    expect((await verifyFolder(shards[0])).problems).toEqual([]);
  });
});
