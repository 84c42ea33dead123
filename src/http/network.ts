/**
 * How a service's connections leave this machine: through which proxy, if any, and with which TLS settings
 * (a client certificate, CAs added to Node's). Pure: what the environment and the options say, resolved
 * into one `Route` per service; the transport (./transport.ts) and the pre-flight check both
 * follow it, so the check before the run takes the path the calls will take.
 *
 * The proxy variables follow the convention of curl and undici's EnvHttpProxyAgent: HTTPS_PROXY for https://
 * origins, HTTP_PROXY for http:// ones, NO_PROXY the hosts that go direct; a lowercase variable wins over its
 * uppercase form. NO_PROXY entries are separated by commas or spaces; `*` bypasses every host; an entry
 * matches its host and every subdomain (a leading `.` or `*.` is ignored) and, with `:port`, only that port.
 */
import { rootCertificates } from 'node:tls';
import type { ServiceName } from '@bre-batch/core/types';

/** The proxy settings after the options (`--proxy`, `--no-proxy`) have had their say over the environment. */
export interface ProxySettings {
  readonly httpProxy?: string;
  readonly httpsProxy?: string;
  readonly noProxy?: string;
}

/** What a TLS connection to a service presents and trusts (files already read). */
export interface TlsSettings {
  /** PEM certificate chain and key of the client certificate. */
  readonly cert?: string;
  readonly key?: string;
  /** PKCS#12 bundle of the client certificate (instead of cert and key). */
  readonly pfx?: Buffer;
  readonly passphrase?: string;
  /** PEM CAs trusted beside Node's bundled roots and NODE_EXTRA_CA_CERTS. */
  readonly extraCa?: string;
}

export interface NetworkSettings {
  readonly proxy: ProxySettings;
  /** Per service (one object shared when the same settings hold for all). */
  readonly tls: Readonly<Record<ServiceName, TlsSettings>>;
  /** The PEM of NODE_EXTRA_CA_CERTS, read at start: an explicit `ca` would otherwise drop it. */
  readonly nodeExtraCa?: string;
}

/** Where one origin's connections go, and what TLS they carry to it. */
export interface Route {
  /** The proxy URL (credentials included: a secret, never shown), or undefined to connect directly. */
  readonly proxy: string | undefined;
  /** `tls.connect` options for the service's own origin (through the proxy's tunnel, when there is one). */
  readonly tls: TlsConnect | undefined;
}

export interface TlsConnect {
  readonly ca?: string[];
  readonly cert?: string;
  readonly key?: string;
  readonly pfx?: Buffer;
  readonly passphrase?: string;
}

/** The proxy settings of the environment: lowercase wins; an empty variable is unset. */
export function proxyFromEnv(env: NodeJS.ProcessEnv): ProxySettings {
  const pick = (lower: string, upper: string): string | undefined => {
    const v = env[lower] ?? env[upper];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const httpProxy = pick('http_proxy', 'HTTP_PROXY');
  const httpsProxy = pick('https_proxy', 'HTTPS_PROXY');
  const noProxy = env.no_proxy ?? env.NO_PROXY;
  return {
    ...(httpProxy ? { httpProxy } : {}),
    ...(httpsProxy ? { httpsProxy } : {}),
    ...(noProxy !== undefined ? { noProxy } : {}),
  };
}

/** Whether NO_PROXY sends `url`'s origin direct. */
export function bypassesProxy(url: URL, noProxy: string | undefined): boolean {
  if (noProxy === undefined) return false;
  const entries = noProxy.split(/[,\s]/).filter((e) => e !== '');
  if (entries.length === 0) return false;
  if (noProxy.trim() === '*') return true;
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  for (const entry of entries) {
    // A bare IPv6 literal (two colons or more, no brackets) has no port: `::1` is not host `:` port 1 (undici#5616).
    const bareIpv6 = !entry.startsWith('[') && entry.split(':').length > 2;
    const m = bareIpv6 ? null : /^(.+):(\d+)$/.exec(entry);
    const name = (m ? m[1] : entry)
      .replace(/^\*?\./, '')
      .replace(/^\[|\]$/g, '')
      .toLowerCase();
    if (m && Number(m[2]) !== port) continue;
    if (host === name || host.endsWith(`.${name}`)) return true;
  }
  return false;
}

/** The proxy an origin's calls go through, or undefined. */
export function proxyFor(baseUrl: string, proxy: ProxySettings): string | undefined {
  const url = new URL(baseUrl);
  const chosen = url.protocol === 'https:' ? proxy.httpsProxy : proxy.httpProxy;
  if (chosen === undefined || bypassesProxy(url, proxy.noProxy)) return undefined;
  return chosen;
}

/**
 * The TLS options of a connection, or undefined when Node's defaults serve. A CA file is added to Node's
 * bundled roots and to NODE_EXTRA_CA_CERTS: an explicit `ca` replaces both (Node's tls docs).
 */
export function tlsConnectOf(t: TlsSettings, nodeExtraCa: string | undefined): TlsConnect | undefined {
  const own = {
    ...(t.cert !== undefined ? { cert: t.cert } : {}),
    ...(t.key !== undefined ? { key: t.key } : {}),
    ...(t.pfx !== undefined ? { pfx: t.pfx } : {}),
    ...(t.passphrase !== undefined ? { passphrase: t.passphrase } : {}),
  };
  const ca =
    t.extraCa !== undefined
      ? [...rootCertificates, ...(nodeExtraCa !== undefined ? [nodeExtraCa] : []), t.extraCa]
      : undefined;
  if (ca === undefined && Object.keys(own).length === 0) return undefined;
  return { ...own, ...(ca ? { ca } : {}) };
}

export function routeOf(service: ServiceName, baseUrl: string, network: NetworkSettings | undefined): Route {
  if (!network) return { proxy: undefined, tls: undefined };
  return {
    proxy: proxyFor(baseUrl, network.proxy),
    tls: new URL(baseUrl).protocol === 'https:' ? tlsConnectOf(network.tls[service], network.nodeExtraCa) : undefined,
  };
}

/** A proxy URL as it may be shown: its origin, never its credentials. */
export function shownProxy(proxy: string): string {
  try {
    return new URL(proxy).origin;
  } catch {
    return '(a proxy URL that does not parse)';
  }
}

/** The secrets the settings hold, for the log's scrubber: a proxy's password and a key's passphrase. */
export function networkSecrets(n: NetworkSettings | undefined): string[] {
  if (!n) return [];
  const out: string[] = [];
  for (const p of [n.proxy.httpProxy, n.proxy.httpsProxy]) {
    if (!p) continue;
    try {
      const u = new URL(p);
      if (u.password) out.push(u.password, decodeURIComponent(u.password));
      if (u.username && u.password) out.push(p);
    } catch {
      out.push(p);
    }
  }
  for (const s of Object.keys(n.tls) as ServiceName[]) if (n.tls[s].passphrase) out.push(n.tls[s].passphrase!);
  return out;
}
