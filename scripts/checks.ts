/**
 * The static checks of `npm test`, before the tests: type check, layers, lint, format and knip, run at the same
 * time (each is mostly one thread; together they keep both cores busy), each one's output printed whole after
 * it ends, with its time. Fails when any fails, naming which.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Each check as `npm test` runs it: the same commands as the package's scripts of the same name. */
const CHECKS: readonly { name: string; argv: readonly string[] }[] = [
  // tsc and dependency-cruiser keep what they found (node_modules/.cache/): a second run reads again only what
  // changed. knip runs whole: its --cache missed files added to a folder that had matched nothing (knip#1897).
  { name: 'typecheck', argv: ['npm', 'run', '-s', 'typecheck'] },
  { name: 'layers', argv: ['npm', 'run', '-s', 'layers'] },
  { name: 'lint', argv: ['npm', 'run', '-s', 'lint'] },
  { name: 'format', argv: ['npm', 'run', '-s', 'format:check'] },
  { name: 'knip', argv: ['npm', 'run', '-s', 'knip'] },
];

interface Outcome {
  readonly name: string;
  readonly ok: boolean;
  readonly seconds: number;
  readonly output: string;
}

function run(name: string, argv: readonly string[]): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const [cmd, ...args] = argv;
    const child = spawn(cmd ?? '', args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      output += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      output += d;
    });
    const end = (ok: boolean) => resolve({ name, ok, seconds: (performance.now() - started) / 1000, output });
    child.on('error', (err) => {
      output += String(err);
      end(false);
    });
    child.on('close', (code) => end(code === 0));
  });
}

const outcomes = await Promise.all(
  CHECKS.map((c) =>
    run(c.name, c.argv).then((o) => {
      if (o.output.trim() !== '') process.stdout.write(`${o.output.trimEnd()}\n`);
      process.stdout.write(`checks: ${o.name} ${o.ok ? 'passed' : 'FAILED'} in ${o.seconds.toFixed(1)} s\n`);
      return o;
    }),
  ),
);
const failed = outcomes.filter((o) => !o.ok).map((o) => o.name);
if (failed.length > 0) {
  process.stderr.write(`checks: ${failed.join(', ')} failed\n`);
  process.exit(1);
}
