/**
 * What the tests need beyond Node and node_modules, in one table: the provisioning step before `npm test`
 * (scripts/test-tools.ts) installs and starts it, and the test helpers gate their tests on it. A tool names
 * the helper module whose importers need it, so the list of test files that cannot run without it is read
 * from the tree, not kept by hand.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join, relative } from 'node:path';

export interface TestTool {
  readonly name: string;
  /** Debian packages that provide it. */
  readonly packages: readonly string[];
  /** Executables that must exist (any of the listed paths for each). */
  readonly binaries?: readonly (readonly string[])[];
  /** A loopback port that must answer (a server shared by the tests, never stopped by them). */
  readonly port?: number;
  /** How to start the server when its port does not answer (root, Debian's layout). */
  readonly start?: () => readonly string[] | undefined;
  /** The helper module (under test/helpers/) whose importers need the tool. */
  readonly helper: string;
}

function pgCluster(): readonly string[] | undefined {
  const versions = existsSync('/etc/postgresql') ? readdirSync('/etc/postgresql').sort() : [];
  const version = versions.at(-1);
  return version ? ['pg_ctlcluster', '--skip-systemctl-redirect', version, 'main', 'start'] : undefined;
}

export const TEST_TOOLS: readonly TestTool[] = [
  {
    name: 'Redis',
    packages: ['redis-server'],
    binaries: [['/usr/bin/redis-server']],
    port: 6379,
    start: () => [
      'redis-server',
      '--daemonize',
      'yes',
      '--bind',
      '127.0.0.1',
      '--port',
      '6379',
      '--save',
      '',
      '--appendonly',
      'no',
    ],
    helper: 'redis',
  },
  {
    name: 'PostgreSQL',
    packages: ['postgresql'],
    binaries: [['/usr/bin/pg_ctlcluster']],
    port: 5432,
    start: pgCluster,
    helper: 'db',
  },
  {
    name: 'MariaDB',
    packages: ['mariadb-server'],
    binaries: [['/usr/sbin/mariadbd']],
    port: 3306,
    start: () => ['start-stop-daemon', '--start', '--oknodo', '--background', '--exec', '/usr/sbin/mariadbd'],
    helper: 'db',
  },
  { name: 'Chromium', packages: ['chromium'], binaries: [['/usr/bin/chromium']], helper: 'chromium' },
  {
    name: 'nginx, tinyproxy and openssl',
    packages: ['nginx-light', 'tinyproxy', 'openssl'],
    binaries: [['/usr/sbin/nginx'], ['/usr/bin/tinyproxy'], ['/usr/bin/openssl']],
    helper: 'network-servers',
  },
  {
    name: 'the Pushgateway',
    packages: ['prometheus-pushgateway'],
    binaries: [['/usr/bin/prometheus-pushgateway']],
    helper: 'pushgateway',
  },
  {
    name: 'podman, runc and debootstrap',
    packages: ['podman', 'runc', 'debootstrap'],
    binaries: [['/usr/bin/podman'], ['/usr/sbin/runc', '/usr/bin/runc'], ['/usr/sbin/debootstrap']],
    helper: 'container',
  },
];

/** Whether something listens on host:port (a connection is accepted within the time-out). */
export function portAnswers(port: number, timeoutMs = 1000, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = createConnection({ host, port });
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.on('error', () => done(false));
    sock.on('connect', () => done(true));
  });
}

/** The executables of `tool` that are missing (each as its first listed path). */
export function missingBinaries(tool: TestTool): string[] {
  return (tool.binaries ?? []).filter((paths) => !paths.some((p) => existsSync(p))).map((paths) => paths[0] ?? '');
}

export async function toolPresent(tool: TestTool): Promise<boolean> {
  if (missingBinaries(tool).length > 0) return false;
  return tool.port === undefined || (await portAnswers(tool.port));
}

/** The test files (relative to the project root) that import test/helpers/<helper>. */
export function testFilesNeeding(root: string, helper: string): string[] {
  const pattern = new RegExp(`from '(?:\\.\\./)+helpers/${helper}\\.js'`);
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.test.ts') && pattern.test(readFileSync(path, 'utf8'))) found.push(path);
    }
  };
  walk(join(root, 'test'));
  return found.map((p) => relative(root, p)).sort();
}

/** The one-line command that installs `packages` on Debian. */
export function installCommand(packages: readonly string[]): string {
  return `apt-get install -y ${packages.join(' ')}`;
}
