import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cpuByFile, durations, render } from '../../scripts/test-durations.js';
import { ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const file = (name: string, startTime: number, endTime: number, tests: number) => ({
  name: join('/repo', name),
  startTime,
  endTime,
  assertionResults: Array.from({ length: tests }, (_, i) => ({
    fullName: `t${i}`,
    duration: 10 * i,
    status: 'passed',
  })),
});
const REPORT = {
  numTotalTests: 4,
  testResults: [file('test/e2e/a.test.ts', 0, 30_000, 1), file('test/unit/b.test.ts', 0, 2_000, 3)],
};

describe('where the suite time goes (scripts/test-durations.ts)', () => {
  it('wall seconds by file and folder, slowest first, without a CPU file', () => {
    const d = durations(REPORT, '/repo');
    expect(d.files.map((f) => [f.file, f.seconds, f.tests])).toEqual([
      ['test/e2e/a.test.ts', 30, 1],
      ['test/unit/b.test.ts', 2, 3],
    ]);
    expect(d.totalSeconds).toBe(32);
    expect(d.totalCpu).toBeUndefined();
    expect(render(d, 5)).not.toContain('cpu-s');
  });

  it('CPU seconds beside them: a file run twice counts twice; a file waiting on rates shows little CPU', () => {
    const cpu = cpuByFile(
      [
        '{"file":"/repo/test/e2e/a.test.ts","self":0.5,"children":1.5}',
        '{"file":"/repo/test/unit/b.test.ts","self":1,"children":0}',
        '{"file":"/repo/test/unit/b.test.ts","self":2,"children":0.5}',
        '',
      ].join('\n'),
      '/repo',
    );
    const d = durations(REPORT, '/repo', cpu);
    expect(d.files.map((f) => f.cpu)).toEqual([2, 3.5]);
    expect(d.totalCpu).toBe(5.5);
    expect(d.folders.map((f) => [f.folder, f.cpu])).toEqual([
      ['test/e2e', 2],
      ['test/unit', 3.5],
    ]);
    const text = render(d, 5);
    expect(text).toContain('5.5 CPU seconds');
    // The CPU list ranks by CPU, not by wall time.
    const cpuList = text.slice(text.indexOf('most CPU'));
    expect(cpuList.indexOf('b.test.ts')).toBeLessThan(cpuList.indexOf('a.test.ts'));
  });

  it("the probe (test/cpu-probe.ts) writes a file's CPU, its spawned processes' included", () => {
    // A child that burns 0.4 s of CPU (by its own count, whatever the load: user and system, as the probe counts
    // it; its loop's calls are system time); the file's line counts it under children.
    const [line] = probed(
      'forks',
      `import { execFileSync } from 'node:child_process';\nimport { it } from 'vitest';\n` +
        `it('burns', () => { execFileSync(process.execPath, ['-e', 'for (let u = process.cpuUsage(); u.user + u.system < 400000; u = process.cpuUsage());']); });\n`,
    );
    expect(line.where).toBe('process');
    expect(line.children).toBeGreaterThanOrEqual(0.3);
  });

  it("on a worker thread, a file's own CPU is its thread's, not the rest of the process's", () => {
    // Another thread of the process burns 1 s of its own CPU while the file's thread waits for it: a reading of
    // the whole process (what a file on a thread shares with the other worker's) would count it. Its user and
    // system ticks (stat's fields 14 and 15), as the probe counts: its loop's reads are mostly system time, and
    // counting user time alone burnt 3-4 CPU-s to reach 1 s of it.
    const burn = `const t = () => { const f = require('node:fs').readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1].split(' '); return Number(f[11]) + Number(f[12]); }; const s = t(); while (t() - s < 100);`;
    const [line] = probed(
      'threads',
      `import { once } from 'node:events';\nimport { Worker } from 'node:worker_threads';\nimport { it } from 'vitest';\n` +
        `it('waits', async () => { await once(new Worker(${JSON.stringify(burn)}, { eval: true }), 'exit'); });\n`,
    );
    expect(line.where).toBe('thread');
    expect(line.self).toBeLessThan(0.6);
  });
});

/** The probe's lines for one test file of `body` run alone by vitest in `pool`. */
function probed(pool: 'forks' | 'threads', body: string): { where: string; self: number; children: number }[] {
  const dir = tempDir('bre-cpu-probe-');
  const out = join(dir, 'cpu.ndjson');
  const test = join(ROOT, 'test', 'scripts', `.probe-${process.pid}-${pool}.test.ts`);
  writeFileSync(test, body);
  try {
    execFileSync(
      process.execPath,
      [
        join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
        'run',
        test,
        '--config',
        join(ROOT, 'test', 'scripts', 'probe.config.ts'),
        `--pool=${pool}`,
      ],
      { cwd: ROOT, env: { ...process.env, BRE_TEST_CPU: out }, stdio: 'pipe' },
    );
  } finally {
    execFileSync('rm', ['-f', test]);
  }
  const lines = readFileSync(out, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(lines).toHaveLength(1);
  expect(lines[0].file).toBe(test);
  return lines;
}
