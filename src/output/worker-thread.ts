/**
 * Starts a worker thread from one of the CLI's worker scripts, `./<name>/worker`: the bundle's `<name>-worker.js`
 * beside this module's chunk (dist/bundle/, scripts/bundle.ts), else the compiled `.js` (dist/), or, when running
 * from the sources (the tests, tsx), its `.ts` loaded through tsx's loader (a development dependency), registered
 * in the worker first. The spool (./spool/thread.ts) and the sink (./sink/thread.ts) run on such threads.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, type ResourceLimits } from 'node:worker_threads';

/** `resourceLimits`: the thread's own heap limits (its isolate's; the process's flags do not apply to it). */
export function startScriptWorker(
  name: 'spool' | 'sink',
  workerData: unknown,
  resourceLimits?: ResourceLimits,
): Worker {
  const bundled = new URL(`./${name}-worker.js`, import.meta.url);
  if (existsSync(fileURLToPath(bundled))) return new Worker(bundled, { workerData, resourceLimits });
  const js = new URL(`./${name}/worker.js`, import.meta.url);
  if (existsSync(fileURLToPath(js))) return new Worker(js, { workerData, resourceLimits });
  const boot = {
    tsx: pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api')).href.replace(/\.cjs$/, '.mjs'),
    script: js.href.replace(/\.js$/, '.ts'),
  };
  const code =
    'const { workerData: d } = require("node:worker_threads"); import(d.boot.tsx).then((m) => { m.register(); return import(d.boot.script); });';
  return new Worker(code, { eval: true, workerData: { ...(workerData as object), boot }, resourceLimits });
}
