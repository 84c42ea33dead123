/**
 * `run`'s arguments as yargs gives them to the handler (defaults applied, strict), and a context that reads
 * neither the environment nor the disk: each option family's test resolves options without a process.
 */
import yargs from 'yargs';
import type { Pipeline } from '../../../src/config/pipeline.js';
import { runCommand } from '../../../src/cli/run.js';
import { resolveRunRequest, type OptionsContext, type RunArgs } from '../../../src/cli/run-options/index.js';
import type { RunRequest } from '../../../src/app/run-request.js';

/** `bre-batch run location --input in.csv ARGS...` (a different --input given in ARGS wins). */
export function parseRun(args: readonly string[]): RunArgs {
  const withInput = args.some((a) => a === '--input' || a.startsWith('--input='))
    ? args
    : ['--input', 'in.csv', ...args];
  return parseCommandLine(['run', 'location', ...withInput]);
}

/** The whole command line, as given. */
export function parseCommandLine(argv: readonly string[]): RunArgs {
  return yargs([...argv])
    .command({ ...runCommand, handler: () => undefined } as never)
    .strict()
    .fail((msg, err) => {
      throw err ?? new Error(msg);
    })
    .parseSync() as unknown as RunArgs;
}

export function fakeContext(over: Partial<OptionsContext> = {}): OptionsContext {
  return {
    env: {},
    workerId: () => 'host-1-42',
    loadPipeline: (ref) =>
      ({ name: ref, path: `/pipelines/${ref}.yaml`, stages: [], key: 'reference_id' }) as unknown as Pipeline,
    filesRoot: (given, input) =>
      given !== undefined
        ? { kind: 'folder', path: `/abs/${given}`, real: `/abs/${given}`, given: true }
        : typeof input === 'string' && input !== '-'
          ? { kind: 'folder', path: '/abs', real: '/abs', given: false }
          : { kind: 'none', why: 'no folder' },
    readSecretFile: (path) => {
      throw new Error(`read ${path}: no file is read in these tests`);
    },
    ...over,
  };
}

export function resolveArgs(args: readonly string[], ctx: OptionsContext = fakeContext()): RunRequest {
  return resolveRunRequest(parseRun(args), ctx);
}

/** The USAGE error `args` are refused with. */
export function refusal(args: readonly string[], ctx?: OptionsContext): { code: string; message: string } {
  try {
    resolveArgs(args, ctx);
  } catch (err) {
    return { code: (err as { code?: string }).code ?? 'none', message: (err as Error).message };
  }
  throw new Error(`${args.join(' ')} was accepted`);
}
