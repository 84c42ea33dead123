/**
 * The container image (Dockerfile) built and run with podman as a user would (issue 33): built on a base made
 * here (test/helpers/container.ts: no registry is reachable) named by --build-arg; it runs as the non-root
 * user with the CLI as its entrypoint, the output folder and the token file mounted; against the sandbox on
 * the host network, `podman stop` mid-run stops it (node as PID 1 takes SIGTERM itself: exit 3), and the same
 * `podman run` resumes from the mounted folder with no row sent twice (the sandbox's answers counted per key).
 */
import { chmodSync, chownSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { ensureBaseImage, exec, podman, podmanEnv } from '../helpers/container.js';
import { invariantProblems, locationCsv, readOutput } from '../helpers/output.js';
import { startCountingProxy, type CountingProxy } from '../helpers/proxy.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const IMAGE = 'localhost/bre-batch:test';
const ROWS = 150;
const NODE_UID = 1000;

describe('the container image', () => {
  let sb: TestSandbox;
  let proxy: CountingProxy;
  let build: { code: number | null; stderr: string };

  beforeAll(async () => {
    const base = await ensureBaseImage();
    // The host network: `npm ci` in the build stage reaches the npm registry the way this host does.
    build = await exec('podman', ['build', '--network', 'host', '--build-arg', `NODE_IMAGE=${base}`, '-t', IMAGE, ROOT], { env: podmanEnv() });
    sb = await startTestSandbox({ rate: { workflow: null, bureau: null } });
    proxy = await startCountingProxy(sb.sandbox.url);
  }, 40 * 60_000);
  afterAll(async () => {
    await proxy?.close();
    await sb?.close();
  });

  it('builds from the base named by --build-arg, runs as the unprivileged user with the CLI as entrypoint, without the build toolchain', async () => {
    expect(build.code, build.stderr.slice(-3000)).toBe(0);
    const config = JSON.parse((await podman(['image', 'inspect', IMAGE])).stdout)[0].Config;
    expect(config.User).toBe('node');
    expect(config.Entrypoint).toEqual(['node', '/app/bin/bre-batch.js']);
    expect(config.Volumes).toHaveProperty('/data');
    const listing = await podman(['run', '--rm', '--entrypoint', 'sh', IMAGE, '-c', 'id -u; ls /app/node_modules; ls /app']);
    expect(listing.code, listing.stderr).toBe(0);
    const [uid, ...names] = listing.stdout.trim().split('\n');
    expect(Number(uid)).toBe(NODE_UID);
    expect(names).toContain('prom-client');
    // Production dependencies only, and no sources: the build stage stays behind.
    expect(names).not.toContain('typescript');
    expect(names).not.toContain('vitest');
    expect(names).not.toContain('src');
    const pipelines = await podman(['run', '--rm', IMAGE, 'pipelines']);
    expect(pipelines.code, pipelines.stderr).toBe(0);
    expect(pipelines.stdout).toContain('rescore');
  });

  it('podman stop mid-run: exit 3; the same podman run resumes from the mounted folder, no row sent twice', async () => {
    expect(build.code).toBe(0);
    const dir = tempDir('bre-image-');
    const input = join(dir, 'in');
    mkdirSync(input);
    locationCsv(input, ROWS, 'accounts.csv');
    // The folder mounted at /data, owned by the image's user; the token in an owner-only file, mounted read-only.
    const data = join(dir, 'data');
    mkdirSync(data, { mode: 0o700 });
    chownSync(data, NODE_UID, NODE_UID);
    const token = join(dir, 'bre-token');
    writeFileSync(token, `${sb.token}\n`, { mode: 0o600 });
    chownSync(token, NODE_UID, NODE_UID);
    chmodSync(token, 0o600);

    const name = `bre-batch-test-${process.pid}`;
    const runArgs = [
      'run', '--rm', '--name', name, '--network', 'host',
      '-v', `${input}:/in:ro`, '-v', `${data}:/data`, '-v', `${token}:/run/secrets/bre-token:ro`,
      '-e', 'BRE_AUTH_TOKEN_FILE=/run/secrets/bre-token', '-e', `BRE_CLIENT_ID=${sb.sandbox.clientId}`,
      '-e', `BRE_BASE_URL=${proxy.url}`, '-e', `BUREAU_BASE_URL=${proxy.url}`, '-e', `ACCOUNT_BASE_URL=${proxy.url}`,
      IMAGE, 'run', 'location', '--input', '/in/accounts.csv', '--out', '/data/night', '--no-progress',
      // Slow enough to be stopped part-way; the sandbox itself has no limit.
      '--rate', 'workflow=20/s',
    ];
    proxy.reset();
    const first = exec('podman', runArgs, { env: podmanEnv() });
    await waitFor(() => proxy.successes.size >= 20, 120_000, '20 rows answered');
    const stop = await podman(['stop', '--time', '30', name]);
    expect(stop.code, stop.stderr).toBe(0);
    const stopped = await first;
    expect(stopped.code, stopped.stderr).toBe(3);
    expect(stopped.stderr).toContain('re-run the same command to resume');
    const part = readOutput(join(data, 'night'));
    expect(part.results.length).toBeGreaterThan(0);
    expect(part.results.length).toBeLessThan(ROWS);

    const again = await exec('podman', runArgs, { env: podmanEnv() });
    expect(again.code, again.stderr).toBe(0);
    const out = readOutput(join(data, 'night'));
    expect(invariantProblems(ROWS, out)).toEqual([]);
    expect(out.results).toHaveLength(ROWS);
    expect([...proxy.repeated()]).toEqual([]);
    expect(proxy.successes.size).toBe(ROWS);

    // Written by the image's user into the mounted folder; the token is in none of it.
    const files = readdirSync(join(data, 'night'), { recursive: true }).map((f) => join(data, 'night', String(f)));
    for (const f of files) {
      const st = statSync(f);
      expect(st.uid, f).toBe(NODE_UID);
      if (st.isFile()) expect(readFileSync(f).includes(sb.token), f).toBe(false);
    }
    expect(stopped.stdout + stopped.stderr + again.stdout + again.stderr).not.toContain(sb.token);
  });
});
