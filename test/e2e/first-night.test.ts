/**
 * The README's first commands interrupted and re-run as a user does, through every launcher the README shows:
 * the Quick start's `bre-batch run location --input samples/location.csv` (no --out) stopped by SIGINT and
 * re-run finds its own folder and sends no row twice (the sandbox's answered calls are counted); SIGTERM to
 * `npx bre-batch` (npm's `sh -c` in between dies of it without passing it on: the run notices its launcher
 * gone), SIGINT to npx's whole process group (Ctrl-C), SIGTERM to cron's `sh -c` with `exec` of the installed
 * bin (the README's cron line) and without `exec`: each run stops as documented (exit 3 in its summary,
 * resumable), its lock released, and the same command resumes.
 *
 * Deterministic: the sandbox hangs a seeded share of the calls (`slow`), so the signal always comes while some
 * rows are done and others in flight (abandoned after --stop-grace, then done by the re-run).
 *
 * Each case has a sandbox of its own (the same seed: the same draws) and the cases run side by side: each waits
 * out the documented --stop-grace (10 s) of the README's command, which a test cannot shorten without changing
 * the command it proves.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, type TestContext } from 'vitest';
import { BIN, cliEnv, ROOT } from '../helpers/cli.js';
import { countLines, journalText } from '../helpers/output.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const ROWS = 12;
const QUICK_START = ['run', 'location', '--input', 'samples/location.csv'];

/** The case's own sandbox, closed when it ends. */
async function sandboxFor(t: TestContext): Promise<TestSandbox> {
  const sb = await startTestSandbox({ slowMs: 600_000, seed: 11 });
  t.onTestFinished(() => sb.close());
  return sb;
}

