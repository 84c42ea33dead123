/**
 * How a run stops. A stop (a signal, 401/403, the circuit breaker, a failing disk) first stops taking rows
 * and abandons attempts still queued; calls already sent may finish for --stop-grace, then are abandoned too.
 * A second signal abandons them at once.
 */
import type { Log } from '../log/logger.js';
import { setMaxListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import { BreError, diskFullCode, diskFullError, isBreError, outputUnwritable } from '@bre-batch/core/errors';

/**
 * Why a run stops when its output folder cannot be written: DISK_FULL on a full disk (ENOSPC, EDQUOT),
 * OUTPUT_UNWRITABLE for any other failure of the folder (an I/O error, a file-size limit). Exit 3 either way:
 * a re-run resumes. A thread that met the failure has already said which (its BreError is kept).
 */
export function writeFailureStop(outDir: string, err: unknown): BreError {
  if (isBreError(err) && (err.code === 'DISK_FULL' || err.code === 'OUTPUT_UNWRITABLE')) return err;
  if (diskFullCode(err)) return diskFullError(outDir, err);
  return outputUnwritable(outDir, err);
}

/** How often the run looks whether the shell that started it is still there. */
const LAUNCHER_CHECK_MS = 500;

const SHELLS = new Set(['sh', 'dash', 'bash', 'zsh', 'ksh', 'mksh', 'ash', 'busybox']);

/**
 * Whether a process's command line (argv) is a shell running a command string (`sh -c '...'`): cron's
 * way of running a job line, and npm's of running `npx` and `npm start`. Such a shell dies of a SIGTERM
 * (or SIGINT) without passing it on to the command it waits for, so the run would go on unseen.
 */
export function isShellCommandLauncher(argv: readonly string[]): boolean {
  const name = (argv[0] ?? '').replace(/^-/, '').split('/').pop() ?? '';
  return SHELLS.has(name) && argv.slice(1).some((a) => /^-[a-z]*c[a-z]*$/.test(a));
}

/**
 * Whether this process was set apart from its launcher on purpose: started under nohup (SIGHUP ignored), as
 * a session leader (setsid), or by a command string that puts it in the background (a trailing `&`).
 */
export function detachedOnPurpose(status: string, stat: string, launcherArgv: readonly string[]): boolean {
  const ignored = /^SigIgn:\s*([0-9a-f]+)$/m.exec(status)?.[1];
  if (ignored !== undefined && (BigInt(`0x${ignored}`) & 1n) === 1n) return true; // bit 0 is SIGHUP (1)
  // `pid (comm) state ppid pgrp session ...`: comm may hold spaces, so fields are counted after the last ')'.
  const [, , , session] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (session !== undefined && Number(session) === process.pid) return true;
  const script = launcherArgv[launcherArgv.length - 1] ?? '';
  return /&\s*$/.test(script) && !/&&\s*$/.test(script);
}

/** The pid of this process's parent when it is such a shell and the run is not detached (Linux: /proc); else undefined. */
function shellLauncher(): number | undefined {
  const ppid = process.ppid;
  if (ppid <= 1) return undefined;
  try {
    const argv = readFileSync(`/proc/${ppid}/cmdline`, 'utf8')
      .split('\0')
      .filter((a) => a !== '');
    if (!isShellCommandLauncher(argv)) return undefined;
    return detachedOnPurpose(readFileSync('/proc/self/status', 'utf8'), readFileSync('/proc/self/stat', 'utf8'), argv)
      ? undefined
      : ppid;
  } catch {
    return undefined;
  }
}

/**
 * Read when this module loads, at start-up: a launcher killed while the run is still starting (reading its
 * input, starting the sandbox) has already gone by the time the run listens, and is noticed then.
 */
const LAUNCHER = shellLauncher();

export class RunStop {
  /** Aborted at the stop: no new rows, queued attempts and backoff sleeps give up. */
  readonly #soft = new AbortController();
  /** Aborted after the grace period: calls in flight are abandoned. */
  readonly #hard = new AbortController();
  #reason: BreError | undefined;
  #grace: NodeJS.Timeout | undefined;

  constructor(private readonly graceMs: number) {
    // Every call in flight listens on these two signals: hundreds of listeners is expected, not a leak.
    setMaxListeners(0, this.#soft.signal, this.#hard.signal);
  }

  get signal(): AbortSignal {
    return this.#soft.signal;
  }

  get hardSignal(): AbortSignal {
    return this.#hard.signal;
  }

  /** Why the run stopped; undefined while it goes on. */
  get reason(): BreError | undefined {
    return this.#reason;
  }

  request(why: BreError): void {
    if (this.#reason) return;
    this.#reason = why;
    this.#soft.abort(why);
    this.#grace = setTimeout(() => this.#hard.abort(why), this.graceMs);
    this.#grace.unref();
  }

  /**
   * SIGINT and SIGTERM stop the run; a second one abandons the calls in flight. Returns the function that
   * removes the handlers.
   */
  listen(log: Log): () => void {
    const onSignal = (sig: NodeJS.Signals) => {
      if (this.#reason) {
        this.#hard.abort();
        return;
      }
      log(
        `${sig} received: finishing the calls in flight (up to ${Math.round(this.graceMs / 1000)} s), then stopping; re-run the same command to resume`,
        { level: 'warn', code: 'INTERRUPTED' },
      );
      this.request(new BreError('INTERRUPTED', `interrupted by ${sig}`));
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    // A shell launcher (`sh -c`: cron, npx, npm start) that got the signal dies without passing it on: its
    // going (this process handed to another parent) is taken as that signal. Not any parent: a run left
    // behind on purpose (nohup, `&` in a login shell) keeps going when that shell exits.
    const launcher = LAUNCHER;
    const check = () => {
      if (launcher === undefined || process.ppid === launcher || this.#reason) return;
      log(
        `the shell that started bre-batch (pid ${launcher}) has gone, most likely stopped by a signal it did not pass on: stopping as on SIGTERM; re-run the same command to resume`,
        { level: 'warn', code: 'INTERRUPTED' },
      );
      this.request(new BreError('INTERRUPTED', `interrupted: the shell that started it (pid ${launcher}) has gone`));
    };
    check();
    const watch = launcher === undefined ? undefined : setInterval(check, LAUNCHER_CHECK_MS);
    watch?.unref();
    return () => {
      clearInterval(watch);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    };
  }

  /** Nothing is in flight any more: the grace timer has nothing left to abandon. */
  dispose(): void {
    clearTimeout(this.#grace);
  }
}
