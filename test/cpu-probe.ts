/**
 * With BRE_TEST_CPU=FILE, each test file appends one line to FILE: the CPU seconds its worker and the
 * processes it spawned and waited for (the CLI, podman, a server) spent on it, read from /proc/self/stat
 * around the file. `npm run test:durations` reads them beside the wall times: wall time waits on rates,
 * CPU time is what the two cores pay.
 *
 * A file on a worker thread (vitest.config.ts's `threads` project) shares its process with the other worker's
 * file and vitest itself, so its own CPU is its thread's (/proc/thread-self/stat): not that of the threads it
 * starts (a run's spool and sink), libuv's pool or the collector's helpers. Its `children` are still the
 * process's: another thread's file reaping a child at the same time is counted in both. `where` says which.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import { afterAll, expect } from 'vitest';

const OUT = process.env.BRE_TEST_CPU;
const TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux this runs on

const WHERE = isMainThread ? 'process' : 'thread';
const STAT = isMainThread ? '/proc/self/stat' : '/proc/thread-self/stat';

/** utime + stime (the process, or the thread) and cutime + cstime (the process's reaped children), in seconds. */
function cpu(): { self: number; children: number } {
  const stat = readFileSync(STAT, 'utf8');
  // Fields after the command's closing parenthesis (a command may hold spaces); n(i) is field i of the line.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const n = (i: number) => Number(f[i - 3]);
  return { self: (n(14) + n(15)) / TICKS_PER_SECOND, children: (n(16) + n(17)) / TICKS_PER_SECOND };
}

if (OUT && process.platform === 'linux') {
  // Taken as the setup file loads, before the test file's imports: those are part of its cost.
  const start = cpu();
  afterAll(() => {
    const end = cpu();
    const file = expect.getState().testPath ?? 'unknown';
    const line = { file, where: WHERE, self: end.self - start.self, children: end.children - start.children };
    appendFileSync(OUT, `${JSON.stringify(line)}\n`);
  });
}
