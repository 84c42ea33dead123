/**
 * A full disk is a stop like any other (issue 24). The output folder lives on a small disk (a tmpfs mounted
 * for the test, or, where mounting is not allowed, the same ENOSPC injected into the CLI's writes:
 * test/helpers/small-disk.ts). The disk fills mid-run, or during the end-of-run rebuild: the run ends with
 * exit 3 and one message naming the folder, saying the disk is full and that a re-run resumes; the journal
 * holds whole lines only. Then the disk grows and the same command resumes: every row exactly once in
 * results or errors, and no row that was done is sent again (counted by the sandbox).
 */
import { appendFileSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runArgs, spawnCli } from '../helpers/cli.js';
import { invariantProblems, locationCsv, readOutput } from '../helpers/output.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { smallDisk, type SmallDisk } from '../helpers/small-disk.js';
import { tempDir } from '../helpers/temp.js';

const ROOMY = 16 * 1024 * 1024;

/** The one message of a DISK_FULL stop, for the output folder `out`. */
function diskFullMessage(out: string): RegExp {
  const folder = out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(
    `^bre-batch: the disk is full: cannot write to the output folder ${folder} \\(ENOSPC: no space left on device\\)\\. Nothing is lost: once there is room, re-run the same command and it resumes where it stopped\\.$`,
    'm',
  );
}

/** Whole lines only: the file ends with a newline and every line is JSON. */
function wholeLines(path: string): boolean {
  const text = readFileSync(path, 'utf8');
  if (text === '') return true;
  if (!text.endsWith('\n')) return false;
  return text
    .slice(0, -1)
    .split('\n')
    .every((l) => {
      try {
        JSON.parse(l);
        return true;
      } catch {
        return false;
      }
    });
}

describe('a full disk stops the run (exit 3); the same command resumes once there is room', () => {
  let sb: TestSandbox;
  let disk: SmallDisk;
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: null } });
    disk = smallDisk(ROOMY);
    console.info(
      `disk-full: the small disk is a ${disk.how === 'tmpfs' ? 'tmpfs' : 'byte budget injected into node:fs (no mount allowed)'}`,
    );
  });
  afterAll(async () => {
    disk?.close();
    await sb?.close();
  });

  const requests = () => sb.sandbox.stats().services.workflow.requests;

  it('fills mid-run: whole lines only, one message; the resume sends only the rows not done', async () => {
    const rows = 400;
    const input = locationCsv(tempDir(), rows);
    const out = join(disk.dir, 'mid-run');
    const args = runArgs('location', input, out, '--rate', 'workflow=off', '--concurrency', '8');
    await disk.leaveRoom(96 * 1024);

    if (disk.how === 'tmpfs') {
      // --plan says the output will not fit (about 1.5 KB a row assumed, 400 rows, on 96 KB), naming the disk of the
      // folder --out would be made in (it does not exist yet: --plan makes nothing)
      const plan = await spawnCli([...args, '--plan'], { ...sb.env(), ...disk.env() });
      expect(plan.code, plan.stderr).toBe(0);
      expect(plan.stdout).toMatch(
        new RegExp(
          `\\n {2}warning: the disk of ${dirname(out).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} has [\\d.]+ KB free, and this run's output needs about `,
        ),
      );
    }

    const full = await spawnCli(args, { ...sb.env(), ...disk.env() });
    expect(full.code, full.stderr).toBe(3);
    expect(full.stderr).toMatch(diskFullMessage(out));
    expect(full.stderr.match(/disk is full/g)).toHaveLength(1);
    expect(full.stderr).not.toMatch(/ENOSPC: no space left on device, write/);
    // Nothing more was written after the stop, and what is there is whole.
    for (const f of ['results.ndjson', 'errors.ndjson', '.state/columns.ndjson', '.state/timeline.ndjson'])
      expect(wholeLines(join(out, f)), f).toBe(true);
    for (const f of ['summary.json', 'results.csv', 'results.parquet']) expect(existsSync(join(out, f)), f).toBe(false);
    const stopped = readOutput(out);
    expect(stopped.errors).toEqual([]);
    expect(stopped.results.length).toBeGreaterThan(20);
    expect(stopped.results.length).toBeLessThan(rows);

    // A crash inside a write would leave a torn last line: the resume copes with one too.
    await disk.leaveRoom(ROOMY);
    appendFileSync(join(out, 'results.ndjson'), '{"row":399,"key":"LOC-000399","stages":{"loca');
    const before = requests();
    const resumed = await spawnCli(args, { ...sb.env(), ...disk.env() });
    expect(resumed.code, resumed.stderr).toBe(0);
    const after = readOutput(out);
    expect(invariantProblems(rows, after)).toEqual([]);
    expect(after.summary.rows.resumed).toBe(stopped.results.length);
    // Every row done before the stop stayed done: only the others were sent.
    expect(requests() - before).toBe(rows - stopped.results.length);
  }, 120_000);

  it('fills during the end-of-run rebuild: the journal is complete, nothing is sent again, the re-run does the end', async () => {
    const rows = 300;
    const input = locationCsv(tempDir(), rows);
    // A first run on a roomy disk: what the journal takes, and what the end files take on top. Its journal kept
    // plain (--keep-journal): the run below fills the disk before its end, while its journal is plain.
    const probe = join(disk.dir, 'probe');
    await disk.leaveRoom(ROOMY);
    const roomy = await spawnCli(runArgs('location', input, probe, '--rate', 'workflow=off', '--keep-journal'), {
      ...sb.env(),
      ...disk.env(),
    });
    expect(roomy.code, roomy.stderr).toBe(0);
    const endFiles = ['results.csv', 'results.parquet', 'errors.parquet', 'summary.json', 'report.html'];
    const journal = disk.taken('probe') - disk.taken('probe', endFiles);
    const csv = disk.taken('probe', ['results.csv']);
    rmSync(probe, { recursive: true });
    // Room for the journal and the small files beside it, not for results.csv.
    expect(csv).toBeGreaterThan(24 * 1024);
    const out = join(disk.dir, 'rebuild');
    await disk.leaveRoom(journal + 12 * 1024);
    const before = requests();
    const full = await spawnCli(runArgs('location', input, out, '--rate', 'workflow=off'), {
      ...sb.env(),
      ...disk.env(),
    });
    expect(full.code, full.stderr).toBe(3);
    expect(full.stderr).toMatch(diskFullMessage(out));
    expect(full.stderr.match(/disk is full/g)).toHaveLength(1);
    // Every row was done before the end: the journal is whole and complete; no end file (nor its temporary
    // file) is left half-written.
    expect(wholeLines(join(out, 'results.ndjson'))).toBe(true);
    expect(readOutput(out).results).toHaveLength(rows);
    for (const f of ['results.csv', 'results.csv.tmp', 'results.parquet.tmp', 'summary.json'])
      expect(existsSync(join(out, f)), f).toBe(false);
    expect(requests() - before).toBe(rows);

    await disk.leaveRoom(ROOMY);
    const resumed = await spawnCli(runArgs('location', input, out, '--rate', 'workflow=off'), {
      ...sb.env(),
      ...disk.env(),
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(requests() - before).toBe(rows);
    const after = readOutput(out);
    expect(invariantProblems(rows, after)).toEqual([]);
    expect(after.summary.rows.resumed).toBe(rows);
    expect(existsSync(join(out, 'report.html'))).toBe(true);
  }, 120_000);
});
