/**
 * The one way the CLI runs work on a worker thread: `WorkerThread` on the run's side starts a script by name,
 * sends it messages and hears its answers; `threadPort` is the script's side. A thread's failure crosses only
 * as `{ type: 'failed' }` with errorToJSON (packages/core/src/errors.ts); a crash or an early exit is INTERNAL.
 */
import { existsSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import * as nodeModule from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parentPort, Worker, workerData, type ResourceLimits } from 'node:worker_threads';
import { errorFromJSON, errorToJSON, internalError, type ErrorJSON } from '@bre-batch/core/errors';

/** Each worker script's module under output/ (the bundle's entry `<name>-worker`, scripts/bundle.ts ENTRIES). */
const SCRIPTS = {
  spool: 'spool/spool-worker.js',
  sink: 'sink/sink-worker.js',
  rebuild: 'spool/rebuild-worker.js',
} as const;
export type ScriptName = keyof typeof SCRIPTS;

/**
 * The URL of the worker script `name`: the bundle's `<name>-worker.js` when this module runs from the bundle,
 * else its module under output/ (compiled, or its `.ts` beside it, which startScriptWorker runs through tsx).
 */
export function workerScript(name: ScriptName): URL {
  const bundled = new URL(`./${name}-worker.js`, import.meta.url);
  return existsSync(fileURLToPath(bundled)) ? bundled : new URL(`./${SCRIPTS[name]}`, import.meta.url);
}

/**
 * `js`: the compiled script's URL (workerScript); `resourceLimits`: the thread's own heap limits (its
 * isolate's; the process's flags do not apply to it). From the sources, the `.ts` runs through tsx's loader (a
 * development dependency), registered in the worker first.
 */
export function startScriptWorker(js: URL, data: unknown, resourceLimits?: ResourceLimits): Worker {
  const env = threadEnv();
  if (existsSync(fileURLToPath(js))) return new Worker(js, { workerData: data, resourceLimits, env });
  const boot = {
    tsx: pathToFileURL(nodeModule.createRequire(import.meta.url).resolve('tsx/esm/api')).href.replace(/\.cjs$/, '.mjs'),
    script: js.href.replace(/\.js$/, '.ts'),
  };
  const code =
    'const { workerData: d } = require("node:worker_threads"); import(d.boot.tsx).then((m) => { m.register(); return import(d.boot.script); });';
  return new Worker(code, { eval: true, workerData: { ...(data as object), boot }, resourceLimits, env });
}

/**
 * The thread's environment: the process's (a copy, as Node gives by default) and, when the process keeps its
 * compiled code on disk (bin/bre-batch.js), the same directory, which a thread does not inherit otherwise: the
 * thread then compiles the chunks it shares with the run from that cache too.
 */
function threadEnv(): NodeJS.ProcessEnv {
  // getCompileCacheDir: Node >= 22.8; undefined when the cache is off.
  const { getCompileCacheDir } = nodeModule as { getCompileCacheDir?: () => string | undefined };
  const dir = getCompileCacheDir?.();
  if (!dir || process.env.NODE_COMPILE_CACHE) return process.env;
  // It names the folder of this Node's version under the directory given, which Node would add again.
  const given = basename(dir).startsWith(`v${process.versions.node}-`) ? dirname(dir) : dir;
  return { ...process.env, NODE_COMPILE_CACHE: given };
}

/** What a thread sends when it fails. */
interface ThreadFailed {
  readonly type: 'failed';
  readonly error: ErrorJSON;
}

export interface WorkerThreadOptions<Out> {
  /** Where, in a crash's INTERNAL message: "in the spool's thread". */
  readonly where: string;
  readonly resourceLimits?: ResourceLimits;
  /** The thread works beside the run: it keeps the process alive only while an answer is awaited (`next`). */
  readonly background?: boolean;
  /** Each message but the failure, before any `next` hears it. */
  readonly onMessage?: (m: Out) => void;
  /** The thread's failure, once, when no `next` awaits it and the thread was not ended. */
  readonly onFailure?: (err: Error) => void;
}

/** The run's side of a worker thread: messages `In` to it, `Out` from it. */
export class WorkerThread<In, Out extends { readonly type: string }> {
  readonly #worker: Worker;
  readonly #o: WorkerThreadOptions<Out>;
  #failure: Error | undefined;
  #ended = false;
  #waiting: { accept: (m: Out) => boolean; resolve: (m: Out) => void; reject: (err: Error) => void } | undefined;

  /** `script`: one of the CLI's by name, or a script's URL (the tests'). */
  constructor(script: ScriptName | URL, data: unknown, o: WorkerThreadOptions<Out>) {
    this.#o = o;
    this.#worker = startScriptWorker(script instanceof URL ? script : workerScript(script), data, o.resourceLimits);
    if (o.background) this.#worker.unref();
    this.#worker.on('message', (m: Out | ThreadFailed) =>
      m.type === 'failed' ? this.#fail(errorFromJSON((m as ThreadFailed).error)) : this.#receive(m as Out),
    );
    this.#worker.on('error', (err) => this.#fail(internalError(err, o.where)));
    this.#worker.on('exit', (code) =>
      this.#fail(internalError(new Error(`the thread exited (${code}) before it was done`), o.where)),
    );
  }

  /** The thread's failure, if it failed. */
  get failure(): Error | undefined {
    return this.#failure;
  }

  send(m: In): void {
    if (!this.#ended) this.#worker.postMessage(m);
  }

  /** The next message `accept`s (the process waits for it); rejects with the thread's failure, one before included. */
  next(accept: (m: Out) => boolean): Promise<Out> {
    if (this.#failure) return Promise.reject(this.#failure);
    this.#worker.ref();
    return new Promise<Out>((resolve, reject) => {
      this.#waiting = { accept, resolve, reject };
    }).finally(() => {
      this.#waiting = undefined;
      if (this.#o.background) this.#worker.unref();
    });
  }

  /** Ends the thread: nothing more is told; an answer still awaited fails. */
  async end(): Promise<void> {
    this.#ended = true;
    await this.#worker.terminate();
    this.#waiting?.reject(this.#failure ?? internalError(new Error('the thread was ended'), this.#o.where));
  }

  #receive(m: Out): void {
    this.#o.onMessage?.(m);
    if (this.#waiting?.accept(m)) this.#waiting.resolve(m);
  }

  #fail(err: Error): void {
    if (this.#failure || this.#ended) return;
    this.#failure = err;
    if (this.#waiting) this.#waiting.reject(err);
    else this.#o.onFailure?.(err);
  }
}

/** A worker script's side of its thread: what it was started with, and its messages. */
export interface ThreadPort<Data, In, Out> {
  readonly data: Data;
  post(m: Out): void;
  /** The thread has failed: the run's side meets `err` as it is (errorToJSON). */
  fail(err: unknown): void;
  onMessage(each: (m: In) => void): void;
}

/** The port of the worker thread this script runs on; undefined on the main thread. */
export function threadPort<Data, In, Out>(): ThreadPort<Data, In, Out> | undefined {
  const port = parentPort;
  if (!port) return undefined;
  return {
    data: workerData as Data,
    post: (m) => port.postMessage(m),
    fail: (err) => port.postMessage({ type: 'failed', error: errorToJSON(err) } satisfies ThreadFailed),
    onMessage: (each) => port.on('message', each),
  };
}
