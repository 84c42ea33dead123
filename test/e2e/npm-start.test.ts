/**
 * `npm start` as the README's Quick start runs it, printing what the Quick start shows: the start script builds dist/, then `exec`s the bin on
 * `run rescore --input samples/rescore.csv` against the built-in sandbox. Run in a copy of the project as a
 * clone holds it (package.json, the sources, the pipelines and samples; node_modules linked), so that its
 * build writes a dist/ of its own and never rewrites, under a test running beside it, the one the other tests
 * spawn. Then SIGTERM to npm while the run goes: npm passes it on, the run stops as documented (exit 3 from
 * npm itself, the lock released, resumable) and `npm start` again finishes it with no row answered twice
 * (against a test sandbox that hangs a seeded share of the calls, so the signal comes with some rows done and
 * others in flight). The first test's build is the one this file pays for: the SIGTERM test's clone, the same
 * tree, takes its dist/ (fresh by the recorded fingerprint, so its starts build nothing) when that test built one.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, ROOT } from '../helpers/cli.js';
import { countLines, journalText } from '../helpers/output.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

/** A test may build the project once (tsc over src/), on a shared two-core machine. */
const TIMEOUT_MS = 600_000;

/**
 * dist/ as the Quick start test's `npm start` built it in its clone (undefined until then): built from the tree
 * clone() makes, which nothing edits before it is taken.
 */
let builtDist: string | undefined;

/** The project as a clone holds it, without its dist/ (the start script builds it) unless `dist` is given. */
function clone(dist?: string): string {
  const ws = tempDir('bre-npm-start-');
  if (dist !== undefined) cpSync(dist, join(ws, 'dist'), { recursive: true });
  for (const f of ['package.json', 'tsconfig.json', 'tsconfig.build.json']) copyFileSync(join(ROOT, f), join(ws, f));
  for (const d of ['src', 'pipelines', 'bin']) cpSync(join(ROOT, d), join(ws, d), { recursive: true });
  // The workspace's packages, as committed: not what a build wrote in them.
  cpSync(join(ROOT, 'packages'), join(ws, 'packages'), {
    recursive: true,
    filter: (src) => !/[\\/](dist|build|node_modules)$/.test(src),
  });
  // The shipped samples; not the benchmark's .bench-* inputs it may have left beside them.
  cpSync(join(ROOT, 'samples'), join(ws, 'samples'), {
    recursive: true,
    filter: (src) => !src.slice(join(ROOT, 'samples').length).includes('/.'),
  });
  // The build's later steps (package.json's build script).
  mkdirSync(join(ws, 'scripts'));
  for (const f of ['build-input.mjs', 'prune-dist.ts', 'bundle.ts'])
    copyFileSync(join(ROOT, 'scripts', f), join(ws, 'scripts', f));
  symlinkSync(join(ROOT, 'node_modules'), join(ws, 'node_modules'));
  return ws;
}

