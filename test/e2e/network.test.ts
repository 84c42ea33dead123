/**
 * The network as banks have it (issue 32), against real servers on loopback: nginx with a private CA that
 * requires a client certificate, in front of the sandbox, and tinyproxy as the egress proxy. Most runs are the
 * CLI's code in this process (runInProcess: the same options, the same resolution of the network from the
 * environment given, the same executeRun), without a CLI's start-up each; a spawned CLI's are one exit 2 of
 * each kind and the exits 3, through main.ts as a user sees them.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithTools } from '../helpers/gate.js';
import { runArgs, spawnCli } from '../helpers/cli.js';
import { runInProcess } from '../helpers/cli-in-process.js';
import { freePort } from '../helpers/pushgateway.js';
import { makePki, startNginx, startTinyproxy, type RunningServer, type TestPki } from '../helpers/network-servers.js';
import { filesUnder, invariantProblems, locationCsv, readOutput, searchableText } from '../helpers/output.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

/** CONNECT lines tinyproxy logged for `port`. */
function connectsTo(proxy: RunningServer, port: number): number {
  return proxy
    .log()
    .split('\n')
    .filter((l) => l.includes('CONNECT') && l.includes(`127.0.0.1:${port}`)).length;
}

/** Real nginx, tinyproxy and openssl; skipped whole, with a line saying so, where they are missing. */
const describeNetwork = describeWithTools('nginx, tinyproxy and openssl');

