/**
 * The network options of `run`: the proxy (--proxy / --no-proxy over HTTPS_PROXY, HTTP_PROXY, NO_PROXY), the
 * client certificate (--client-cert and --client-key as PEM, or --client-pfx as PKCS#12, for every service
 * or per service) and CAs added to Node's (--ca-file). Secrets never come from the command line: a proxy's
 * credentials come from the environment or an owner-only file (`env:VAR`, `file:PATH`), a key's passphrase
 * from BRE_CLIENT_KEY_PASSPHRASE or BRE_CLIENT_KEY_PASSPHRASE_FILE, and key files must be readable by their
 * owner only, as the token file is.
 */
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import type { Options } from 'yargs';
import { BreError } from '@bre-batch/core/errors';
import {
  proxyFor,
  proxyFromEnv,
  shownProxy,
  type NetworkSettings,
  type ProxySettings,
  type TlsSettings,
} from '../http/network.js';
import { SERVICES, type ServiceName } from '@bre-batch/core/types';
import { readOwnerOnlyFile } from './credentials.js';

export interface NetworkArgs {
  proxy?: string;
  'no-proxy'?: string;
  'client-cert'?: string[];
  'client-key'?: string[];
  'client-pfx'?: string[];
  'ca-file'?: string;
}

export const NETWORK_OPTIONS = {
  proxy: {
    type: 'string',
    describe:
      'send every call through this HTTP proxy (a CONNECT tunnel), instead of HTTPS_PROXY / HTTP_PROXY: http://HOST:PORT, or env:VAR / file:PATH holding a URL with credentials (never on the command line)',
  },
  'no-proxy': {
    type: 'string',
    describe:
      'hosts that go direct, instead of NO_PROXY: comma-separated; .example.com or *.example.com for its subdomains, HOST:PORT, * for all',
  },
  'client-cert': {
    type: 'string',
    array: true,
    describe:
      '[SERVICE=]FILE: the client certificate (PEM) presented to the services (mutual TLS), to SERVICE only when named; with --client-key',
  },
  'client-key': {
    type: 'string',
    array: true,
    describe:
      '[SERVICE=]FILE: the key of --client-cert (PEM, readable by its owner only; its passphrase in BRE_CLIENT_KEY_PASSPHRASE or BRE_CLIENT_KEY_PASSPHRASE_FILE)',
  },
  'client-pfx': {
    type: 'string',
    array: true,
    describe:
      '[SERVICE=]FILE: the client certificate and key as PKCS#12 (.p12/.pfx, readable by its owner only; its passphrase as for --client-key)',
  },
  'ca-file': {
    type: 'string',
    describe:
      "PEM file of CAs to trust besides Node's bundled roots and NODE_EXTRA_CA_CERTS (a private CA of the services or of a TLS-inspecting proxy)",
  },
} as const satisfies Record<string, Options>;

/** `[SERVICE=]FILE` values: one for every service, or one per named service (a named one wins). */
function perServiceFiles(values: readonly string[] | undefined, flag: string): Record<ServiceName, string | undefined> {
  const out: Record<ServiceName, string | undefined> = { workflow: undefined, bureau: undefined, account: undefined };
  let all: string | undefined;
  for (const v of values ?? []) {
    const m = /^([a-z]+)=(.+)$/.exec(v);
    if (m && (SERVICES as readonly string[]).includes(m[1])) out[m[1] as ServiceName] = m[2];
    else if (m && !v.includes('/'))
      throw new BreError(
        'USAGE',
        `Expected --${flag} to be FILE or SERVICE=FILE with SERVICE one of ${SERVICES.join(', ')}, got '${v}'`,
        { field: flag },
      );
    else all = v;
  }
  for (const s of SERVICES) out[s] ??= all;
  return out;
}

