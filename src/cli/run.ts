/**
 * `bre-batch run <pipeline> --input <file|->`: option parsing only. The options, a family a file, and their
 * pure resolution are in ./run-options/; starting things and running are in src/app/execute-run.ts, loaded when the
 * command runs (its help needs none of it).
 */
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { resolveFilesRoot } from '../input/files-root.js';
import { readOwnerOnlyFile } from './credentials.js';
import { resolveNetwork } from './network-options.js';
// Loaded at start-up, not with the run: it notes the shell that launched this process (cron's or npx's
// `sh -c`) while that shell is still its parent (src/pipeline/stop.ts).
import '../pipeline/stop.js';
import { resumeCommand } from './resume-command.js';
import { resolveRunRequest, RUN_OPTION_FAMILIES, type OptionsContext, type RunArgs } from './run-options/index.js';

export type { RunArgs } from './run-options/index.js';

/** The context of a real command line: this process's environment, clock and disk. */
export async function processContext(withJob = false): Promise<OptionsContext> {
  // Loaded when the command runs: pipelines bring every stage kind, which `run --help` does not need.
  const { loadPipeline } = await import('../config/pipeline.js');
  const { newWorkerId } = withJob ? await import('../job/index.js') : { newWorkerId: () => '' };
  return {
    env: process.env,
    loadPipeline,
    filesRoot: resolveFilesRoot,
    readSecretFile: readOwnerOnlyFile,
    workerId: newWorkerId,
  };
}

export const runCommand: CommandModule<object, RunArgs> = {
  command: 'run <pipeline>',
  describe: 'stream rows through a pipeline and write the output folder',
  builder: (y: Argv) => {
    y.positional('pipeline', {
      type: 'string',
      demandOption: true,
      describe: 'a shipped pipeline name (see `bre-batch pipelines`) or a path to a pipeline file',
    });
    for (const family of RUN_OPTION_FAMILIES)
      y.options(family.options).group(Object.keys(family.options), family.title);
    return y as unknown as Argv<RunArgs>;
  },
  handler: async (a: ArgumentsCamelCase<RunArgs>) => {
    const resolved = resolveRunRequest(
      a,
      await processContext(a.job !== undefined),
      resumeCommand(process.argv.slice(2), process.env),
    );
    // Only the user's base URLs go through proxies and client certificates: the built-in sandbox is in-process.
    const baseUrls = resolved.endpoints.baseUrls;
    const network = baseUrls ? resolveNetwork(a, process.env, baseUrls, resolved.settings.localAddresses) : undefined;
    const request = network ? { ...resolved, settings: { ...resolved.settings, network } } : resolved;
    const { executeRun } = await import('../app/execute-run.js');
    process.exitCode = await executeRun(request);
  },
};
