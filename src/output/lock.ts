/**
 * One writer per output folder. Two runs resuming the same --out at once (a nightly job still running when
 * the next one starts) would both send the rows neither has finished and write them twice, breaking the
 * invariant. The lock is `.state/lock`, created exclusively (O_EXCL), holding the owner's pid and host.
 * A lock left by a process that is gone (kill -9, power loss) is taken over, so a crash never blocks the
 * resume; a lock from another host cannot be checked and is reported with what to do.
 */
import { openSync, readFileSync, unlinkSync, writeSync, closeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { BreError } from '../errors.js';

interface LockInfo {
  readonly pid: number;
  readonly host: string;
  readonly started: string;
}

function readLock(path: string): LockInfo | undefined {
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockInfo>;
    return typeof v.pid === 'number' && typeof v.host === 'string' ? { pid: v.pid, host: v.host, started: String(v.started ?? '') } : undefined;
  } catch {
    return undefined; // torn or empty (killed while writing it): stale
  }
}

/** Whether `pid` is a live bre-batch process on this host (a reused pid running something else is not). */
function isLiveRun(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmd.includes('bre-batch') || cmd.includes('vitest');
  } catch {
    return true; // no /proc (macOS): the pid is alive, assume it is ours
  }
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
    writeSync(fd, JSON.stringify({ pid: process.pid, host: hostname(), started: new Date().toISOString() }));
  } finally {
    closeSync(fd);
  }
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
        throw new BreError('OUTPUT_MISMATCH', `refusing to write into ${dir}: a bre-batch run on host ${held.host} (pid ${held.pid}, started ${held.started}) holds it. If no run is active there any more, delete ${path} and run again.`);
      }
      if (isLiveRun(held.pid)) {
        throw new BreError('OUTPUT_MISMATCH', `refusing to write into ${dir}: another bre-batch run (pid ${held.pid}, started ${held.started}) is writing to it. Wait for it to finish, or stop it (it resumes later), then run again.`);
      }
    }
    // Stale (its process is gone), torn, or our own: take it over.
    try {
      unlinkSync(path);
    } catch {
      /* another process took it over first: the next create() tells */
    }
  }
  throw new BreError('OUTPUT_MISMATCH', `refusing to write into ${dir}: could not take ${path}; another run may be starting on it`);
}
