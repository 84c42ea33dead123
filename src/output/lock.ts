/**
 * One writer per output folder. Two runs resuming the same --out at once (a nightly job still running when
 * the next one starts) would both send the rows neither has finished and write them twice, breaking the
 * invariant. The lock is `.state/lock`, created exclusively (O_EXCL), naming its owner: host, pid, and what
 * tells that process apart from a later one given the same pid (the kernel's boot id and the process's start
 * time, from /proc). A lock whose owner is gone (kill -9, power loss, a reboot) is taken over, so a crash
 * never blocks the resume, even when the pid has since been reused by another process; a lock from another
 * host cannot be checked and is reported with what to do.
 */
import { openSync, readFileSync, unlinkSync, writeSync, closeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { BreError } from '@bre-batch/core/errors';

/** What identifies a process beyond its pid, on Linux: a reused pid has another start time or boot. */
export interface ProcessIdentity {
  /** /proc/sys/kernel/random/boot_id: changes at every boot, when every pid starts over. */
  readonly boot: string;
  /** Field 22 of /proc/<pid>/stat: start time in clock ticks after boot, fixed for the process's life. */
  readonly start: string;
}

interface LockInfo {
  readonly pid: number;
  readonly host: string;
  /** When the run started (for messages). */
  readonly started: string;
  /** Absent where /proc is not available, and in locks written before the identity was recorded. */
  readonly boot?: string;
  readonly start?: string;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The identity of a live process, or undefined when it cannot be read (no /proc: macOS; the process is
 * gone) or the process has exited and only awaits its parent (a zombie holds no lock).
 */
export function processIdentity(pid: number): ProcessIdentity | undefined {
  const boot = readText('/proc/sys/kernel/random/boot_id')?.trim();
  const stat = readText(`/proc/${pid}/stat`);
  if (!boot || !stat) return undefined;
  // `pid (comm) state ppid ...`: comm may hold spaces and parentheses, so fields are counted after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [state, start] = [fields[0], fields[19]];
  if (state === 'Z' || state === 'X' || !/^\d+$/.test(start ?? '')) return undefined;
  return { boot, start };
}

function readLock(path: string): LockInfo | undefined {
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockInfo>;
    if (typeof v.pid !== 'number' || typeof v.host !== 'string') return undefined;
    return {
      pid: v.pid,
      host: v.host,
      started: String(v.started ?? ''),
      ...(typeof v.boot === 'string' && typeof v.start === 'string' ? { boot: v.boot, start: v.start } : {}),
    };
  } catch {
    return undefined; // torn or empty (killed while writing it): stale
  }
}

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether this system has /proc to tell processes apart (Linux); elsewhere a live pid is all we know. */
const HAS_PROC = readText('/proc/self/stat') !== undefined;

/**
 * Whether the lock's owner (on this host) is still running: its pid exists and, where /proc tells, it is
 * the same process (same boot, same start time), whatever its name. Where that cannot be told (no /proc, or
 * a lock without an identity), a live pid counts as the owner: refusing costs a message, taking over a live
 * run's folder would cost the invariant.
 */
function ownerAlive(held: LockInfo): boolean {
  if (!pidExists(held.pid)) return false;
  const now = processIdentity(held.pid);
  if (now === undefined) return !HAS_PROC; // with /proc: exited meanwhile, or a zombie
  if (held.boot === undefined || held.start === undefined) return true;
  return now.boot === held.boot && now.start === held.start;
}

function create(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o644);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    const info: LockInfo = {
      pid: process.pid,
      host: hostname(),
      started: new Date().toISOString(),
      ...processIdentity(process.pid),
    };
    writeSync(fd, JSON.stringify(info));
  } catch (err) {
    // An empty lock (a full disk) would be taken over as torn anyway; it is not left behind.
    closeSync(fd);
    unlinkSync(path);
    throw err;
  }
  closeSync(fd);
  return true;
}

/** Takes the lock of `dir` (its `.state` folder must exist); returns the function that releases it. */
export function lockOutput(dir: string): () => void {
  const path = join(dir, '.state', 'lock');
  const release = () => {
    if (readLock(path)?.pid === process.pid) {
      try {
        unlinkSync(path);
      } catch {
        /* already gone */
      }
    }
  };
  for (let attempt = 0; attempt < 3; attempt += 1) {
    if (create(path)) return release;
    const held = readLock(path);
    if (held && held.pid !== process.pid) {
      if (held.host !== hostname()) {
        throw new BreError(
          'OUTPUT_MISMATCH',
          `refusing to write into ${dir}: a bre-batch run on host ${held.host} (pid ${held.pid}, started ${held.started}) holds it. If no run is active there any more, delete ${path} and run again.`,
        );
      }
      if (ownerAlive(held)) {
        const unsure =
          held.start === undefined
            ? ` (the lock does not say which process started with that pid: if no run is active, delete ${path} and run again)`
            : '';
        throw new BreError(
          'OUTPUT_MISMATCH',
          `refusing to write into ${dir}: another bre-batch run (pid ${held.pid}, started ${held.started}) is writing to it. Wait for it to finish, or stop it (it resumes later), then run again${unsure}.`,
        );
      }
    }
    // Stale (its process is gone), torn, or our own: take it over.
    try {
      unlinkSync(path);
    } catch {
      /* another process took it over first: the next create() tells */
    }
  }
  throw new BreError(
    'OUTPUT_MISMATCH',
    `refusing to write into ${dir}: could not take ${path}; another run may be starting on it`,
  );
}
