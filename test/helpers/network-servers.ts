/**
 * Real network servers for the network tests, started on free loopback ports in a temp folder of their own
 * and stopped by the test: a private CA and certificates made with openssl, nginx (Debian's nginx-light:
 * TLS with that CA, a client certificate required, redirects) in front of the sandbox, and tinyproxy as the
 * egress proxy (its log shows each CONNECT). .ci/run installs nginx-light, tinyproxy and openssl when missing.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './pushgateway.js';
import { tempDir } from './temp.js';
import { waitFor } from './wait.js';

const NGINX_BIN = process.env.BRE_TEST_NGINX ?? '/usr/sbin/nginx';
const TINYPROXY_BIN = process.env.BRE_TEST_TINYPROXY ?? '/usr/bin/tinyproxy';

export interface TestPki {
  readonly dir: string;
  readonly caCert: string;
  readonly serverCert: string;
  readonly serverKey: string;
  readonly clientCert: string;
  /** Owner-only, as bre-batch requires. */
  readonly clientKey: string;
  /** PKCS#12 of the client certificate, owner-only, locked with `pfxPassphrase`. */
  readonly clientPfx: string;
  readonly pfxPassphrase: string;
  /** A client certificate signed by another CA: the server refuses it. */
  readonly strangerCert: string;
  readonly strangerKey: string;
}

function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/** A CA, a server certificate for 127.0.0.1 and localhost, a client certificate it signed, and a stranger's. */
export function makePki(): TestPki {
  const dir = tempDir('bre-pki-');
  const caSubj = (cn: string) => ['-subj', `/CN=${cn}`];
  openssl(
    dir,
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    ...caSubj('bre-batch test CA'),
  );
  openssl(
    dir,
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'other-ca.key',
    '-out',
    'other-ca.pem',
    '-days',
    '2',
    ...caSubj('another CA'),
  );
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  writeFileSync(join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
  const leaf = (name: string, ca: string, ext: string) => {
    openssl(
      dir,
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      ...caSubj(name),
    );
    openssl(
      dir,
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${ca}.pem`,
      '-CAkey',
      `${ca}.key`,
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-extfile',
      ext,
    );
  };
  leaf('server', 'ca', 'server.ext');
  leaf('client', 'ca', 'client.ext');
  leaf('stranger', 'other-ca', 'client.ext');
  const pfxPassphrase = 'pfx-pass-7c1e';
  openssl(
    dir,
    'pkcs12',
    '-export',
    '-in',
    'client.pem',
    '-inkey',
    'client.key',
    '-out',
    'client.p12',
    '-passout',
    `pass:${pfxPassphrase}`,
  );
  for (const f of ['client.key', 'client.p12', 'stranger.key']) chmodSync(join(dir, f), 0o600);
  return {
    dir,
    caCert: join(dir, 'ca.pem'),
    serverCert: join(dir, 'server.pem'),
    serverKey: join(dir, 'server.key'),
    clientCert: join(dir, 'client.pem'),
    clientKey: join(dir, 'client.key'),
    clientPfx: join(dir, 'client.p12'),
    pfxPassphrase,
    strangerCert: join(dir, 'stranger.pem'),
    strangerKey: join(dir, 'stranger.key'),
  };
}

export interface RunningServer {
  readonly port: number;
  readonly url: string;
  /** What the server logged (nginx's access log, tinyproxy's log). */
  log(): string;
  stop(): Promise<void>;
}

function supervise(child: ChildProcess, name: string): { exited: Promise<void>; output: () => string } {
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    output += d;
  });
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    output += d;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', (code) => {
    if (code) output += `\n${name} exited ${code}`;
  });
  return { exited, output: () => output };
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  await exited;
}

/**
 * nginx on https://127.0.0.1:PORT with the PKI's server certificate, requiring a client certificate signed by
 * its CA (`ssl_verify_client on`: without one nginx answers 400 "No required SSL certificate was sent"),
 * proxying to `upstream`; `/redirect/` answers 307 to another origin.
 */
export async function startNginx(
  pki: TestPki,
  upstream: string,
  opts: { verifyClient?: boolean } = {},
): Promise<RunningServer> {
  const dir = tempDir('bre-nginx-');
  const port = await freePort();
  const access = join(dir, 'access.log');
  writeFileSync(
    join(dir, 'nginx.conf'),
    `
daemon off;
worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} info;
events { worker_connections 256; }
http {
  access_log ${access};
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port} ssl;
    ssl_certificate ${pki.serverCert};
    ssl_certificate_key ${pki.serverKey};
    ssl_client_certificate ${pki.caCert};
    ssl_verify_client ${opts.verifyClient === false ? 'off' : 'on'};
    location /redirect/ { return 307 https://elsewhere.example.com:8443/api; }
    location / { proxy_pass ${upstream}; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
`,
  );
  const child = spawn(NGINX_BIN, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { exited, output } = supervise(child, 'nginx');
  await waitFor(
    () => {
      if (child.exitCode !== null)
        throw new Error(
          `nginx exited: ${output()} ${existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : ''}`,
        );
      return existsSync(join(dir, 'nginx.pid'));
    },
    30_000,
    'nginx to start',
  );
  return {
    port,
    url: `https://127.0.0.1:${port}`,
    log: () => (existsSync(access) ? readFileSync(access, 'utf8') : ''),
    stop: () => stopChild(child, exited),
  };
}

/** tinyproxy on http://127.0.0.1:PORT, in the foreground, CONNECT to any port allowed; `auth` adds BasicAuth. */
export async function startTinyproxy(opts: { auth?: { user: string; password: string } } = {}): Promise<RunningServer> {
  const dir = tempDir('bre-tinyproxy-');
  const port = await freePort();
  const logFile = join(dir, 'tinyproxy.log');
  writeFileSync(
    join(dir, 'tinyproxy.conf'),
    [
      `Port ${port}`,
      'Listen 127.0.0.1',
      'Timeout 60',
      `LogFile "${logFile}"`,
      'LogLevel Connect',
      'MaxClients 100',
      'Allow 127.0.0.1',
      ...(opts.auth ? [`BasicAuth ${opts.auth.user} ${opts.auth.password}`] : []),
      '',
    ].join('\n'),
  );
  const child = spawn(TINYPROXY_BIN, ['-d', '-c', join(dir, 'tinyproxy.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
  const { exited, output } = supervise(child, 'tinyproxy');
  const { connect } = await import('node:net');
  await waitFor(
    () => {
      if (child.exitCode !== null) throw new Error(`tinyproxy exited: ${output()}`);
      return new Promise<boolean>((resolve) => {
        const s = connect(port, '127.0.0.1');
        s.once('connect', () => {
          s.destroy();
          resolve(true);
        });
        s.once('error', () => resolve(false));
      });
    },
    30_000,
    'tinyproxy to listen',
  );
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
    stop: () => stopChild(child, exited),
  };
}
