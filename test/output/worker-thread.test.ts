/**
 * A script's worker thread (src/output/worker-thread.ts) gets the heap limits it is given, compiled or from
 * its TypeScript through tsx; the spool's are below the 2 GB from which V8 lets the old generation grow to 4
 * times what is alive (src/output/spool/thread.ts SPOOL_RESOURCE_LIMITS).
 */
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SPOOL_RESOURCE_LIMITS } from '../../src/output/spool/thread.js';
import { startScriptWorker, workerScript } from '../../src/output/worker-thread.js';
import { tempDir } from '../helpers/temp.js';

const REPORT = `import { parentPort, resourceLimits } from 'node:worker_threads';
import { getHeapStatistics } from 'node:v8';
parentPort.postMessage({ limits: resourceLimits, heapLimitMb: getHeapStatistics().heap_size_limit / 2 ** 20 });
`;

async function limitsOf(script: URL, limits?: Parameters<typeof startScriptWorker>[2]) {
  const worker = startScriptWorker(script, {}, limits);
  const [m] = (await once(worker, 'message')) as [{ limits: { maxOldGenerationSizeMb: number }; heapLimitMb: number }];
  await worker.terminate();
  return m;
}

describe('a script on its own thread', () => {
  const dir = tempDir('bre-worker-');

  it('compiled (.js): its heap is limited as asked, and not without', async () => {
    const js = join(dir, 'report.mjs');
    writeFileSync(js, REPORT);
    const limited = await limitsOf(pathToFileURL(js), SPOOL_RESOURCE_LIMITS);
    expect(limited.limits.maxOldGenerationSizeMb).toBe(SPOOL_RESOURCE_LIMITS.maxOldGenerationSizeMb);
    expect(limited.heapLimitMb).toBeLessThan(2048);
    const free = await limitsOf(pathToFileURL(js));
    expect(free.limits.maxOldGenerationSizeMb).not.toBe(SPOOL_RESOURCE_LIMITS.maxOldGenerationSizeMb);
  });

  it('from its TypeScript (no .js beside it): the same limits', async () => {
    // An ES module, as the sources are (tsx reads the nearest package.json).
    writeFileSync(join(dir, 'package.json'), '{ "type": "module" }');
    writeFileSync(join(dir, 'typed.ts'), REPORT.replace('parentPort.', 'parentPort!.'));
    const limited = await limitsOf(pathToFileURL(join(dir, 'typed.js')), SPOOL_RESOURCE_LIMITS);
    expect(limited.limits.maxOldGenerationSizeMb).toBe(SPOOL_RESOURCE_LIMITS.maxOldGenerationSizeMb);
    expect(limited.heapLimitMb).toBeLessThan(2048);
  });

  it("names its scripts beside the module: from the sources, <name>/worker (the bundle's <name>-worker.js is the e2e tests')", () => {
    expect(workerScript('spool').pathname).toMatch(/\/src\/output\/spool\/worker\.js$/);
    expect(workerScript('sink').pathname).toMatch(/\/src\/output\/sink\/worker\.js$/);
    expect(workerScript('end').pathname).toMatch(/\/src\/output\/spool\/end-worker\.js$/);
  });
});
