/**
 * Where the suite's time goes: reads vitest's JSON report and prints the slowest files and tests, and each
 * folder's share. `npm run test:durations` runs the suite with the report; `tsx scripts/test-durations.ts
 * FILE [N]` reads one written earlier (`npx vitest run --reporter=json --outputFile=FILE`).
 */
import { readFileSync } from 'node:fs';
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

export interface Durations {
  readonly files: readonly { file: string; seconds: number; tests: number }[];
  readonly tests: readonly { file: string; name: string; seconds: number }[];
  readonly folders: readonly { folder: string; seconds: number; files: number }[];
  readonly totalSeconds: number;
}

/** The report's figures, slowest first; file time is its wall time in its worker (tests, hooks, imports). */
export function durations(report: JsonReport, root: string): Durations {
  const files = report.testResults
    .map((f) => ({
      file: relative(root, f.name),
      seconds: (f.endTime - f.startTime) / 1000,
      tests: f.assertionResults.length,
    }))
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
  const byFolder = new Map<string, { seconds: number; files: number }>();
  for (const f of files) {
    const folder = f.file.split('/').slice(0, 2).join('/');
    const acc = byFolder.get(folder) ?? { seconds: 0, files: 0 };
    byFolder.set(folder, { seconds: acc.seconds + f.seconds, files: acc.files + 1 });
  }
  const folders = [...byFolder].map(([folder, v]) => ({ folder, ...v })).sort((a, b) => b.seconds - a.seconds);
  return { files, tests, folders, totalSeconds: files.reduce((s, f) => s + f.seconds, 0) };
}

function print(d: Durations, n: number): void {
  const s = (x: number) => x.toFixed(1).padStart(7);
  const out = [`${d.files.length} files, ${s(d.totalSeconds).trim()} s of worker time in all`, '', 'by folder:'];
  for (const f of d.folders) out.push(`${s(f.seconds)} s  ${String(f.files).padStart(3)} files  ${f.folder}`);
  out.push('', `slowest ${n} files:`);
  for (const f of d.files.slice(0, n)) out.push(`${s(f.seconds)} s  ${String(f.tests).padStart(3)} tests  ${f.file}`);
  out.push('', `slowest ${n} tests:`);
  for (const t of d.tests.slice(0, n)) out.push(`${s(t.seconds)} s  ${t.file} > ${t.name}`);
  process.stdout.write(`${out.join('\n')}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, n] = process.argv.slice(2);
  if (!file) throw new Error('Expected the path of a vitest JSON report, got nothing');
  const root = fileURLToPath(new URL('..', import.meta.url));
  print(durations(JSON.parse(readFileSync(file, 'utf8')) as JsonReport, root), Number(n ?? 25));
}
