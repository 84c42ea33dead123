/**
 * The sandbox as another team takes it: `npm pack` of this package, the tarball installed into an empty project
 * by npm offline (it holds all it runs: no other package of the workspace, nothing from a registry), then started
 * both ways the README shows, its bin and its API; its declarations type-check a user's TypeScript. And
 * `npx bre-sandbox` in this repository, where `npm install` linked the bin.
 */
import { execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { request } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import { cliEnv } from '../../../test/helpers/cli.js';
import { tempDir } from '../../../test/helpers/temp.js';
import { waitFor } from '../../../test/helpers/wait.js';

const run = promisify(execFile);
const PACKAGE = join(import.meta.dirname, '..');
const ROOT = join(PACKAGE, '..', '..');

/** A process's exit code and output, however it ends. */
async function exitOf(file: string, args: readonly string[], cwd: string) {
  return run(file, args, { cwd, env: cliEnv() }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code: number; stdout: string; stderr: string }) => ({
      code: err.code,
      stdout: err.stdout,
      stderr: err.stderr,
    }),
  );
}

describe('the packed sandbox', () => {
  let packed: string[];
  let project: string;
  let bin: string;

  beforeAll(async () => {
    const out = tempDir('bre-sandbox-pack-');
    // --ignore-scripts: its prepack would run the build vitest's global setup has just run, under the test files
    // that spawn that build.
    const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', out], {
      cwd: PACKAGE,
    });
    const [info] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    packed = info.files.map((f) => f.path);
    project = tempDir('bre-sandbox-user-');
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'their-tests', private: true, type: 'module' }),
    );
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', join(out, info.filename)], { cwd: project });
    bin = join(project, 'node_modules', '.bin', 'bre-sandbox');
  }, 120_000);

  it('holds its bin, its bundle and declarations and its README; not its sources, tests or scripts', () => {
    for (const f of ['package.json', 'README.md', 'bin/bre-sandbox.js', 'dist/cli.js', 'dist/index.js'])
      expect(packed).toContain(f);
    expect(packed).toContain('dist/types/index.d.ts');
    expect(packed).toContain('dist/types/core/errors.d.ts');
    expect(packed.filter((f) => /^(src|test|scripts|build)\//.test(f))).toEqual([]);
  });

  it('its bin starts the sandbox, which answers at its limits and stops on SIGTERM', async () => {
    const child = spawn(bin, ['--port', '0', '--rate', 'workflow=2/s', '--seed', '7'], { cwd: project, env: cliEnv() });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const exit = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    await waitFor(() => out.includes('Ctrl+C'), 15_000, 'the banner');
    const url = /export BRE_BASE_URL=(\S+)/.exec(out)![1];
    const token = /export BRE_AUTH_TOKEN=(\S+)/.exec(out)![1];
    const headers = { 'x-client-id': 'sandboxclient', 'x-auth-token': token, 'content-type': 'application/json' };
    const body = JSON.stringify({
      user_id: 'u',
      reference_id: 'r',
      input_data: { lead_id: 'l', latitude: 12.97, longitude: 77.59 },
    });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await request(`${url}/execute/sandboxclient/location_bre`, { method: 'POST', headers, body });
      statuses.push(res.statusCode);
      await res.body.text();
    }
    expect(statuses).toEqual([200, 200, 429]);
    const stats = (await (await request(`${url}/__sandbox/stats`)).body.json()) as { seed: number };
    expect(stats.seed).toBe(7);
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
    expect(out).toContain('stopped');
  });

  it('its bin explains itself, and refuses a bad option with exit 2', async () => {
    const help = await exitOf(bin, ['--help'], project);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('bre-sandbox');
    expect(help.stdout).toContain('--switch-version');
    const bad = await exitOf(bin, ['--rate', 'workflow=fast'], project);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^bre-sandbox: Expected/);
  });

  it('its API starts and closes a sandbox from a JavaScript test', async () => {
    const script = join(project, 'use.mjs');
    writeFileSync(
      script,
      [
        "import { startSandbox, SANDBOX_LIMITS } from '@bre-batch/sandbox';",
        'const sb = await startSandbox({ port: 0, rate: { workflow: null }, seed: 3 });',
        "const stats = await (await fetch(sb.url + '/__sandbox/stats')).json();",
        'await sb.close();',
        'console.log(JSON.stringify({ url: sb.url, seed: stats.seed, bureau: SANDBOX_LIMITS.bureau }));',
      ].join('\n'),
    );
    const r = await exitOf(process.execPath, [script], project);
    expect(r.code, r.stderr).toBe(0);
    const said = JSON.parse(r.stdout) as { url: string; seed: number; bureau: { limit: number } };
    expect(said.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(said.seed).toBe(3);
    expect(said.bureau.limit).toBe(1000);
  });

  it('its declarations type a TypeScript user, and name no package the tarball lacks', async () => {
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          target: 'es2022',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules', '@types')],
        },
        files: ['use.ts'],
      }),
    );
    const use = (line: string) =>
      writeFileSync(
        join(project, 'use.ts'),
        [
          "import { startSandbox, type Sandbox, type SandboxOptions } from '@bre-batch/sandbox';",
          'const options: SandboxOptions = { port: 0, rate: { workflow: { limit: 5, windowMs: 1000 } }, faults: { 503: 0.1 } };',
          'const sb: Sandbox = await startSandbox(options);',
          line,
          'await sb.close();',
        ].join('\n'),
      );
    const tsc = join(ROOT, 'node_modules', '.bin', 'tsc');
    use('const url: string = sb.url;');
    const good = await exitOf(tsc, ['-p', project], project);
    expect(good.code, good.stdout).toBe(0);
    // Real types, not `any`: a misuse is refused.
    use('const url: number = sb.url;');
    const bad = await exitOf(tsc, ['-p', project], project);
    expect(bad.code).not.toBe(0);
    expect(bad.stdout).toContain("Type 'string' is not assignable to type 'number'");
  });
});

describe('npx bre-sandbox in this repository', () => {
  it('is the package bin, linked by npm install', async () => {
    const r = await exitOf('npx', ['--no-install', 'bre-sandbox', '--help'], ROOT);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('start the built-in emulator of all three services');
  });
});
