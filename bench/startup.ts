/**
 * Start-up (issue 31): how long a command takes from the process's start to its exit, the median of `rounds`
 * runs in turn, each a fresh `node bin/bre-batch.js`: `--help`, `pipelines`, and a one-row `run` against the
 * built-in sandbox (the run starts it in-process, as a first-night user's does). `node -e 0` is measured the
 * same way: what Node alone costs on this machine at this moment, which no command can go below. With
 * `against` (a checkout of another commit, built), its bin runs the same three commands in the same rounds, each
 * right after this build's: a before/after taken in turn, at the same moment of the shared machine. Each run's CPU
 * (user and system, its threads included) is taken too, by /usr/bin/time where there is one: on a shared machine
 * it moves far less with the load than the wall clock.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { CLI } from './harness.js';

interface StartupFigure {
  readonly command: string;
  /** Seconds, in the order measured. */
  readonly runs: readonly number[];
  readonly median_s: number;
  readonly min_s: number;
  /** The median less `node -e 0`'s: what the command itself costs, a steadier figure on a busy machine. */
  readonly over_node_s?: number;
  /** CPU seconds (user and system), in the order measured, and their median: without /usr/bin/time, none. */
  readonly cpu_runs?: readonly number[];
  readonly cpu_median_s?: number;
}

interface StartupFigures {
  readonly node: StartupFigure;
  readonly help: StartupFigure;
  readonly pipelines: StartupFigure;
  readonly one_row_run: StartupFigure;
  /** The other checkout's (`against`), when given. */
  readonly against_help?: StartupFigure;
  readonly against_pipelines?: StartupFigure;
  readonly against_one_row_run?: StartupFigure;
}

/** GNU time: the child's user and system CPU, which Node does not report for a child. */
const TIME = '/usr/bin/time';

interface Timed {
  readonly seconds: number;
  readonly cpu?: number;
}

async function timed(args: readonly string[], cpuFile: string): Promise<Timed> {
  const withCpu = existsSync(TIME);
  const t0 = performance.now();
  const child = spawn(
    withCpu ? TIME : process.execPath,
    withCpu ? ['-f', '%U %S', '-o', cpuFile, process.execPath, ...args] : args,
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, BRE_BASE_URL: '', BUREAU_BASE_URL: '', ACCOUNT_BASE_URL: '' },
    },
  );
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const [code] = (await once(child, 'exit')) as [number | null];
  const seconds = (performance.now() - t0) / 1000;
  if (code !== 0) throw new Error(`${args.join(' ')} exited ${code}: ${stderr}`);
  if (!withCpu) return { seconds };
  const [user, system] = readFileSync(cpuFile, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number);
  return { seconds, cpu: user + system };
}

const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const r3 = (x: number) => Math.round(x * 1000) / 1000;

function figure(command: string, runs: readonly Timed[]): StartupFigure {
  const seconds = runs.map((r) => r.seconds);
  const cpu = runs.flatMap((r) => (r.cpu === undefined ? [] : [r.cpu]));
  return {
    command,
    runs: seconds.map(r3),
    median_s: r3(median(seconds)),
    min_s: r3(Math.min(...seconds)),
    ...(cpu.length === runs.length ? { cpu_runs: cpu.map(r3), cpu_median_s: r3(median(cpu)) } : {}),
  };
}

export async function benchStartup(o: {
  readonly dir: string;
  readonly rounds: number;
  /** The root of another checkout whose `bin/bre-batch.js` is measured beside this one. */
  readonly against?: string;
}): Promise<StartupFigures> {
  const dir = mkdtempSync(join(o.dir, 'startup-'));
  const input = join(dir, 'one.csv');
  writeFileSync(input, 'reference_id,user_id,lead_id,latitude,longitude\nS-1,u1,l1,19.076,72.8777\n');
  type Command = [keyof StartupFigures, string, (i: number) => string[]];
  const cliCommands = (cli: string, prefix: '' | 'against_', at: string): Command[] => [
    [`${prefix}help`, `bre-batch --help${at}`, () => [cli, '--help']],
    [`${prefix}pipelines`, `bre-batch pipelines${at}`, () => [cli, 'pipelines']],
    [
      `${prefix}one_row_run`,
      `bre-batch run location --input one.csv (built-in sandbox)${at}`,
      (i) => [cli, 'run', 'location', '--input', input, '--out', join(dir, `${prefix}out-${i}`), '--no-progress'],
    ],
  ];
  const commands: Command[] = [['node', 'node -e 0', () => ['-e', '0']], ...cliCommands(CLI, '', '')];
  if (o.against) {
    // Each of the other checkout's commands right after the same one of this build's.
    const theirs = cliCommands(join(o.against, 'bin', 'bre-batch.js'), 'against_', ` (${o.against})`);
    for (const [k, c] of theirs.entries()) commands.splice(2 + 2 * k, 0, c);
  }
  const runs = new Map(commands.map(([name]) => [name, [] as Timed[]]));
  // In turn, round by round: a busy moment of the shared machine falls on every command alike.
  for (let i = 0; i < o.rounds; i += 1) {
    for (const [name, , args] of commands) runs.get(name)!.push(await timed(args(i), join(dir, 'cpu.txt')));
  }
  rmSync(dir, { recursive: true, force: true });
  const node = figure('node -e 0', runs.get('node')!);
  const over = (f: StartupFigure): StartupFigure => ({
    ...f,
    over_node_s: Math.round((f.median_s - node.median_s) * 1000) / 1000,
  });
  return Object.fromEntries(
    commands.map(([name, command]) => [name, name === 'node' ? node : over(figure(command, runs.get(name)!))]),
  ) as unknown as StartupFigures;
}
