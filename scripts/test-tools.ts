/**
 * The provisioning step of `npm test` (its `pretest`) and of `.ci/run`: what the tests need beyond Node
 * (test/helpers/tools.ts) installed from Debian's packages and the shared servers started, when this is root
 * on a Debian-like machine; idempotent, and quick when everything is there. Where it cannot install (no root,
 * no apt), it prints one block: what is missing, the command that installs it, the test files that will not
 * run. It never fails the test command itself: the tests say, file by file, what they skipped.
 *
 * BRE_TEST_TOOLS=check only reports (no install, no start).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../test/helpers/wait.js';
import {
  installCommand,
  missingBinaries,
  portAnswers,
  TEST_TOOLS,
  type TestTool,
  testFilesNeeding,
  toolPresent,
} from '../test/helpers/tools.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const say = (line: string): void => void process.stderr.write(`test-tools: ${line}\n`);

function run(argv: readonly string[]): boolean {
  const [cmd, ...args] = argv;
  if (!cmd) return false;
  try {
    execFileSync(cmd, args, {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    return true;
  } catch {
    return false;
  }
}

const canInstall = (): boolean =>
  process.env.BRE_TEST_TOOLS !== 'check' && process.getuid?.() === 0 && existsSync('/usr/bin/apt-get');

/** Packages of the tools whose executables are missing (a server's when its daemon is not installed). */
function packagesToInstall(tools: readonly TestTool[]): string[] {
  return [...new Set(tools.filter((t) => missingBinaries(t).length > 0).flatMap((t) => t.packages))];
}

async function startServer(tool: TestTool): Promise<void> {
  const argv = tool.start?.();
  if (!argv || process.env.BRE_TEST_TOOLS === 'check' || process.getuid?.() !== 0) return;
  say(`starting ${tool.name} (${argv.join(' ')})`);
  if (!run(argv)) return;
  const port = tool.port ?? 0;
  await waitFor(() => portAnswers(port, 500), 30_000, `${tool.name} to answer on ${port}`).catch(() => undefined);
}

async function main(): Promise<void> {
  const absent = async () => {
    const out: TestTool[] = [];
    for (const t of TEST_TOOLS) if (!(await toolPresent(t))) out.push(t);
    return out;
  };
  let missing = await absent();
  if (missing.length === 0) return;
  const packages = packagesToInstall(missing);
  if (packages.length > 0 && canInstall()) {
    say(`installing ${packages.join(' ')} (Debian's packages)`);
    if (!(run(['apt-get', 'update', '-qq']) && run(['apt-get', 'install', '-y', '-qq', ...packages])))
      say('apt-get failed; what is still missing is listed below');
  }
  for (const tool of await absent())
    if (tool.port !== undefined && missingBinaries(tool).length === 0) await startServer(tool);
  missing = await absent();
  if (missing.length > 0) process.stderr.write(missingReport(ROOT, missing));
}

/** The one block that says what is missing, how to install it, and which test files will not run. */
export function missingReport(root: string, missing: readonly TestTool[]): string {
  const lines = ['', 'test-tools: the tests need what is missing here; the test files listed will not run:'];
  for (const tool of missing) {
    const what = tool.port !== undefined ? `${tool.name} answering on 127.0.0.1:${tool.port}` : tool.name;
    lines.push(`  - ${what}: ${installCommand(tool.packages)}${tool.port !== undefined ? ' (then start it)' : ''}`);
    for (const file of testFilesNeeding(root, tool.helper)) lines.push(`      ${file}`);
  }
  lines.push(
    '  Run `npm test` as root on Debian to have them installed, or install them as above.',
    '  Without them those tests are skipped with a message (under CI=true they fail).',
    '',
  );
  return `${lines.join('\n')}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
