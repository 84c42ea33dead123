/**
 * `bre-batch run ARGS` (or `compare`, `verify`, `merge`, `load`) in the test's own process, from the build in
 * dist/ (which vitest's global setup makes, as for ./cli.ts): the same options (`run`'s yargs definitions), the
 * same resolution (`resolveRunRequest`, over the environment cleaned as for a spawned CLI) and the same
 * `executeRun` (the other commands: their own handlers), its stdout and stderr captured, its exit code the one
 * the CLI's handler sets (a thrown error's by the error table, as main.ts does). For runs a test reads the
 * folder of, where a process shows nothing more: a spawned run costs over a CPU second of start-up, most of it
 * loading the bundle, which this process does once. What only a process shows (a signal, kill -9, a usage
 * error's exit, the bundle itself) stays a spawned CLI (./cli.ts). From dist/, not src/: the run's threads then
 * start from the compiled scripts, not through tsx.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cliEnv, ROOT, type CliResult } from './cli.js';

type ExecuteRun = typeof import('../../src/app/execute-run.js');
type RunCli = typeof import('../../src/cli/run.js');
type CompareCli = typeof import('../../src/cli/compare.js');
type RunOptions = typeof import('../../src/cli/run-options/index.js');
type NetworkOptions = typeof import('../../src/cli/network-options.js');
type Modes = typeof import('../../src/output/modes.js');
type Errors = typeof import('../../packages/core/src/errors.js');

/**
 * A module of the build, by its path from the root (the types are the sources'). vitest.config.ts leaves
 * dist/ to Node's own import, as the CLI runs it: vitest's transform of every module costs the rows' CPU.
 */
const native = <T>(...path: string[]): Promise<T> => import(pathToFileURL(join(ROOT, ...path)).href) as Promise<T>;
const built = <T>(path: string): Promise<T> => native<T>('dist', path);

/**
 * A module of the build (`dist/PATH`, typed as its source), for what a test computes with the runner's own code
 * beside runs in this process (a pipeline's declared fields): the modules those runs load anyway, where an
 * import of src/ would have vitest transform the same graph again (src/stages/ and src/config/: about 0.7 CPU-s).
 */
export const fromBuild = <T>(path: string): Promise<T> => built<T>(path);

let loaded:
  | Promise<{
      execute: ExecuteRun;
      run: RunCli;
      compare: CompareCli;
      options: RunOptions;
      network: NetworkOptions;
      modes: Modes;
      errors: Errors;
      yargs: typeof import('yargs').default;
    }>
  | undefined;
function modules() {
  loaded ??= (async () => {
    const run = await built<RunCli>('cli/run.js');
    return {
      run,
      compare: await built<CompareCli>('cli/compare.js'),
      execute: await built<ExecuteRun>('app/execute-run.js'),
      options: await built<RunOptions>('cli/run-options/index.js'),
      network: await built<NetworkOptions>('cli/network-options.js'),
      modes: await built<Modes>('output/modes.js'),
      // The build's own instances (packages/core/dist, as node_modules/@bre-batch/core links it): its BreError.
      errors: await native<Errors>('packages', 'core', 'dist', 'errors.js'),
      yargs: (await import('yargs')).default,
    };
  })();
  return loaded;
}

type Write = typeof process.stdout.write;

/** Runs `fn` with what is written to stdout and stderr captured instead of shown. */
async function captured<T>(fn: () => Promise<T>): Promise<{ value: T; stdout: string; stderr: string }> {
  const text = { stdout: '', stderr: '' };
  const saved = { stdout: process.stdout.write, stderr: process.stderr.write };
  for (const name of ['stdout', 'stderr'] as const)
    process[name].write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      text[name] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      (rest.find((r) => typeof r === 'function') as (() => void) | undefined)?.();
      return true;
    }) as Write;
  try {
    return { value: await fn(), ...text };
  } finally {
    process.stdout.write = saved.stdout;
    process.stderr.write = saved.stderr;
  }
}