function readPublic(path: string, flag: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new BreError(
      'CONFIG_INVALID',
      `--${flag} names ${path}, which cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      { field: flag },
    );
  }
}

function readSecretFile(path: string, flag: string): Buffer {
  // The owner-only check of the token file, then the bytes (a PKCS#12 bundle is binary).
  readOwnerOnlyFile(path, `--${flag}`);
  return readFileSync(path);
}

function passphraseFrom(env: NodeJS.ProcessEnv): string | undefined {
  if (env.BRE_CLIENT_KEY_PASSPHRASE) return env.BRE_CLIENT_KEY_PASSPHRASE;
  const file = env.BRE_CLIENT_KEY_PASSPHRASE_FILE;
  return file ? readOwnerOnlyFile(file, 'BRE_CLIENT_KEY_PASSPHRASE_FILE') : undefined;
}

/** A proxy URL from the option: no credentials on the command line; env:VAR or file:PATH may hold them. */
function proxyOption(given: string, env: NodeJS.ProcessEnv): string {
  let value = given;
  if (given.startsWith('env:')) {
    value = env[given.slice(4)]?.trim() ?? '';
    if (value === '')
      throw new BreError(
        'USAGE',
        `Expected the environment variable ${given.slice(4)} (from --proxy ${given}) to hold a proxy URL, got nothing`,
        { field: 'proxy' },
      );
  } else if (given.startsWith('file:')) {
    value = readOwnerOnlyFile(given.slice(5), '--proxy file:');
  }
  if (!URL.canParse(value))
    throw new BreError(
      'USAGE',
      `Expected --proxy to be a URL such as http://proxy.example.com:3128, got '${given.startsWith('env:') || given.startsWith('file:') ? given : value}'`,
      { field: 'proxy' },
    );
  const url = new URL(value);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new BreError(
      'USAGE',
      `Expected --proxy to be an http:// or https:// proxy URL, got '${url.protocol}//${url.host}'`,
      { field: 'proxy' },
    );
  if (given === value && (url.username !== '' || url.password !== '')) {
    throw new BreError(
      'USAGE',
      'Expected --proxy without credentials on the command line (they would show in ps and shell history), got a URL with a user or password: give --proxy env:VAR or --proxy file:PATH (owner-only), or HTTPS_PROXY',
      { field: 'proxy' },
    );
  }
  return value;
}

/** The TLS settings of each service; one object shared by services whose files are the same. */
function tlsSettings(a: NetworkArgs, env: NodeJS.ProcessEnv): Record<ServiceName, TlsSettings> {
  const certs = perServiceFiles(a['client-cert'], 'client-cert');
  const keys = perServiceFiles(a['client-key'], 'client-key');
  const pfxs = perServiceFiles(a['client-pfx'], 'client-pfx');
  const extraCa = a['ca-file'] !== undefined ? readPublic(a['ca-file'], 'ca-file') : undefined;
  const passphrase = SERVICES.some((s) => keys[s] !== undefined || pfxs[s] !== undefined)
    ? passphraseFrom(env)
    : undefined;
  const made = new Map<string, TlsSettings>();
  const out = {} as Record<ServiceName, TlsSettings>;
  for (const s of SERVICES) {
    const cert = certs[s];
    const key = keys[s];
    const pfx = pfxs[s];
    if (pfx !== undefined && (cert !== undefined || key !== undefined))
      throw new BreError(
        'USAGE',
        `Expected either --client-pfx or --client-cert with --client-key for ${s}, got both`,
        { field: 'client-pfx' },
      );
    if ((cert === undefined) !== (key === undefined))
      throw new BreError(
        'USAGE',
        `Expected --client-cert and --client-key together for ${s}, got only --${cert === undefined ? 'client-key' : 'client-cert'}`,
        { field: cert === undefined ? 'client-cert' : 'client-key' },
      );
    const id = JSON.stringify([cert, key, pfx]);
    let t = made.get(id);
    if (!t) {
      t = {
        ...(cert !== undefined ? { cert: readPublic(cert, 'client-cert') } : {}),
        ...(key !== undefined ? { key: readSecretFile(key, 'client-key').toString('utf8') } : {}),
        ...(pfx !== undefined ? { pfx: readSecretFile(pfx, 'client-pfx') } : {}),
        ...(passphrase !== undefined && (key !== undefined || pfx !== undefined) ? { passphrase } : {}),
        ...(extraCa !== undefined ? { extraCa } : {}),
      };
      checkLoads(t, cert ?? pfx, a['ca-file']);
      made.set(id, t);
    }
    out[s] = t;
  }
  return out;
}

