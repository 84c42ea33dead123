/**
 * The CLI as a user runs it: `node bin/bre-batch.js <args>` (the build in dist/, which vitest's global setup
 * makes before any test runs), with an environment cleaned of anything that could point it elsewhere.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { countLines } from './output.js';
import { sleep } from './wait.js';

export const ROOT = resolve(import.meta.dirname, '..', '..');
export const BIN = join(ROOT, 'bin', 'bre-batch.js');

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
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
  /** The shell's umask for the CLI, in octal (e.g. '000': a user whose files everyone may read). */
  readonly umask?: string;
}

/**
 * The environment of a child CLI: the parent's, minus every variable that could point it elsewhere or give
 * it credentials, plus `env` (undefined values remove a variable).
 */
export function cliEnv(env: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...process.env };
  for (const k of [
    'BRE_BASE_URL',
    'BUREAU_BASE_URL',
    'ACCOUNT_BASE_URL',
    'BRE_CLIENT_ID',
    'BRE_AUTH_TOKEN',
    'BRE_AUTH_TOKEN_FILE',
    'BRE_DEBUG',
    'BRE_ROW_GROUP_ROWS',
    'HTTPS_PROXY',
    'https_proxy',
    'HTTP_PROXY',
    'http_proxy',
    'NO_PROXY',
    'no_proxy',
  ])
    delete out[k];
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete out[k];
    else out[k] = v;
  }
  return out;
}

/** Starts `bre-batch <args>`; the caller may signal `child` and awaits `done`. */
export function startCli(
  args: readonly string[],
  env: Record<string, string | undefined> = {},
  opts: SpawnOptions = {},
): RunningCli {
  const prefix = [
    opts.fileSizeLimitKb === undefined ? '' : `ulimit -f ${opts.fileSizeLimitKb} && `,
    opts.umask === undefined ? '' : `umask ${opts.umask} && `,
  ].join('');
  const [cmd, argv] =
    prefix === ''
      ? [process.execPath, [BIN, ...args]]
      : ['bash', ['-c', `${prefix}exec "$0" "$@"`, process.execPath, BIN, ...args]];
  const child = spawn(cmd, argv, { cwd: opts.cwd ?? ROOT, env: cliEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    err += d;
  });
  child.stdin!.on('error', () => undefined);
  if (opts.stdin !== undefined) child.stdin!.end(opts.stdin);
  else child.stdin!.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
  const done = new Promise<CliResult>((resolvePromise, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout: out, stderr: err });
    });
  });
  return { child, done, stdout: () => out, stderr: () => err };
}

export function spawnCli(
  args: readonly string[],
  env: Record<string, string | undefined> = {},
  opts: SpawnOptions = {},
): Promise<CliResult> {
  return startCli(args, env, opts).done;
}

/** Waits until `path` has `n` complete lines while `run` is running; fails with its stderr if it exits first. */
export async function waitForLines(run: RunningCli, path: string, n: number, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (countLines(path) >= n) return;
    if (run.child.exitCode !== null || run.child.signalCode !== null) {
      throw new Error(
        `the CLI exited (${run.child.exitCode ?? run.child.signalCode}) before ${path} had ${n} lines:\n${run.stderr()}`,
      );
    }
    if (Date.now() > until)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${n} lines in ${path} (has ${countLines(path)}); stderr:\n${run.stderr()}`,
      );
    await sleep(25);
  }
}

/** The standard arguments of a `run` in these tests (no progress bar). */
export function runArgs(pipeline: string, input: string, out: string, ...more: string[]): string[] {
  return ['run', pipeline, '--input', input, '--out', out, '--no-progress', ...more];
}
