/**
 * A script's worker thread (src/output/worker-thread.ts): its messages both ways, its failures (sent, a crash,
 * an early exit) as errors of the run's side; the heap limits it is given, compiled or from
 * its TypeScript through tsx; the spool's are below the 2 GB from which V8 lets the old generation grow to 4
 * times what is alive (src/output/spool/spool-thread.ts SPOOL_RESOURCE_LIMITS).
 */
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import * as nodeModule from 'node:module';
import { writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SPOOL_RESOURCE_LIMITS } from '../../src/output/spool/spool-thread.js';
import { startScriptWorker, workerScript, WorkerThread } from '../../src/output/worker-thread.js';
import { BreError, diskFullCode, diskFullError, errorToJSON } from '@bre-batch/core/errors';
import { ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

/** A script that tells where its thread keeps compiled code (null: nowhere). */
const CACHE_DIR = `import { parentPort } from 'node:worker_threads';
import * as m from 'node:module';
parentPort.postMessage(m.getCompileCacheDir?.() ?? null);
`;

/** The process: the cache turned on in the directory it is given, then a thread started as the CLI starts one (dist/). */
const CACHE_PARENT = `import * as m from 'node:module';
import { pathToFileURL } from 'node:url';
m.enableCompileCache?.(process.argv[2]);
const { startScriptWorker } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist', 'output', 'worker-thread.js')).href)});
const thread = startScriptWorker(pathToFileURL('cache-dir.mjs'), {});
thread.once('message', (d) => {
  process.stdout.write(JSON.stringify({ parent: m.getCompileCacheDir?.() ?? null, thread: d }));
  void thread.terminate();
});
`;

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

  it('keeps its compiled code where the process keeps its own (Node >= 22.8; none before, nor when turned off)', () => {
    // A process of its own: the compile cache is the process's, which bin/bre-batch.js turns on.
    writeFileSync(join(dir, 'cache-dir.mjs'), CACHE_DIR);
    writeFileSync(join(dir, 'cache-parent.mjs'), CACHE_PARENT);
    const run = (env: NodeJS.ProcessEnv) => {
      const cache = join(dir, `cache-${Object.keys(env).length}`);
      const r = spawnSync(process.execPath, ['cache-parent.mjs', cache], {
        env: { ...process.env, NODE_COMPILE_CACHE: '', ...env },
        encoding: 'utf8',
        cwd: dir,
      });
      expect(r.stderr).toBe('');
      return { cache, ...(JSON.parse(r.stdout) as { parent: string | null; thread: string | null }) };
    };
    const on = run({});
    // enableCompileCache: Node >= 22.8 (this project's @types/node are Node 20's).
    const cacheable = typeof (nodeModule as { enableCompileCache?: unknown }).enableCompileCache === 'function';
    // Node names a folder of its version inside the directory it was given.
    const inside = (d: string | null) => (d === null ? null : !relative(on.cache, d).startsWith('..'));
    expect(inside(on.parent)).toBe(cacheable ? true : null);
    expect(on.thread).toBe(on.parent);
    const off = run({ NODE_DISABLE_COMPILE_CACHE: '1' });
    expect(off).toMatchObject({ parent: null, thread: null });
  });

  it("names its scripts beside the module: from the sources, <folder>/<name>-worker (the bundle's <name>-worker.js is the e2e tests')", () => {
    expect(workerScript('spool').pathname).toMatch(/\/src\/output\/spool\/spool-worker\.js$/);
    expect(workerScript('sink').pathname).toMatch(/\/src\/output\/sink\/sink-worker\.js$/);
    expect(workerScript('rebuild').pathname).toMatch(/\/src\/output\/spool\/rebuild-worker\.js$/);
  });
});

/** A script that answers each message, or fails as it is told (workerData.failWith: sent; crash; exit). */
const ANSWER = `import { parentPort, workerData } from 'node:worker_threads';
parentPort.on('message', (m) => {
  if (m.type === 'echo') parentPort.postMessage({ type: 'echoed', n: m.n });
  else if (m.type === 'fail') parentPort.postMessage({ type: 'failed', error: workerData.failWith });
  else if (m.type === 'crash') throw new TypeError('a bug in the script');
  else if (m.type === 'exit') process.exit(3);
});
`;

type ToScript = { readonly type: 'echo'; readonly n: number } | { readonly type: 'fail' | 'crash' | 'exit' };
type FromScript = { readonly type: 'echoed'; readonly n: number };

describe('a worker thread (WorkerThread, threadPort)', () => {
  const dir = tempDir('bre-bridge-');
  const script = join(dir, 'answer.mjs');
  writeFileSync(script, ANSWER);
  const failWith = errorToJSON(
    diskFullError('/out', Object.assign(new Error('no space'), { code: 'ENOSPC', path: '/out/x' })),
  );

  function start(onFailure?: (err: Error) => void) {
    const heard: number[] = [];
    const thread = new WorkerThread<ToScript, FromScript>(
      pathToFileURL(script),
      { failWith },
      {
        where: "in the test's thread",
        background: true,
        onMessage: (m) => heard.push(m.n),
        ...(onFailure ? { onFailure } : {}),
      },
    );
    return { thread, heard };
  }

  it('sends, and hears each answer (onMessage first, then the one next() waits for)', async () => {
    const { thread, heard } = start();
    thread.send({ type: 'echo', n: 1 });
    thread.send({ type: 'echo', n: 2 });
    const m = await thread.next((x) => x.n === 2);
    expect(m).toEqual({ type: 'echoed', n: 2 });
    expect(heard).toEqual([1, 2]);
    await thread.end();
  });

  it('a failure the thread sends reaches next() as the error it was (code, cause), and later next() too', async () => {
    const { thread } = start();
    thread.send({ type: 'fail' });
    const err = await thread.next(() => true).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BreError);
    expect((err as BreError).code).toBe('DISK_FULL');
    expect(diskFullCode(err)).toBe('ENOSPC');
    await expect(thread.next(() => true)).rejects.toBe(err);
    await thread.end();
  });

  it('a crash is INTERNAL naming the thread; with nobody waiting it goes to onFailure, once', async () => {
    const told: Error[] = [];
    const { thread } = start((e) => told.push(e));
    thread.send({ type: 'crash' });
    await waitFor(() => told.length > 0, 10_000, 'the failure');
    expect((told[0] as BreError).code).toBe('INTERNAL');
    expect(told[0]!.message).toContain("bre-batch met a bug in the test's thread: a bug in the script");
    await waitFor(() => thread.failure !== undefined, 10_000, 'the exit');
    expect(told).toHaveLength(1);
    await thread.end();
  });

  it('an exit before it was ended is INTERNAL with the exit code', async () => {
    const { thread } = start();
    thread.send({ type: 'exit' });
    const err = (await thread.next(() => true).catch((e: unknown) => e)) as BreError;
    expect(err.code).toBe('INTERNAL');
    expect(err.message).toContain('the thread exited (3) before it was done');
  });

  it('once ended, nothing more is told and an answer still awaited fails', async () => {
    const told: Error[] = [];
    const { thread } = start((e) => told.push(e));
    const waiting = thread.next(() => false).catch((e: unknown) => e);
    await thread.end();
    expect(((await waiting) as BreError).code).toBe('INTERNAL');
    expect(told).toEqual([]);
  });
});