/** The commands whose handler sets the exit code (src/cli/command.ts `exitCodeCommand`), run here as main.ts runs them. */
const EXIT_CODE_COMMANDS = ['verify', 'merge', 'load', 'report'] as const;
type ExitCodeCommand = (typeof EXIT_CODE_COMMANDS)[number];
const exitCodeCommand = (name: string): name is ExitCodeCommand =>
  (EXIT_CODE_COMMANDS as readonly string[]).includes(name);

/**
 * `bre-batch ARGS` (args[0] must be `run`, `compare`, `verify`, `merge`, `load` or `report`; not with --log-format json)
 * in this process, with `env` over the cleaned environment (./cli.ts) for `run`: the built-in sandbox, or the
 * base URLs `env` gives. `verify`, `merge`, `load` and `report` read the test's own environment.
 */
export function runInProcess(
  args: readonly string[],
  env: Record<string, string | undefined> = {},
): Promise<CliResult> {
  // One at a time: stdout, stderr and the umask are the process's.
  const run = queue.then(() => runOne(args, env));
  queue = run.catch(() => undefined);
  return run;
}
let queue: Promise<unknown> = Promise.resolve();

async function runOne(args: readonly string[], env: Record<string, string | undefined>): Promise<CliResult> {
  if (args[0] !== 'run' && args[0] !== 'compare' && !exitCodeCommand(args[0]))
    throw new Error(`runInProcess runs \`run\`, \`compare\`, ${EXIT_CODE_COMMANDS.join(', ')} only, not ${args[0]}`);
  // JSON log lines go to fd 2 directly (pino, synchronously): nothing here would capture them.
  if (args.some((x, i) => x === '--log-format=json' || (x === '--log-format' && args[i + 1] === 'json')))
    throw new Error('runInProcess cannot capture --log-format json: spawn the CLI for it');
  const m = await modules();
  const environment = cliEnv(env);
  const umask = process.umask();
  const { value: code, ...text } = await captured(async () => {
    try {
      if (exitCodeCommand(args[0])) {
        // Its handler sets process.exitCode, as under main.ts: read, then put back.
        m.modes.applyOutputMode(m.modes.parseOutputMode(undefined));
        const command = (await built<Record<string, unknown>>(`cli/${args[0]}.js`))[`${args[0]}Command`];
        const saved = process.exitCode;
        process.exitCode = undefined;
        try {
          await m
            .yargs([...args])
            .command(command as never)
            .strict()
            .fail((msg, err) => {
              throw err ?? new Error(msg);
            })
            .parseAsync();
          return Number(process.exitCode ?? 0);
        } finally {
          process.exitCode = saved;
        }
      }
      if (args[0] === 'compare') {
        // The command as main.ts gives it: its own handler runs the compare and prints its summary.
        m.modes.applyOutputMode(m.modes.parseOutputMode(undefined));
        await m
          .yargs([...args])
          .command(m.compare.compareCommand as never)
          .strict()
          .fail((msg, err) => {
            throw err ?? new Error(msg);
          })
          .parseAsync();
        return 0;
      }
      const a = (await m
        .yargs([...args])
        .command({ ...m.run.runCommand, handler: () => undefined } as never)
        .strict()
        .fail((msg, err) => {
          throw err ?? new Error(msg);
        })
        .parseAsync()) as unknown as Parameters<RunOptions['resolveRunRequest']>[0];
      // The mode main.ts gives what a command writes, put back afterwards.
      m.modes.applyOutputMode(m.modes.parseOutputMode(undefined));
      const request = m.options.resolveRunRequest(
        a,
        { ...(await m.run.processContext(false)), env: environment },
        ['bre-batch', ...args].join(' '),
      );
      // As the handler: only the user's base URLs go through proxies and client certificates.
      const baseUrls = request.endpoints.baseUrls;
      const network = baseUrls
        ? m.network.resolveNetwork(a, environment, baseUrls, request.settings.localAddresses)
        : undefined;
      return await m.execute.executeRun(network ? { ...request, settings: { ...request.settings, network } } : request);
    } catch (thrown) {
      const err = m.errors.isBreError(thrown) ? thrown : m.errors.internalError(thrown);
      process.stderr.write(`bre-batch: ${err.message}\n`);
      return m.errors.exitCodeOf(err);
    } finally {
      process.umask(umask);
    }
  });
  return { code, signal: null, ...text };
}