interface Started {
  readonly pid: number;
  readonly done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

function npmStart(ws: string, env: Record<string, string | undefined> = {}): Started {
  const child = spawn('npm', ['start'], { cwd: ws, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>(
    (res) => child.once('close', (code, signal) => res({ code, signal, stdout, stderr })),
  );
  return { pid: child.pid!, done };
}

/** The one folder the run made under output/ ('' before it exists). */
function folderOf(ws: string): string {
  const names = existsSync(join(ws, 'output')) ? readdirSync(join(ws, 'output')) : [];
  return names.length === 1 ? join(ws, 'output', names[0]) : '';
}

/**
 * A sample output of the Quick start, as a page shows it: the indented block that starts with the sandbox's
 * line, its lines with numbers written '#' (times, rates, ports and the folder's timestamp vary from run to run;
 * the lines and their words may not).
 */
function shownOutput(page: string): string[] {
  const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
  const start = lines.findIndex((l) => l.startsWith('    no BRE_BASE_URL set: using the built-in sandbox'));
  if (start === -1) throw new Error(`${page}: no sample output of npm start`);
  const end = lines.findIndex((l, i) => i > start && !l.startsWith('    '));
  return numbersOut(lines.slice(start, end).map((l) => l.slice(4)));
}

const numbersOut = (lines: readonly string[]): string[] =>
  lines.map((l) => l.trimEnd().replace(/\d+(?:[.,]\d+)*/g, '#'));

const SAMPLE_KEYS = readFileSync(join(ROOT, 'samples', 'rescore.csv'), 'utf8')
  .trim()
  .split('\n')
  .slice(1)
  .map((line) => line.split(',')[0]);

describe('npm start, as the Quick start runs it', () => {
  it(
    'builds, runs the rescore sample against the built-in sandbox: exit 0, the summary, every row in results in input order',
    async () => {
      expect(SAMPLE_KEYS).toHaveLength(24);
      const ws = clone();
      const r = await npmStart(ws).done;
      expect(r.code, r.stderr).toBe(0);
      // Copied before the edit below: the SIGTERM test's starts need a dist/ of the unedited tree.
      const dist = tempDir('bre-npm-start-dist-');
      cpSync(join(ws, 'dist'), dist, { recursive: true });
      expect(r.stderr).toMatch(/no BRE_BASE_URL set: using the built-in sandbox at http:\/\/127\.0\.0\.1:\d+/);
      expect(r.stdout).toContain("Run of pipeline 'rescore' finished in");
      expect(r.stdout).toContain('rows: 24 succeeded, 0 in errors');
      expect(r.stdout).toMatch(/decisions \(stage decision\): /);
      const folder = folderOf(ws);
      expect(folder, 'one folder under output/').toMatch(/output\/rescore-\d{8}T\d{6}Z$/);
      expect(r.stdout).toContain(`output: output/${folder.split('/').pop()}`);
      // The files as the folder holds them: the finished run's results journal gzip'ed, the empty errors one plain.
      expect(r.stdout).toContain(
        'files: results.ndjson.gz, errors.ndjson, results.csv, results.parquet, errors.parquet',
      );
      for (const f of ['results.csv', 'results.parquet', 'errors.parquet', 'summary.json', 'report.html'])
        expect(existsSync(join(folder, f)), f).toBe(true);
      const csv = readFileSync(join(folder, 'results.csv'), 'utf8').trim().split('\n');
      const header = csv[0].split(',');
      const key = header.indexOf('key');
      expect(key).toBeGreaterThanOrEqual(0);
      expect(csv.slice(1).map((line) => line.split(',')[key])).toEqual(SAMPLE_KEYS);
      expect(readFileSync(join(folder, 'errors.ndjson'), 'utf8')).toBe('');
      const summary = JSON.parse(readFileSync(join(folder, 'summary.json'), 'utf8')) as {
        finished: boolean;
        rows: { succeeded: number; read: number };
      };
      expect(summary.finished).toBe(true);
      expect(summary.rows).toMatchObject({ succeeded: 24, read: 24 });
      expect(existsSync(join(folder, '.state', 'lock')), 'the lock released').toBe(false);
      // What the README's Quick start (and the guide's) shows is what npm start prints: its sandbox line on
      // stderr, then its summary on stdout, word for word but for the numbers.
      const printed = numbersOut([
        r.stderr.split('\n').find((l) => l.startsWith('no BRE_BASE_URL set'))!,
        ...r.stdout.slice(r.stdout.indexOf('Run of pipeline')).trimEnd().split('\n'),
      ]);
      for (const page of ['README.md', 'docs/getting-started.md']) expect(shownOutput(page), page).toEqual(printed);
      // dist/ is recorded as built from the tree as it is (the next start runs without building: the SIGTERM
      // test's second start); an edit of a source makes it stale, and the start script builds again.
      const fresh = () => spawnSync(process.execPath, ['scripts/build-input.mjs', 'fresh'], { cwd: ws }).status;
      expect(fresh()).toBe(0);
      builtDist = dist;
      appendFileSync(join(ws, 'src', 'cli', 'main.ts'), '\n// edited\n');
      expect(fresh()).toBe(1);
    },
    TIMEOUT_MS,
  );

  describe('SIGTERM to npm start', () => {
    let sb: TestSandbox;
    beforeAll(async () => {
      sb = await startTestSandbox({ slowMs: 600_000, seed: 5 });
    });
    afterAll(async () => {
      await sb.close();
    });

    const answered = () => {
      const s = sb.sandbox.stats().services;
      return { workflow: s.workflow.byStatus['200'] ?? 0, hanging: s.workflow.faults.slow + s.bureau.faults.slow };
    };

    it(
      'npm passes it to the run: exit 3, lock released; npm start again resumes it and no row is answered twice',
      async () => {
        // The build is the Quick start test's: its dist/ when it made one, else the first start here builds.
        const ws = clone(builtDist);
        const before = answered();
        sb.sandbox.setFaults({ slow: 0.3 });
        const first = npmStart(ws, sb.env());
        // Every row is done or hanging (its bureau or its workflow call held by the sandbox): the signal
        // then comes with some rows written and others in flight.
        await waitFor(
          () => {
            const folder = folderOf(ws);
            if (folder === '') return false;
            const done = countLines(join(folder, 'results.ndjson'));
            return done > 0 && done + (answered().hanging - before.hanging) === SAMPLE_KEYS.length;
          },
          TIMEOUT_MS / 2,
          'every row written or hanging',
        );
        const hanging = answered().hanging - before.hanging;
        expect(hanging, 'the seed hangs some calls').toBeGreaterThan(0);
        process.kill(first.pid, 'SIGTERM');
        const r = await first.done;
        sb.sandbox.setFaults({});
        expect(r.code, `npm ends with the run's exit code\n${r.stderr}`).toBe(3);
        expect(r.stderr).toContain('SIGTERM received');
        expect(r.stderr).toContain('re-run the same command to resume');
        expect(r.stderr).toContain('\n  npm start\n');
        const folder = folderOf(ws);
        expect(existsSync(join(folder, '.state', 'lock')), 'the stopped run released its lock').toBe(false);
        const stopped = JSON.parse(readFileSync(join(folder, 'summary.json'), 'utf8')) as {
          finished: boolean;
          stopped: { code: string } | null;
          rows: { succeeded: number; in_flight_at_stop: number };
        };
        expect(stopped.finished).toBe(false);
        expect(stopped.stopped?.code).toBe('INTERRUPTED');
        expect(stopped.rows.succeeded).toBe(SAMPLE_KEYS.length - hanging);
        expect(stopped.rows.in_flight_at_stop).toBe(hanging);

        // The tree is built and unchanged since: npm start runs without building (dist/ untouched).
        const built = () => [
          statSync(join(ws, 'dist/bundle/main.js')).mtimeMs,
          statSync(join(ws, 'dist/.build-input')).mtimeMs,
        ];
        const before2 = built();
        const again = await npmStart(ws, sb.env()).done;
        expect(again.code, again.stderr).toBe(0);
        expect(built(), 'no build on an up-to-date tree').toEqual(before2);
        expect(again.stderr).toContain('resuming the unfinished run in output/');
        expect(folderOf(ws)).toBe(folder);
        // The finished folder's journal is compacted (docs/output.md, A finished folder on disk): read in either form.
        const keys = journalText(join(folder, 'results.ndjson'))
          .split('\n')
          .filter((x) => x !== '')
          .map((x) => (JSON.parse(x) as { key: string }).key);
        expect(keys.sort()).toEqual([...SAMPLE_KEYS].sort());
        expect(answered().workflow - before.workflow, 'workflow calls answered over both sessions: one a row').toBe(
          SAMPLE_KEYS.length,
        );
      },
      TIMEOUT_MS,
    );
  });
});
