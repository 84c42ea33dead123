/**
 * With BRE_TEST_CPU=FILE, each test file appends one line to FILE: the CPU seconds its worker and the
 * processes it spawned and waited for (the CLI, podman, a server) spent on it, read from /proc/self/stat
 * around the file. `npm run test:durations` reads them beside the wall times: wall time waits on rates,
 * CPU time is what the two cores pay.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { afterAll, expect } from 'vitest';

const OUT = process.env.BRE_TEST_CPU;
const TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux this runs on

/** utime + stime (the process) and cutime + cstime (its reaped children), in seconds. */
function cpu(): { self: number; children: number } {
  const stat = readFileSync('/proc/self/stat', 'utf8');
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
    const line = { file, self: end.self - start.self, children: end.children - start.children };
    appendFileSync(OUT, `${JSON.stringify(line)}\n`);
  });
}
