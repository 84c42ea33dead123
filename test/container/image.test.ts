/**
 * The container image (Dockerfile) built and run with podman as a user would (issue 33): built on a base made
 * here (test/helpers/container.ts: no registry is reachable) named by --build-arg; it runs as the non-root
 * user with the CLI as its entrypoint, the output folder and the token file mounted; against the sandbox on
 * the host network, the guide's cron line for the image (docs/operations/container.md), run as written but for
 * its paths, credentials and date: `podman stop` mid-run stops it (node as PID 1 takes SIGTERM itself: exit 3), so does SIGTERM to
 * the `podman run` client (a cron job stopped: podman passes it on), and the same `podman run` resumes from the
 * mounted folder with no row that was done sent again (the sandbox's answers counted per key and call).
 */
import { chmodSync, chownSync, cpSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { ensureBaseImage, exec, podman, podmanEnv, startExec } from '../helpers/container.js';
import { invariantProblems, readOutput, searchableText } from '../helpers/output.js';
import { startPushgateway, type TestPushgateway } from '../helpers/pushgateway.js';
import { startCountingProxy, type CountingProxy } from '../helpers/proxy.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';
import { describeWithTools } from '../helpers/gate.js';

const IMAGE = 'localhost/bre-batch:test';
const ROWS = 150;
const NODE_UID = 1000;
const NIGHT = '2026-11-26';

/** `n` rescore rows: the sample's 24 over and over, each with its own key. */
function rescoreRows(n: number): string {
  const [header, ...rows] = readFileSync(join(ROOT, 'samples', 'rescore.csv'), 'utf8')
    .trim()
    .split('\n');
  const out = [header];
  for (let i = 1; i <= n; i += 1)
    out.push(rows[(i - 1) % rows.length].replace(/^RS-\d+/, `RS-${String(i).padStart(5, '0')}`));
  return `${out.join('\n')}\n`;
}

/**
 * The guide's cron line for the image (docs/operations/container.md), as this test runs it: its command without the
 * schedule, the user and the log redirection, with the host's paths, credentials, image and date replaced.
 * Every replacement must find its text: a page that drifts from what is tested fails here.
 */
function readmeCronCommand(replace: Record<string, string>): string[] {
  const line = readFileSync(join(ROOT, 'docs', 'operations', 'container.md'), 'utf8')
    .split('\n')
    .find((l) => /^0 22 \* \* \*\s+root\s+podman run /.test(l));
  if (!line) throw new Error('no cron line with `podman run` in docs/operations/container.md');
  let command = line.replace(/^0 22 \* \* \*\s+root\s+/, '').replace(/\s*>>.*$/, '');
  for (const [from, to] of Object.entries(replace)) {
    if (!command.includes(from)) throw new Error(`the container page's cron line no longer has '${from}': ${command}`);
    command = command.split(from).join(to);
  }
  return command.split(/\s+/);
}

/** The keys in results or errors of a folder so far. */
function doneKeys(folder: string): Set<string> {
  const out = readOutput(folder);
  return new Set([...out.results, ...out.errors].map((l) => String(l.key)));
}

/** Rows in results or errors of a folder so far. */
function doneRows(folder: string): number {
  const out = readOutput(folder);
  return out.results.length + out.errors.length;
}

describeWithTools('podman, runc and debootstrap', 'the Pushgateway')('the container image', () => {
  let sb: TestSandbox;
  let proxy: CountingProxy;
  let gw: TestPushgateway;
  let build: { code: number | null; stderr: string };

  beforeAll(async () => {
    const base = await ensureBaseImage();
    // The host network: `npm ci` in the build stage reaches the npm registry the way this host does.
    build = await exec(
      'podman',
      ['build', '--network', 'host', '--build-arg', `NODE_IMAGE=${base}`, '-t', IMAGE, ROOT],
      { env: podmanEnv() },
    );
    sb = await startTestSandbox({ rate: { workflow: null, bureau: null } });
    proxy = await startCountingProxy(sb.sandbox.url);
    gw = await startPushgateway();
  }, 40 * 60_000);
  afterAll(async () => {
    await gw?.stop();
    await proxy?.close();
    await sb?.close();
  });

  it('builds from the base named by --build-arg, runs as the unprivileged user with the CLI as entrypoint, without the build toolchain', async () => {
    expect(build.code, build.stderr.slice(-3000)).toBe(0);
    const config = JSON.parse((await podman(['image', 'inspect', IMAGE])).stdout)[0].Config;
    expect(config.User).toBe('node');
    expect(config.Entrypoint).toEqual(['node', '/app/bin/bre-batch.js']);
    expect(config.Volumes).toHaveProperty('/data');
    const listing = await podman([
      'run',
      '--rm',
      '--entrypoint',
      'sh',
      IMAGE,
      '-c',
      'id -u; ls /app/node_modules; ls /app',
    ]);
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

  it("the container page's cron line: podman stop mid-run, then SIGTERM to podman run, exit 3 each time; the same line resumes from the mounted folder, no row that was done sent again", async () => {
    expect(build.code).toBe(0);
    const dir = tempDir('bre-image-');
    // The input folder, mounted read-only: the night's file and the reports and bank files its rows name.
    const input = join(dir, 'in');
    mkdirSync(input);
    cpSync(join(ROOT, 'samples', 'reports'), join(input, 'reports'), { recursive: true });
    cpSync(join(ROOT, 'samples', 'bank'), join(input, 'bank'), { recursive: true });
    writeFileSync(join(input, `${NIGHT}.csv`), rescoreRows(ROWS));
    // The folder mounted at /data, owned by the image's user; the token in an owner-only file, mounted read-only.
    const data = join(dir, 'data');
    mkdirSync(data, { mode: 0o700 });
    chownSync(data, NODE_UID, NODE_UID);
    const token = join(dir, 'bre-token');
    writeFileSync(token, `${sb.token}\n`, { mode: 0o600 });
    chownSync(token, NODE_UID, NODE_UID);
    chmodSync(token, 0o600);

    const name = `bre-batch-test-${process.pid}`;
    const [cmd, ...args] = readmeCronCommand({
      '/srv/bre/in': input,
      '/srv/bre/data': data,
      '/srv/bre/token': token,
      'bre-rescore': name,
      'BRE_CLIENT_ID=acme': `BRE_CLIENT_ID=${sb.sandbox.clientId}`,
      'BRE_BASE_URL=https://bre.example.com': `BRE_BASE_URL=${proxy.url}`,
      'registry.example.com/bre-batch:1': IMAGE,
      '$(date +\\%F)': NIGHT,
      'http://pushgateway.internal:9091': gw.url,
    });
    expect(cmd).toBe('podman');
    // The sandbox's other two services at the same proxy, and slow enough to be stopped part-way.
    const imageAt = args.indexOf(IMAGE);
    const runArgs = [
      ...args.slice(0, imageAt),
      '-e',
      `BUREAU_BASE_URL=${proxy.url}`,
      '-e',
      `ACCOUNT_BASE_URL=${proxy.url}`,
      ...args.slice(imageAt),
      '--rate',
      'workflow=20/s',
    ];
    const folder = join(data, 'out', NIGHT);
    const answered = () => new Set([...proxy.successes.keys()].map((k) => k.split(' ').pop())).size;
    proxy.reset();

    // 1. `podman stop` (what Kubernetes and an operator do): SIGTERM to node, PID 1 of the container.
    const first = exec(cmd, runArgs, { env: podmanEnv() });
    await waitFor(() => answered() >= 20, 180_000, '20 rows answered');
    const stop = await podman(['stop', '--time', '30', name]);
    expect(stop.code, stop.stderr).toBe(0);
    const stopped = await first;
    expect(stopped.code, stopped.stderr).toBe(3);
    expect(stopped.stderr).toContain('re-run the same command to resume');
    expect(
      await gw.samples('bre_batch_run_state', { job: 'bre_batch', pipeline: 'rescore', state: 'stopped' }),
    ).toMatchObject([{ value: 1 }]);
    const part = doneRows(folder);
    expect(part).toBeGreaterThan(0);
    expect(part).toBeLessThan(ROWS);
    const atStops = [{ done: doneKeys(folder), answers: new Map(proxy.successes) }];

    // 2. SIGTERM to the `podman run` client (what stopping the cron job does): podman passes it on to the
    // container (--sig-proxy, on by default), and the resumed run stops the same way.
    const second = startExec(cmd, runArgs, { env: podmanEnv() });
    await waitFor(() => answered() >= part + 20, 180_000, '20 more rows answered');
    second.child.kill('SIGTERM');
    const proxied = await second.done;
    expect(proxied.code, proxied.stderr).toBe(3);
    const more = doneRows(folder);
    expect(more).toBeGreaterThan(part);
    expect(more).toBeLessThan(ROWS);
    atStops.push({ done: doneKeys(folder), answers: new Map(proxy.successes) });

    // 3. The same line again: it resumes from the mounted folder and finishes.
    const again = await exec(cmd, runArgs, { env: podmanEnv() });
    const out = readOutput(folder);
    expect(again.code, again.stderr).toBe(out.errors.length > 0 ? 1 : 0);
    expect(invariantProblems(ROWS, out)).toEqual([]);
    // A row done before a stop is never sent again. A row the stop caught between its stages (its bureau call
    // answered, its workflow call still waiting for the limiter past --stop-grace) was not done: it runs again
    // whole, its bureau call with it (docs/operations/stopping.md).
    for (const { done, answers } of atStops) {
      const sentAgain = [...proxy.successes].filter(([k, n]) => done.has(k.split(' ').pop()!) && n !== answers.get(k));
      expect(sentAgain).toEqual([]);
    }
    // Only the rows in flight at a stop, never the whole night again.
    expect(proxy.repeated().size).toBeLessThan(ROWS / 2);
    const answeredKeys = new Set([...proxy.successes.keys()].map((k) => k.split(' ').pop()));
    expect(out.results.filter((l) => !answeredKeys.has(String(l.key)))).toEqual([]);
    expect(
      await gw.samples('bre_batch_run_state', { job: 'bre_batch', pipeline: 'rescore', state: 'finished' }),
    ).toMatchObject([{ value: 1 }]);

    // Written by the image's user into the mounted folder; the token is in none of it.
    for (const f of readdirSync(folder, { recursive: true }).map((x) => join(folder, String(x)))) {
      const st = statSync(f);
      expect(st.uid, f).toBe(NODE_UID);
      if (st.isFile()) expect(searchableText(f).includes(sb.token), f).toBe(false);
    }
    expect([stopped, proxied, again].map((r) => r.stdout + r.stderr).join('')).not.toContain(sb.token);
  });
});
