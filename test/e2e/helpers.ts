/**
 * Shared helpers for the end-to-end tests: spawn the built CLI (vitest's global setup builds dist/ first), start a
 * sandbox with a distinctive token, count successful calls per row key through a small proxy, read an output
 * folder back, and check the contract's invariant (every data row exactly once in results or errors).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'undici';
import { afterAll } from 'vitest';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.js';

export const ROOT = resolve(import.meta.dirname, '..', '..');
export const BIN = join(ROOT, 'bin', 'bre-batch.js');

const tempDirs: string[] = [];

// Each test file gets its own copy of this module: its folders go when its tests are done.
afterAll(() => {
  if (process.env.BRE_KEEP_TEST_OUTPUT) return;
  for (const d of tempDirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A fresh folder under the system temp dir, removed after the test file (BRE_KEEP_TEST_OUTPUT=1 keeps it). */
export function tempDir(prefix = 'bre-e2e-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls `cond` every 25 ms until it holds; throws after `timeoutMs`. */
export async function waitFor(cond: () => boolean, timeoutMs: number, what = 'condition'): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(25);
  }
}

// ------------------------------------------------------------------------------------------- the CLI

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

export interface RunningCli {
  readonly child: ChildProcess;
  /** Settles when the process has exited (killed or not). */
  readonly done: Promise<CliResult>;
  stdout(): string;
  stderr(): string;
}

export interface SpawnOptions {
  /** Kill (SIGKILL) after this long; the result then has signal 'SIGKILL'. Default 120 s. */
  readonly timeoutMs?: number;
  readonly cwd?: string;
  /** Written to stdin, which is then closed. */
  readonly stdin?: string | Buffer;
  /**
   * Largest file the CLI may write, in KiB (bash `ulimit -f`): a write past it fails with EFBIG, the way a
   * full disk fails with ENOSPC (Node ignores SIGXFSZ), without needing root to mount a small filesystem.
   */
  readonly fileSizeLimitKb?: number;
}

/**
 * The environment of a child CLI: the parent's, minus every variable that could point it elsewhere or give
 * it credentials, plus `env` (undefined values remove a variable).
 */
export function cliEnv(env: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['BRE_BASE_URL', 'BUREAU_BASE_URL', 'ACCOUNT_BASE_URL', 'BRE_CLIENT_ID', 'BRE_AUTH_TOKEN', 'BRE_AUTH_TOKEN_FILE', 'BRE_DEBUG']) delete out[k];
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete out[k];
    else out[k] = v;
  }
  return out;
}

/** Starts `bre-batch <args>`; the caller may signal `child` and awaits `done`. */
export function startCli(args: readonly string[], env: Record<string, string | undefined> = {}, opts: SpawnOptions = {}): RunningCli {
  const started = Date.now();
  const [cmd, argv] = opts.fileSizeLimitKb === undefined
    ? [process.execPath, [BIN, ...args]]
    : ['bash', ['-c', `ulimit -f ${opts.fileSizeLimitKb} && exec "$0" "$@"`, process.execPath, BIN, ...args]];
  const child = spawn(cmd, argv, { cwd: opts.cwd ?? ROOT, env: cliEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => { out += d; });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => { err += d; });
  child.stdin!.on('error', () => undefined);
  if (opts.stdin !== undefined) child.stdin!.end(opts.stdin);
  else child.stdin!.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
  const done = new Promise<CliResult>((resolvePromise, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout: out, stderr: err, ms: Date.now() - started });
    });
  });
  return { child, done, stdout: () => out, stderr: () => err };
}

export function spawnCli(args: readonly string[], env: Record<string, string | undefined> = {}, opts: SpawnOptions = {}): Promise<CliResult> {
  return startCli(args, env, opts).done;
}