describeNetwork('network: client certificates, a private CA and a proxy, against nginx and tinyproxy', () => {
  let sb: TestSandbox;
  let pki: TestPki;
  let nginx: RunningServer;
  let proxy: RunningServer;
  let authProxy: RunningServer;
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: null } });
    pki = makePki();
    nginx = await startNginx(pki, sb.sandbox.url);
    proxy = await startTinyproxy();
    authProxy = await startTinyproxy({ auth: { user: 'egress', password: 'proxy-secret-91f' } });
  }, 60_000);
  afterAll(async () => {
    await nginx?.stop();
    await proxy?.stop();
    await authProxy?.stop();
    await sb?.close();
  });

  const certArgs = () => ['--ca-file', pki.caCert, '--client-cert', pki.clientCert, '--client-key', pki.clientKey];

  it('a client certificate (PEM) and a CA file: every row through nginx, straight, no CONNECT', async () => {
    const dir = tempDir();
    const out = join(dir, 'out');
    const before = connectsTo(proxy, nginx.port);
    const res = await runInProcess(
      runArgs('location', locationCsv(dir, 8), out, ...certArgs()),
      sb.env(nginx.url, { NO_PROXY: '127.0.0.1', HTTPS_PROXY: proxy.url }),
    );
    expect(res.code, res.stderr).toBe(0);
    expect(invariantProblems(8, readOutput(out))).toEqual([]);
    expect(readOutput(out).results).toHaveLength(8);
    expect(connectsTo(proxy, nginx.port)).toBe(before);
    // nginx saw the calls (its access log has their paths, answered 200).
    expect(nginx.log()).toMatch(/POST \/execute\/\S+ HTTP\/1\.1" 200/);
  }, 90_000);

  it("HTTPS_PROXY: the calls go through the proxy's CONNECT tunnel, and the client certificate reaches nginx through it", async () => {
    const dir = tempDir();
    const out = join(dir, 'out');
    const before = connectsTo(proxy, nginx.port);
    const res = await runInProcess(
      runArgs('location', locationCsv(dir, 8), out, ...certArgs()),
      sb.env(nginx.url, { HTTPS_PROXY: proxy.url }),
    );
    expect(res.code, res.stderr).toBe(0);
    expect(readOutput(out).results).toHaveLength(8);
    expect(connectsTo(proxy, nginx.port)).toBeGreaterThan(before);
  }, 90_000);

  it('lowercase https_proxy wins over HTTPS_PROXY; --no-proxy overrides it', async () => {
    const dir = tempDir();
    const before = connectsTo(proxy, nginx.port);
    const res = await runInProcess(
      runArgs('location', locationCsv(dir, 3), join(dir, 'a'), ...certArgs()),
      sb.env(nginx.url, { https_proxy: proxy.url, HTTPS_PROXY: 'http://127.0.0.1:9' }),
    );
    expect(res.code, res.stderr).toBe(0);
    expect(connectsTo(proxy, nginx.port)).toBeGreaterThan(before);
    const mid = connectsTo(proxy, nginx.port);
    // Spawned: main.ts joins `--no-proxy LIST` into the option (yargs would read --proxy false, then LIST).
    const direct = await spawnCli(
      runArgs('location', locationCsv(dir, 3), join(dir, 'b'), ...certArgs(), '--no-proxy', '127.0.0.1'),
      sb.env(nginx.url, { https_proxy: proxy.url }),
    );
    expect(direct.code, direct.stderr).toBe(0);
    expect(connectsTo(proxy, nginx.port)).toBe(mid);
  }, 90_000);

  it('a PKCS#12 client certificate with its passphrase in an owner-only file', async () => {
    const dir = tempDir();
    const pass = join(dir, 'pass');
    writeFileSync(pass, pki.pfxPassphrase);
    chmodSync(pass, 0o600);
    const res = await runInProcess(
      runArgs(
        'location',
        locationCsv(dir, 4),
        join(dir, 'out'),
        '--ca-file',
        pki.caCert,
        '--client-pfx',
        pki.clientPfx,
      ),
      sb.env(nginx.url, { BRE_CLIENT_KEY_PASSPHRASE_FILE: pass }),
    );
    expect(res.code, res.stderr).toBe(0);
    expect(readOutput(join(dir, 'out')).results).toHaveLength(4);
  }, 90_000);

  it('a proxy that wants credentials: from --proxy env:VAR, and they are never printed nor written', async () => {
    const dir = tempDir();
    const out = join(dir, 'out');
    const secretUrl = `http://egress:proxy-secret-91f@127.0.0.1:${authProxy.port}`;
    const res = await runInProcess(
      runArgs('location', locationCsv(dir, 4), out, ...certArgs(), '--proxy', 'env:EGRESS_PROXY'),
      sb.env(nginx.url, { EGRESS_PROXY: secretUrl }),
    );
    expect(res.code, res.stderr).toBe(0);
    expect(connectsTo(authProxy, nginx.port)).toBeGreaterThan(0);
    expect(res.stdout + res.stderr).not.toContain('proxy-secret-91f');
    for (const f of filesUnder(out)) expect(searchableText(f.path), f.path).not.toContain('proxy-secret-91f');
  }, 90_000);

  it('refused before anything is called (exit 2): credentials in --proxy, --local-address with a proxy, a key others can read, a wrong passphrase', async () => {
    const dir = tempDir();
    const input = locationCsv(dir, 2);
    const inline = await spawnCli(
      runArgs('location', input, join(dir, 'a'), ...certArgs(), '--proxy', 'http://u:pw-on-the-line@127.0.0.1:3128'),
      sb.env(nginx.url),
    );
    expect(inline.code).toBe(2);
    expect(inline.stderr).toContain('without credentials on the command line');
    expect(inline.stderr).not.toContain('pw-on-the-line');

    const both = await runInProcess(
      runArgs('location', input, join(dir, 'b'), ...certArgs(), '--local-address', '127.0.0.1'),
      sb.env(nginx.url, { HTTPS_PROXY: proxy.url }),
    );
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('Expected --local-address without a proxy');

    const loose = join(dir, 'loose.key');
    writeFileSync(loose, readFileSync(pki.clientKey, 'utf8'));
    chmodSync(loose, 0o644);
    const readable = await runInProcess(
      runArgs(
        'location',
        input,
        join(dir, 'c'),
        '--ca-file',
        pki.caCert,
        '--client-cert',
        pki.clientCert,
        '--client-key',
        loose,
      ),
      sb.env(nginx.url),
    );
    expect(readable.code).toBe(2);
    expect(readable.stderr).toContain('readable by its owner only');

    const wrong = await runInProcess(
      runArgs('location', input, join(dir, 'd'), '--ca-file', pki.caCert, '--client-pfx', pki.clientPfx),
      sb.env(nginx.url, { BRE_CLIENT_KEY_PASSPHRASE: 'not-it' }),
    );
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('passphrase');
    for (const r of [inline, both, readable, wrong]) expect(r.stdout).not.toContain('rows');
  }, 120_000);

  it('the pre-flight: a missing CA, a host that does not resolve, a closed port are exit 2 naming service, host and cause, with no output folder', async () => {
    const dir = tempDir();
    const input = locationCsv(dir, 3);
    const noCa = await spawnCli(
      runArgs('location', input, join(dir, 'a'), '--client-cert', pki.clientCert, '--client-key', pki.clientKey),
      sb.env(nginx.url),
    );
    expect(noCa.code, noCa.stderr).toBe(2);
    expect(noCa.stderr).toContain(
      `the workflow service at ${nginx.url}: the server's certificate is not signed by a known CA: give --ca-file`,
    );
    expect(existsSync(join(dir, 'a'))).toBe(false);

    const viaProxy = await runInProcess(
      runArgs('location', input, join(dir, 'b'), '--client-cert', pki.clientCert, '--client-key', pki.clientKey),
      sb.env(nginx.url, { HTTPS_PROXY: proxy.url }),
    );
    expect(viaProxy.code, viaProxy.stderr).toBe(2);
    expect(viaProxy.stderr).toContain(`(through the proxy ${proxy.url})`);

    const nowhere = await runInProcess(
      runArgs('location', input, join(dir, 'c')),
      sb.env('https://no-such-host.invalid'),
    );
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toContain(
      'the workflow service at https://no-such-host.invalid cannot be reached: the host name does not resolve',
    );
    expect(existsSync(join(dir, 'c'))).toBe(false);

    const closed = await runInProcess(
      runArgs('location', input, join(dir, 'd'), '--dry-run'),
      sb.env(`https://127.0.0.1:${await freePort()}`),
    );
    expect(closed.code).toBe(2);
    expect(closed.stderr).toContain('the connection was refused');
  }, 120_000);

  it("no client certificate: nginx's 400 on the first calls stops the run (exit 3), no row in errors; with it, the run resumes and completes", async () => {
    const dir = tempDir();
    const input = locationCsv(dir, 12);
    const out = join(dir, 'out');
    const first = await spawnCli(runArgs('location', input, out, '--ca-file', pki.caCert), sb.env(nginx.url));
    expect(first.code, first.stderr).toBe(3);
    expect(first.stderr).toContain('answered its first');
    expect(first.stderr).toContain('No required SSL certificate was sent');
    expect(readOutput(out).errors).toEqual([]);
    const again = await runInProcess(runArgs('location', input, out, ...certArgs()), sb.env(nginx.url));
    expect(again.code, again.stderr).toBe(0);
    const folder = readOutput(out);
    expect(invariantProblems(12, folder)).toEqual([]);
    expect(folder.results).toHaveLength(12);
  }, 120_000);

  it("a redirect stops the run (exit 3) naming the target's origin; never followed, no row in errors", async () => {
    const dir = tempDir();
    const out = join(dir, 'out');
    const res = await spawnCli(
      runArgs('location', locationCsv(dir, 5), out, ...certArgs()),
      sb.env(`${nginx.url}/redirect`),
    );
    expect(res.code, res.stderr).toBe(3);
    expect(res.stderr).toContain('answered 307 redirecting to https://elsewhere.example.com:8443');
    expect(readOutput(out).errors).toEqual([]);
  }, 90_000);
});
