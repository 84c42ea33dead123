/**
 * One redactor for a command: the run adds its secrets to the one its caller's log scrubs with
 * (app/execute-run.ts hands it over in RunHooks), and makes its own only when it is given none.
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPipeline } from '../../src/config/pipeline.js';
import { folderRoot } from '../../src/input/files-root.js';
import { Redactor } from '../../src/output/redact.js';
import { DEFAULT_CIRCUIT } from '../../src/pipeline/circuit.js';
import { Run } from '../../src/pipeline/run.js';
import type { RunSettings } from '../../src/pipeline/settings.js';
import { perService } from '@bre-batch/core/types';
import { tempDir } from '../helpers/temp.js';

const TOKEN = 'token-of-the-run-0123456789';

function settings(): RunSettings {
  return {
    pipeline: loadPipeline('location'),
    input: resolve(import.meta.dirname, '../../samples/location.csv'),
    inputFormat: 'csv',
    filesRoot: folderRoot(resolve(import.meta.dirname, '../../samples'), false),
    outDir: tempDir('bre-redactor-'),
    rates: perService(() => null),
    concurrency: perService(() => 1),
    timeoutsMs: perService(() => 1_000),
    maxAttempts: 1,
    dryRun: true,
    retryErrors: false,
    progress: false,
    clientId: 'client',
    authToken: TOKEN,
    baseUrls: perService(() => 'http://127.0.0.1:9'),
    keepPersonalData: false,
    circuit: DEFAULT_CIRCUIT,
    stopGraceMs: 1_000,
    log: () => undefined,
    outputFormats: new Set(['csv']),
  };
}

describe("the command's redactor", () => {
  it('is the run’s: the token is added to the one the caller gave', async () => {
    const given = new Redactor();
    const run = await Run.open(settings(), { redactor: given });
    try {
      expect(run.redactor).toBe(given);
      expect(given.scrub(`Bearer ${TOKEN}`)).toBe('Bearer [secret]');
    } finally {
      await run.close('finished');
    }
  });

  it('without one given, the run makes its own', async () => {
    const run = await Run.open(settings());
    try {
      expect(run.redactor.scrub(TOKEN)).toBe('[secret]');
    } finally {
      await run.close('finished');
    }
  });
});
