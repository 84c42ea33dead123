/**
 * The settings of an in-process run of the `location` pipeline against a test sandbox: the defaults the
 * pipeline tests share (limits off, one attempt, no progress bar, nothing logged), each test giving what it
 * is about in `more`.
 */
import type { Sandbox } from '@bre-batch/sandbox';
import { perService } from '@bre-batch/core/types';
import { loadPipeline } from '../../src/config/pipeline.js';
import { resolveFilesRoot } from '../../src/input/files-root.js';
import { DEFAULT_CIRCUIT } from '../../src/pipeline/circuit.js';
import type { RunSettings } from '../../src/pipeline/settings.js';

export function locationSettings(
  sandbox: Sandbox,
  input: string,
  outDir: string,
  more: Partial<RunSettings> = {},
): RunSettings {
  return {
    pipeline: loadPipeline('location'),
    input,
    inputFormat: 'csv',
    filesRoot: resolveFilesRoot(undefined, input),
    outDir,
    rates: perService(() => null),
    concurrency: perService(() => 4),
    timeoutsMs: perService(() => 10_000),
    maxAttempts: 1,
    dryRun: false,
    retryErrors: false,
    progress: false,
    clientId: sandbox.clientId,
    authToken: sandbox.authToken,
    baseUrls: sandbox.urls,
    keepPersonalData: false,
    circuit: DEFAULT_CIRCUIT,
    stopGraceMs: 1000,
    log: () => undefined,
    outputFormats: new Set(['csv']),
    ...more,
  };
}
