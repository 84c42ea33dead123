/**
 * `run`'s options, a family a file (the groups of `run --help`), and the one pure function that turns the
 * parsed arguments into a RunRequest: no read of the environment or the disk but through the context it is
 * given (test/cli/options/ tests it option by option). A new option goes in its family's file: its yargs
 * definition beside its resolution.
 */
import type { RunRequest } from '../../app/run-request.js';
import { endpointsFromEnv } from '../credentials.js';
import { CONTROL_OPTIONS, resolveControl, type ControlArgs } from './control.js';
import { DATABASE_OPTIONS, resolveDbInput, resolveRunSink, type DatabaseArgs } from './database.js';
import type { OptionFamily, OptionsContext } from './family.js';
import { INPUT_OPTIONS, resolveInput, type InputArgs } from './input.js';
import { JOB_OPTIONS, resolveJob, type JobArgs } from './job.js';
import { LIMITS_OPTIONS, resolveLimits, type LimitsArgs } from './limits.js';
import { MONITORING_OPTIONS, resolveMonitoring, type MonitoringArgs } from './monitoring.js';
import { NETWORK_FAMILY, type NetworkArgs } from './network.js';
import { OUTPUT_OPTIONS, resolveOutput, type OutputArgs } from './output.js';
import { resolveSampling, SAMPLING_OPTIONS, type SamplingArgs } from './sampling.js';
import { resolveSpend, SPEND_OPTIONS, type SpendArgs } from './spend.js';

export type { OptionsContext } from './family.js';

/** In the order `run --help` shows them: what a first run needs first. */
export const RUN_OPTION_FAMILIES: readonly OptionFamily[] = [
  INPUT_OPTIONS,
  OUTPUT_OPTIONS,
  LIMITS_OPTIONS,
  NETWORK_FAMILY,
  DATABASE_OPTIONS,
  SAMPLING_OPTIONS,
  MONITORING_OPTIONS,
  CONTROL_OPTIONS,
  SPEND_OPTIONS,
  JOB_OPTIONS,
];

export interface RunArgs
  extends InputArgs,
    DatabaseArgs,
    OutputArgs,
    LimitsArgs,
    NetworkArgs,
    SamplingArgs,
    MonitoringArgs,
    ControlArgs,
    SpendArgs,
    JobArgs {
  pipeline: string;
}

/** `resumeCommand`: the command that resumes this run, as typed (src/cli/resume-command.ts). */
export function resolveRunRequest(a: RunArgs, ctx: OptionsContext, resumeCommand = ''): RunRequest {
  const pipeline = ctx.loadPipeline(a.pipeline);
  const source = resolveDbInput(a, ctx);
  const input = resolveInput(a, source, ctx);
  const limits = resolveLimits(a, ctx);
  const sampling = resolveSampling(a);
  const control = resolveControl(a, pipeline.expectVersion);
  const job = resolveJob(a, ctx);
  const output = resolveOutput(a, job !== undefined, ctx.env);
  const monitoring = resolveMonitoring(a);
  const sink = resolveRunSink(a, pipeline.name, ctx);
  const spend = resolveSpend(a, pipeline.prices);
  const callsNothing = control.dryRun || control.plan !== undefined;
  return {
    settings: {
      pipeline,
      ...input,
      ...(source ? { source } : {}),
      ...limits,
      ...sampling,
      ...(sink ? { sink } : {}),
      ...spend,
      outputFormats: output.outputFormats,
      keepPersonalData: output.keepPersonalData,
      ...(output.rowGroupRows ? { rowGroupRows: output.rowGroupRows } : {}),
      retryErrors: output.retryErrors,
      ...(job ? { job } : {}),
      dryRun: control.dryRun,
      circuit: control.circuit,
      stopGraceMs: control.stopGraceMs,
      ...(control.expectVersion ? { expectVersion: control.expectVersion } : {}),
      progress: monitoring.progress,
    },
    out: output.out,
    keepJournal: output.keepJournal,
    resumeCommand,
    endpoints: endpointsFromEnv(ctx.env, callsNothing, ctx.readSecretFile),
    ...(control.plan ? { plan: control.plan } : {}),
    // --plan starts nothing: the metrics are the run's.
    ...(monitoring.metrics && !control.plan ? { metrics: monitoring.metrics } : {}),
    logFormat: monitoring.logFormat,
  };
}