/** A certificate, key or CA that Node cannot load is exit 2 now, naming the file, not a failure per call. */
function checkLoads(t: TlsSettings, file: string | undefined, caFile: string | undefined): void {
  try {
    createSecureContext({
      ...(t.cert ? { cert: t.cert, key: t.key } : {}),
      ...(t.pfx ? { pfx: t.pfx } : {}),
      ...(t.passphrase ? { passphrase: t.passphrase } : {}),
    });
  } catch (err) {
    const why = (err as Error).message;
    const bad = /passphrase|decrypt|mac verify/i.test(why)
      ? "the key's passphrase is wrong or missing (BRE_CLIENT_KEY_PASSPHRASE, BRE_CLIENT_KEY_PASSPHRASE_FILE)"
      : why;
    throw new BreError('CONFIG_INVALID', `Expected the client certificate ${file} and its key to load, got: ${bad}`, {
      field: 'client-cert',
    });
  }
  if (t.extraCa !== undefined) {
    try {
      createSecureContext({ ca: t.extraCa });
    } catch (err) {
      throw new BreError(
        'CONFIG_INVALID',
        `Expected --ca-file ${caFile} to hold PEM certificates, got: ${(err as Error).message}`,
        { field: 'ca-file' },
      );
    }
    if (!t.extraCa.includes('-----BEGIN CERTIFICATE-----'))
      throw new BreError(
        'CONFIG_INVALID',
        `Expected --ca-file ${caFile} to hold PEM certificates (-----BEGIN CERTIFICATE-----), got none`,
        { field: 'ca-file' },
      );
  }
}

/**
 * The network settings of a run against `baseUrls` (set by the user; the built-in sandbox is called
 * directly). `localAddresses` and a proxy exclude each other: behind a proxy the proxy's address is the
 * egress, whatever address the connection to it leaves from.
 */
export function resolveNetwork(
  a: NetworkArgs,
  env: NodeJS.ProcessEnv,
  baseUrls: Readonly<Record<ServiceName, string>>,
  localAddresses: readonly string[] | undefined,
): NetworkSettings {
  const fromEnv = proxyFromEnv(env);
  const given = a.proxy !== undefined ? proxyOption(a.proxy, env) : undefined;
  const proxy: ProxySettings = {
    ...(given !== undefined
      ? { httpProxy: given, httpsProxy: given }
      : {
          ...(fromEnv.httpProxy ? { httpProxy: fromEnv.httpProxy } : {}),
          ...(fromEnv.httpsProxy ? { httpsProxy: fromEnv.httpsProxy } : {}),
        }),
    ...(a['no-proxy'] !== undefined
      ? { noProxy: a['no-proxy'] }
      : fromEnv.noProxy !== undefined
        ? { noProxy: fromEnv.noProxy }
        : {}),
  };
  if (localAddresses && localAddresses.length > 0) {
    const proxied = SERVICES.map((s) => [s, proxyFor(baseUrls[s], proxy)] as const).find(([, p]) => p !== undefined);
    if (proxied) {
      throw new BreError(
        'USAGE',
        `Expected --local-address without a proxy, got both: ${proxied[0]} calls go through ${shownProxy(proxied[1]!)} (${a.proxy !== undefined ? '--proxy' : 'HTTPS_PROXY/HTTP_PROXY'}), whose address is the egress the services see, so source addresses of this machine would not multiply the limits; drop one, or exempt the services with --no-proxy`,
        { field: 'local-address' },
      );
    }
  }
  const extraFile = env.NODE_EXTRA_CA_CERTS;
  let nodeExtraCa: string | undefined;
  if (a['ca-file'] !== undefined && extraFile) {
    try {
      nodeExtraCa = readFileSync(extraFile, 'utf8');
    } catch {
      // Node warned about it at start and ignored it; so does this.
    }
  }
  return { proxy, tls: tlsSettings(a, env), ...(nodeExtraCa !== undefined ? { nodeExtraCa } : {}) };
}
