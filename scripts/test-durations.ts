/**
 * Where the suite's time goes: reads vitest's JSON report and prints the slowest files and tests, and each
 * folder's share; with the CPU file test/cpu-probe.ts writes (BRE_TEST_CPU), each file's CPU seconds too.
 * `npm run test:durations` runs the suite with both; `tsx scripts/test-durations.ts FILE [N] [CPU_FILE]`
 * reads ones written earlier.
 */
import { existsSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

interface JsonTest {
  readonly fullName: string;
  readonly duration?: number | null;
  readonly status: string;
}
interface JsonFile {
  readonly name: string;
  readonly startTime: number;
  readonly endTime: number;
  readonly assertionResults: readonly JsonTest[];
}
interface JsonReport {
  readonly numTotalTests: number;
  readonly testResults: readonly JsonFile[];
}

/** One line of test/cpu-probe.ts's file. */
interface CpuLine {
  readonly file: string;
  readonly self: number;
  readonly children: number;
}

export interface Durations {
  /** cpu: the file's CPU seconds (its worker's and its spawned processes'), when a CPU file was read. */
  readonly files: readonly { file: string; seconds: number; tests: number; cpu?: number }[];
  readonly tests: readonly { file: string; name: string; seconds: number }[];
  readonly folders: readonly { folder: string; seconds: number; files: number; cpu: number }[];
  readonly totalSeconds: number;
  /** The CPU seconds of every file, when a CPU file was read. */
  readonly totalCpu?: number;
}

/** The CPU file's lines as seconds by file, relative to root (a file run twice counts twice). */
export function cpuByFile(text: string, root: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const c = JSON.parse(line) as CpuLine;
    const file = relative(root, c.file);
    out.set(file, (out.get(file) ?? 0) + c.self + c.children);
  }
  return out;
}

/** The report's figures, slowest first; file time is its wall time in its worker (tests, hooks, imports). */
export function durations(report: JsonReport, root: string, cpu?: Map<string, number>): Durations {
  const files = report.testResults
    .map((f) => {
      const file = relative(root, f.name);
      const seconds = (f.endTime - f.startTime) / 1000;
      const own = cpu?.get(file);
      return { file, seconds, tests: f.assertionResults.length, ...(own === undefined ? {} : { cpu: own }) };
    })
    .sort((a, b) => b.seconds - a.seconds);
  const tests = report.testResults
    .flatMap((f) =>
      f.assertionResults.map((t) => ({
        file: relative(root, f.name),
        name: t.fullName,
        seconds: (t.duration ?? 0) / 1000,
      })),
    )
    .sort((a, b) => b.seconds - a.seconds);
  const byFolder = new Map<string, { seconds: number; files: number; cpu: number }>();
  for (const f of files) {
    const folder = f.file.split('/').slice(0, 2).join('/');
    const acc = byFolder.get(folder) ?? { seconds: 0, files: 0, cpu: 0 };
    byFolder.set(folder, { seconds: acc.seconds + f.seconds, files: acc.files + 1, cpu: acc.cpu + (f.cpu ?? 0) });
  }
  const folders = [...byFolder].map(([folder, v]) => ({ folder, ...v })).sort((a, b) => b.seconds - a.seconds);
  const totalSeconds = files.reduce((s, f) => s + f.seconds, 0);
  if (!cpu) return { files, tests, folders, totalSeconds };
  return { files, tests, folders, totalSeconds, totalCpu: files.reduce((s, f) => s + (f.cpu ?? 0), 0) };
}

export function render(d: Durations, n: number): string {
  const s = (x: number) => x.toFixed(1).padStart(7);
  const withCpu = d.totalCpu !== undefined;
  // CPU seconds beside the wall seconds: a file waiting on a rate costs wall time, not the cores' time.
  const c = (x: number | undefined) => (withCpu ? `${s(x ?? 0)} cpu-s ` : '');
  const total = withCpu ? `, ${s(d.totalCpu ?? 0).trim()} CPU seconds` : '';
  const out = [
    `${d.files.length} files, ${s(d.totalSeconds).trim()} s of worker time in all${total}`,
    '',
    'by folder:',
  ];
  for (const f of d.folders)
    out.push(`${s(f.seconds)} s ${c(withCpu ? f.cpu : undefined)} ${String(f.files).padStart(3)} files  ${f.folder}`);
  out.push('', `slowest ${n} files:`);
  for (const f of d.files.slice(0, n))
    out.push(`${s(f.seconds)} s ${c(f.cpu)} ${String(f.tests).padStart(3)} tests  ${f.file}`);
  if (withCpu) {
    out.push('', `most CPU, ${n} files:`);
    const byCpu = [...d.files].sort((a, b) => (b.cpu ?? 0) - (a.cpu ?? 0));
    for (const f of byCpu.slice(0, n)) out.push(`${s(f.cpu ?? 0)} cpu-s ${s(f.seconds)} s  ${f.file}`);
  }
  out.push('', `slowest ${n} tests:`);
  for (const t of d.tests.slice(0, n)) out.push(`${s(t.seconds)} s  ${t.file} > ${t.name}`);
  return `${out.join('\n')}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, n, cpuFile] = process.argv.slice(2);
  if (!file) throw new Error('Expected the path of a vitest JSON report, got nothing');
  const root = fileURLToPath(new URL('..', import.meta.url));
  const cpu = cpuFile && existsSync(cpuFile) ? cpuByFile(readFileSync(cpuFile, 'utf8'), root) : undefined;
  const report = JSON.parse(readFileSync(file, 'utf8')) as JsonReport;
  process.stdout.write(render(durations(report, root, cpu), Number(n ?? 25)));
}