/** A folder as a user's: the shipped sample under samples/, bre-batch installed in node_modules (as `npm install` links it). */
function workspace(): string {
  const ws = tempDir('bre-first-night-');
  mkdirSync(join(ws, 'samples'));
  copyFileSync(join(ROOT, 'samples', 'location.csv'), join(ws, 'samples', 'location.csv'));
  mkdirSync(join(ws, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(ROOT, join(ws, 'node_modules', 'bre-batch'));
  symlinkSync('../bre-batch/bin/bre-batch.js', join(ws, 'node_modules', '.bin', 'bre-batch'));
  // As in a clone, for the README's cron line (`cd /opt/bre-batch && exec bin/bre-batch.js ...`).
  symlinkSync(join(ROOT, 'bin'), join(ws, 'bin'));
  return ws;
}

interface Launched {
  readonly child: ChildProcess;
  /** Settles when the launcher has exited and every process holding its output (the run) has too. */
  readonly closed: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
  readonly exited: Promise<number | null>;
}

function launch(
  sb: TestSandbox,
  cmd: string,
  args: readonly string[],
  ws: string,
  opts: { group?: boolean } = {},
): Launched {
  const child = spawn(cmd, args, {
    cwd: ws,
    env: cliEnv(sb.env()),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.group === true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>(
    (res, rej) => {
      const timer = setTimeout(
        () => rej(new Error(`${cmd} ${args.join(' ')}: still running after 180 s\n${stderr}`)),
        180_000,
      );
      child.once('close', (code, signal) => {
        clearTimeout(timer);
        res({ code, signal, stdout, stderr });
      });
    },
  );
  return { child, closed, exited };
}

function folderOf(ws: string): string {
  const names = existsSync(join(ws, 'output')) ? readdirSync(join(ws, 'output')) : [];
  return names.length === 1 ? join(ws, 'output', names[0]) : '';
}

const answered200 = (sb: TestSandbox) => sb.sandbox.stats().services.workflow.byStatus['200'] ?? 0;

/**
 * Starts a night with a share of the calls hanging, waits until every row has been sent and every answered
 * one written (the rest hang), then stops it with `stop`. Returns what the first session did.
 */
async function interruptedNight(sb: TestSandbox, ws: string, start: () => Launched, stop: (l: Launched) => void) {
  sb.sandbox.setFaults({ slow: 0.4 });
  const before = sb.sandbox.stats().services.workflow;
  const l = start();
  await waitFor(
    () => {
      const w = sb.sandbox.stats().services.workflow;
      const folder = folderOf(ws);
      return (
        w.requests - before.requests === ROWS &&
        folder !== '' &&
        countLines(join(folder, 'results.ndjson')) + (w.faults.slow - before.faults.slow) === ROWS
      );
    },
    120_000,
    'every row sent, the answered ones written',
  );
  const hanging = sb.sandbox.stats().services.workflow.faults.slow - before.faults.slow;
  expect(hanging, 'the seed hangs some calls and answers others').toBeGreaterThan(0);
  expect(hanging).toBeLessThan(ROWS);
  stop(l);
  const r = await l.closed;
  sb.sandbox.setFaults({});
  const folder = folderOf(ws);
  expect(existsSync(join(folder, '.state', 'lock')), 'the stopped run released its lock').toBe(false);
  const summary = JSON.parse(readFileSync(join(folder, 'summary.json'), 'utf8')) as {
    finished: boolean;
    stopped: { code: string } | null;
    rows: Record<string, number>;
  };
  expect(summary.finished).toBe(false);
  expect(summary.stopped?.code).toBe('INTERRUPTED');
  expect(summary.rows.succeeded).toBe(ROWS - hanging);
  // Every row read is accounted for: the hanging ones were in flight at the stop.
  const rows = summary.rows;
  expect(rows.read).toBe(ROWS);
  expect(rows.in_flight_at_stop).toBe(hanging);
  expect(
    rows.succeeded_this_session +
      rows.failed_this_session +
      rows.in_flight_at_stop +
      rows.not_started +
      rows.resumed +
      rows.out_of_shard,
  ).toBe(rows.read);
  return { ...r, folder, hanging };
}

/** The same command again, to its end: every row once, and no row answered twice over both sessions. */
async function resumedNight(
  sb: TestSandbox,
  ws: string,
  start: () => Launched,
  answeredBefore: number,
  folder: string,
) {
  const r = await start().closed;
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toContain(`resuming the unfinished run in output/`);
  expect(folderOf(ws)).toBe(folder);
  const keys = journalText(join(folder, 'results.ndjson'))
    .split('\n')
    .filter((x) => x !== '')
    .map((x) => (JSON.parse(x) as { key: string }).key);
  expect(new Set(keys).size).toBe(ROWS);
  expect(keys.length).toBe(ROWS);
  expect(answered200(sb) - answeredBefore, 'calls the sandbox answered 200 over both sessions: one a row').toBe(ROWS);
}

describe.concurrent('the Quick start, interrupted and re-run with the same command (no --out)', () => {
  it('SIGINT: exit 3 with the exact command to resume; the same command finds its folder and sends no row twice', async (t) => {
    const sb = await sandboxFor(t);
    const ws = workspace();
    const start = () => launch(sb, process.execPath, [BIN, ...QUICK_START], ws);
    const answered = answered200(sb);
    const first = await interruptedNight(sb, ws, start, (l) => l.child.kill('SIGINT'));
    expect(first.code, first.stderr).toBe(3);
    expect(first.stderr).toContain('re-run the same command to resume');
    expect(first.stderr).toContain('\n  bre-batch run location --input samples/location.csv\n');
    await resumedNight(sb, ws, start, answered, first.folder);
    // Finished: the same command again is a new night in a new folder, and says so.
    const again = await start().closed;
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(
      /output\/location-\d{8}T\d{6}Z has finished this run already: starting a new one in output\/location-/,
    );
    expect(readdirSync(join(ws, 'output'))).toHaveLength(2);
  });
});

describe.concurrent('signals through the launchers the README shows', () => {
  const npx = (sb: TestSandbox, ws: string, opts: { group?: boolean } = {}) =>
    launch(sb, 'npx', ['--ignore-scripts', '--prefix', ROOT, 'bre-batch', ...QUICK_START], ws, opts);

  it('SIGTERM to `npx bre-batch`: npx ends at once, the run notices its launcher gone and stops (resumable, lock released); the same npx command resumes', async (t) => {
    const sb = await sandboxFor(t);
    const ws = workspace();
    const answered = answered200(sb);
    const first = await interruptedNight(
      sb,
      ws,
      () => npx(sb, ws),
      (l) => l.child.kill('SIGTERM'),
    );
    expect(first.signal ?? first.code, 'npx itself ends of the SIGTERM (143 in a shell), not waiting for the run').toBe(
      'SIGTERM',
    );
    expect(first.stderr).toMatch(/the shell that started bre-batch \(pid \d+\) has gone/);
    expect(first.stderr).toContain('\n  npx bre-batch run location --input samples/location.csv\n');
    await resumedNight(sb, ws, () => npx(sb, ws), answered, first.folder);
  });

  it("Ctrl-C (SIGINT to npx's process group): the run stops as on SIGINT, resumable", async (t) => {
    const sb = await sandboxFor(t);
    const ws = workspace();
    const answered = answered200(sb);
    const first = await interruptedNight(
      sb,
      ws,
      () => npx(sb, ws, { group: true }),
      (l) => process.kill(-l.child.pid!, 'SIGINT'),
    );
    expect(first.stderr).toContain('bre-batch: stopped early');
    await resumedNight(sb, ws, () => npx(sb, ws), answered, first.folder);
  });

  it("cron's `sh -c` with `exec` of the bin, as the README's cron line: SIGTERM reaches the run itself, exit 3", async (t) => {
    const sb = await sandboxFor(t);
    const ws = workspace();
    const log = join(ws, 'bre-batch.log');
    const line = `cd ${ws} && exec bin/bre-batch.js ${QUICK_START.join(' ')} --no-progress >>${log} 2>&1`;
    const start = () => launch(sb, '/bin/sh', ['-c', line], ws);
    const answered = answered200(sb);
    const first = await interruptedNight(sb, ws, start, (l) => l.child.kill('SIGTERM'));
    expect(first.code, readFileSync(log, 'utf8')).toBe(3);
    expect(readFileSync(log, 'utf8')).toContain('SIGTERM received');
    const r = await start().closed;
    expect(r.code, readFileSync(log, 'utf8')).toBe(0);
    expect(readFileSync(log, 'utf8')).toContain('resuming the unfinished run in output/');
    expect(answered200(sb) - answered).toBe(ROWS);
  });

  it('the installed bin (node_modules/.bin/bre-batch) under a plain `sh -c` with exec: SIGTERM, exit 3, resumable', async (t) => {
    const sb = await sandboxFor(t);
    const ws = workspace();
    const start = () => launch(sb, '/bin/sh', ['-c', `exec node_modules/.bin/bre-batch ${QUICK_START.join(' ')}`], ws);
    const answered = answered200(sb);
    const first = await interruptedNight(sb, ws, start, (l) => l.child.kill('SIGTERM'));
    expect(first.code, first.stderr).toBe(3);
    await resumedNight(sb, ws, start, answered, first.folder);
  });

  it('a `sh -c` wrapper without exec: the shell dies of SIGTERM, the run notices and stops, resumable', async (t) => {
    const sb = await sandboxFor(t);
    const ws = workspace();
    const line = `cd ${ws} && node_modules/.bin/bre-batch ${QUICK_START.join(' ')}; echo "exit $?"`;
    const start = () => launch(sb, '/bin/sh', ['-c', line], ws);
    const answered = answered200(sb);
    const first = await interruptedNight(sb, ws, start, (l) => l.child.kill('SIGTERM'));
    expect(first.signal).toBe('SIGTERM');
    expect(first.stderr).toMatch(/the shell that started bre-batch \(pid \d+\) has gone/);
    await resumedNight(sb, ws, start, answered, first.folder);
  });
});