/** Waits until `path` has `n` complete lines while `run` is running; fails with its stderr if it exits first. */
export async function waitForLines(run: RunningCli, path: string, n: number, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (countLines(path) >= n) return;
    if (run.child.exitCode !== null || run.child.signalCode !== null) {
      throw new Error(`the CLI exited (${run.child.exitCode ?? run.child.signalCode}) before ${path} had ${n} lines:\n${run.stderr()}`);
    }
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${n} lines in ${path} (has ${countLines(path)}); stderr:\n${run.stderr()}`);
    await sleep(25);
  }
}

// --------------------------------------------------------------------------------------- the sandbox

export interface TestSandbox {
  readonly sandbox: Sandbox;
  readonly token: string;
  /** Environment for the CLI pointing every service at `url` (default: the sandbox itself). */
  env(url?: string, extra?: Record<string, string | undefined>): Record<string, string | undefined>;
  close(): Promise<void>;
}

/** A sandbox with a distinctive token (`tok` + random hex), so a test can search outputs for it. */
export async function startTestSandbox(opts: SandboxOptions = {}): Promise<TestSandbox> {
  const token = opts.authToken ?? `tok${randomBytes(12).toString('hex')}`;
  const sandbox = await startSandbox({ clientId: 'e2eclient', ...opts, authToken: token });
  return {
    sandbox,
    token,
    env: (url = sandbox.url, extra = {}) => ({
      BRE_BASE_URL: url, BUREAU_BASE_URL: url, ACCOUNT_BASE_URL: url,
      BRE_CLIENT_ID: sandbox.clientId, BRE_AUTH_TOKEN: token, ...extra,
    }),
    close: () => sandbox.close(),
  };
}

// -------------------------------------------------------------------------------- the counting proxy

export interface CountingProxy {
  readonly url: string;
  /** `<path> <reference_id>` -> 2xx answers with a JSON body that were delivered to the client in full. */
  readonly successes: Map<string, number>;
  /** Every request seen, and those whose upstream answer was 2xx but not JSON (malformed). */
  readonly counts: { requests: number; delivered2xx: number; malformed2xx: number; abandoned: number };
  /** Requests received whose answer has not been sent in full yet (in flight at this proxy). */
  inflight(): number;
  /** Keys answered successfully more than once, with their counts. */
  repeated(): Map<string, number>;
  /** Forgets every count (between tests that reuse row keys). */
  reset(): void;
  close(): Promise<void>;
}

function referenceOf(body: string): string | undefined {
  try {
    const v = JSON.parse(body) as { reference_id?: unknown };
    return typeof v.reference_id === 'string' ? v.reference_id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A pass-through proxy in front of the sandbox that counts, per reference_id, the successful answers (2xx,
 * JSON body) that actually reached the client: a reset upstream resets the client's connection, and an
 * answer the client hung up on (its time-out, a kill) is not counted, because the client never saw it.
 */
export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const successes = new Map<string, number>();
  const counts = { requests: 0, delivered2xx: 0, malformed2xx: 0, abandoned: 0 };
  const agent = new Agent({ connections: 512, keepAliveTimeout: 10_000 });
  const sockets = new Set<Socket>();
  let open = 0;
  const server = createServer({ keepAlive: true }, (req: IncomingMessage, res: ServerResponse) => {
    counts.requests += 1;
    open += 1;
    res.once('close', () => { open -= 1; });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => undefined);
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const ac = new AbortController();
      let clientGone = false;
      res.on('close', () => {
        if (!res.writableFinished) {
          clientGone = true;
          counts.abandoned += 1;
          ac.abort();
        }
      });
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) {
        if (typeof v === 'string' && !['host', 'connection', 'content-length', 'keep-alive', 'transfer-encoding'].includes(k)) headers[k] = v;
      }
      request(target + (req.url ?? '/'), { method: req.method as 'POST', headers, body: req.method === 'GET' ? undefined : body, dispatcher: agent, signal: ac.signal })
        .then(async (up) => {
          const text = await up.body.text();
          if (clientGone) return;
          const out: Record<string, string> = { 'content-length': String(Buffer.byteLength(text)) };
          for (const k of ['content-type', 'retry-after']) {
            const v = up.headers[k];
            if (typeof v === 'string') out[k] = v;
          }
          const ok = up.statusCode >= 200 && up.statusCode < 300;
          let json = false;
          try { JSON.parse(text); json = true; } catch { /* malformed */ }
          if (ok && !json) counts.malformed2xx += 1;
          res.on('finish', () => {
            if (!ok || !json) return;
            counts.delivered2xx += 1;
            const ref = referenceOf(body);
            if (ref === undefined) return;
            const key = `${req.url} ${ref}`;
            successes.set(key, (successes.get(key) ?? 0) + 1);
          });
          res.writeHead(up.statusCode, out);
          res.end(text);
        })
        .catch(() => {
          // Upstream reset the connection (or the client left): reset the client's too.
          req.socket.destroy();
        });
    });
  });
  server.keepAliveTimeout = 65_000;
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    successes,
    counts,
    inflight: () => open,
    repeated: () => new Map([...successes].filter(([, n]) => n > 1)),
    reset() {
      successes.clear();
      Object.assign(counts, { requests: 0, delivered2xx: 0, malformed2xx: 0, abandoned: 0 });
    },
    async close() {
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      for (const s of sockets) s.destroy();
      await closed;
      await agent.destroy();
    },
  };
}

// ---------------------------------------------------------------------------------- input and output

/** Writes an N-row CSV for the `location` pipeline (reference_id LOC-000001...); returns its path. */
export function locationCsv(dir: string, n: number, name = 'input.csv'): string {
  const lines = ['reference_id,user_id,lead_id,latitude,longitude'];
  for (let i = 1; i <= n; i += 1) {
    const id = String(i).padStart(6, '0');
    // Spread over India (lat 10..30, lon 72..88), deterministic.
    const lat = (10 + ((i * 7919) % 2000) / 100).toFixed(4);
    const lon = (72 + ((i * 104729) % 1600) / 100).toFixed(4);
    lines.push(`LOC-${id},user${id},lead${id},${lat},${lon}`);
  }
  const path = join(dir, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

/** The reference_id of data row `row` of locationCsv. */
export function locationKey(row: number): string {
  return `LOC-${String(row).padStart(6, '0')}`;
}

export interface OutputLine {
  readonly row: number;
  readonly key: unknown;
  readonly [k: string]: unknown;
}

export interface RunFolder {
  readonly results: OutputLine[];
  readonly errors: OutputLine[];
  readonly summary: any;
  /** results.csv lines, header first (empty when the file is missing). */
  readonly csvLines: string[];
  /** Lines of results/errors that did not parse (should be none after a finished run). */
  readonly unparsable: number;
}

function ndjsonLines(path: string): { lines: OutputLine[]; bad: number } {
  if (!existsSync(path)) return { lines: [], bad: 0 };
  const lines: OutputLine[] = [];
  let bad = 0;
  for (const text of readFileSync(path, 'utf8').split('\n')) {
    if (text === '') continue;
    try {
      lines.push(JSON.parse(text) as OutputLine);
    } catch {
      bad += 1;
    }
  }
  return { lines, bad };
}

/** Number of complete lines (ending in \n) in a file; 0 when it does not exist. */
export function countLines(path: string): number {
  if (!existsSync(path)) return 0;
  const buf = readFileSync(path);
  let n = 0;
  for (let i = buf.indexOf(0x0a); i !== -1; i = buf.indexOf(0x0a, i + 1)) n += 1;
  return n;
}

export function readOutput(dir: string): RunFolder {
  const r = ndjsonLines(join(dir, 'results.ndjson'));
  const e = ndjsonLines(join(dir, 'errors.ndjson'));
  const summaryPath = join(dir, 'summary.json');
  const csvPath = join(dir, 'results.csv');
  const csvText = existsSync(csvPath) ? readFileSync(csvPath, 'utf8') : '';
  return {
    results: r.lines,
    errors: e.lines,
    summary: existsSync(summaryPath) ? JSON.parse(readFileSync(summaryPath, 'utf8')) : undefined,
    csvLines: csvText === '' ? [] : csvText.replace(/\n$/, '').split('\n'),
    unparsable: r.bad + e.bad,
  };
}

/**
 * The contract's invariant after a finished run: every data row 1..inputRows appears exactly once across
 * results and errors, never in both, nothing else appears; the summary totals and results.csv agree.
 * Returns a list of problems (empty when it holds) so that a failing test shows all of them.
 */
export function invariantProblems(inputRows: number, out: RunFolder): string[] {
  const problems: string[] = [];
  const seen = new Map<number, string>();
  for (const [file, lines] of [['results', out.results], ['errors', out.errors]] as const) {
    for (const l of lines) {
      if (!Number.isInteger(l.row) || l.row < 1 || l.row > inputRows) problems.push(`${file}: row ${String(l.row)} is not a data row 1..${inputRows}`);
      const before = seen.get(l.row);
      if (before) problems.push(`row ${l.row} appears in ${before} and in ${file}`);
      seen.set(l.row, file);
    }
  }
  const missing: number[] = [];
  for (let i = 1; i <= inputRows; i += 1) if (!seen.has(i)) missing.push(i);
  if (missing.length > 0) problems.push(`${missing.length} rows missing, e.g. ${missing.slice(0, 10).join(', ')}`);
  if (out.unparsable > 0) problems.push(`${out.unparsable} unparsable lines in results/errors`);
  if (out.summary) {
    if (out.summary.rows?.succeeded !== out.results.length) problems.push(`summary rows.succeeded ${out.summary.rows?.succeeded} != ${out.results.length} lines in results.ndjson`);
    if (out.summary.rows?.failed !== out.errors.length) problems.push(`summary rows.failed ${out.summary.rows?.failed} != ${out.errors.length} lines in errors.ndjson`);
  } else problems.push('no summary.json');
  const csvRows = Math.max(0, out.csvLines.length - 1);
  if (out.results.length > 0 && csvRows !== out.results.length) problems.push(`results.csv has ${csvRows} rows, results.ndjson ${out.results.length}`);
  return problems;
}

/** Throws, listing every problem, unless the invariant holds (see invariantProblems). */
export function assertInvariant(inputRows: number, out: RunFolder): void {
  const problems = invariantProblems(inputRows, out);
  if (problems.length > 0) throw new Error(`output invariant broken:\n  ${problems.join('\n  ')}`);
}

/** Every file under `dir` (recursively), with its mode. */
export function filesUnder(dir: string): { path: string; mode: number }[] {
  const out: { path: string; mode: number }[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) out.push(...filesUnder(p));
    else out.push({ path: p, mode: st.mode & 0o777 });
  }
  return out;
}

/** The standard arguments of a `run` in these tests (no progress bar). */
export function runArgs(pipeline: string, input: string, out: string, ...more: string[]): string[] {
  return ['run', pipeline, '--input', input, '--out', out, '--no-progress', ...more];
}
