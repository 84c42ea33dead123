/**
 * Starts a worker thread from one of the CLI's worker scripts: the bundle's (dist/bundle/, scripts/bundle.ts),
 * the compiled `.js` (dist/), or, when running from the sources (the tests, tsx), its `.ts` loaded through tsx's
 * loader (a development dependency), registered in the worker first. The spool (./spool/thread.ts), the end's
 * rebuild (./spool/end-thread.ts) and the sink (./sink/thread.ts) run on such threads.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, type ResourceLimits } from 'node:worker_threads';

/** Each worker script's module under output/ (the bundle's entry `<name>-worker`, scripts/bundle.ts ENTRIES). */
const SCRIPTS = { spool: 'spool/worker.js', sink: 'sink/worker.js', end: 'spool/end-worker.js' } as const;

/**
 * The URL of the worker script `name`: the bundle's `<name>-worker.js` when this module runs from the bundle,
 * else its module under output/ (compiled, or its `.ts` beside it, which startScriptWorker runs through tsx).
 */
export function workerScript(name: keyof typeof SCRIPTS): URL {
  const bundled = new URL(`./${name}-worker.js`, import.meta.url);
  return existsSync(fileURLToPath(bundled)) ? bundled : new URL(`./${SCRIPTS[name]}`, import.meta.url);
}

/**
 * `js`: the compiled script's URL (workerScript); `resourceLimits`: the thread's own heap limits (its
 * isolate's; the process's flags do not apply to it).
 */
export function startScriptWorker(js: URL, workerData: unknown, resourceLimits?: ResourceLimits): Worker {
  if (existsSync(fileURLToPath(js))) return new Worker(js, { workerData, resourceLimits });
  const boot = {
    tsx: pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api')).href.replace(/\.cjs$/, '.mjs'),
    script: js.href.replace(/\.js$/, '.ts'),
  };
  const code =
    'const { workerData: d } = require("node:worker_threads"); import(d.boot.tsx).then((m) => { m.register(); return import(d.boot.script); });';
  return new Worker(code, { eval: true, workerData: { ...(workerData as object), boot }, resourceLimits });
}
