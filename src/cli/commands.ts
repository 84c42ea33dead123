/**
 * Every command of `bre-batch`, in the order `--help` lists them. Kept apart from main.ts (which parses
 * process.argv when imported) so that the README test can read the commands' options from the same list.
 */
import { runCommand } from './run.js';
import { sandboxCommand } from './sandbox.js';
import { pipelinesCommand } from './pipelines.js';
import { detectCommand } from './detect.js';
import { compareCommand } from './compare.js';
import { mergeCommand } from './merge.js';
import { reportCommand } from './report.js';
import { loadCommand } from './load.js';
import { jobCommand } from './job.js';

export const commands = [runCommand, sandboxCommand, pipelinesCommand, detectCommand, compareCommand, mergeCommand, loadCommand, jobCommand, reportCommand] as const;
