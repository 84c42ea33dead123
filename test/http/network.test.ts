import { rootCertificates } from 'node:tls';
import { describe, expect, it } from 'vitest';
import {
  bypassesProxy,
  networkSecrets,
  proxyFor,
  proxyFromEnv,
  routeOf,
  shownProxy,
  tlsConnectOf,
  type NetworkSettings,
} from '../../src/http/network.js';

describe('proxy settings from the environment', () => {
  it('lowercase wins over uppercase; an empty variable is unset', () => {
    expect(
      proxyFromEnv({
        HTTPS_PROXY: 'http://upper:1',
        https_proxy: 'http://lower:2',
        HTTP_PROXY: 'http://plain:3',
        NO_PROXY: 'a',
        no_proxy: 'b',
      }),
    ).toEqual({ httpsProxy: 'http://lower:2', httpProxy: 'http://plain:3', noProxy: 'b' });
    expect(proxyFromEnv({ https_proxy: ' ', HTTPS_PROXY: 'http://upper:1' })).toEqual({});
  });

  it('https:// origins take HTTPS_PROXY, http:// ones HTTP_PROXY', () => {
    const p = { httpsProxy: 'http://s:1', httpProxy: 'http://p:2' };
    expect(proxyFor('https://api.example.com/v1', p)).toBe('http://s:1');
    expect(proxyFor('http://127.0.0.1:8080', p)).toBe('http://p:2');
    expect(proxyFor('https://api.example.com', { httpProxy: 'http://p:2' })).toBeUndefined();
  });
});

describe('NO_PROXY, as curl and undici read it', () => {
  const at = (u: string, list: string | undefined) => bypassesProxy(new URL(u), list);
  it('a host and its subdomains; a leading . or *. is the same entry', () => {
    for (const list of ['example.com', '.example.com', '*.example.com']) {
      expect(at('https://example.com', list)).toBe(true);
      expect(at('https://api.example.com', list)).toBe(true);
      expect(at('https://notexample.com', list)).toBe(false);
    }
  });
  it('commas or spaces between entries, any case; * bypasses all; empty bypasses none', () => {
    expect(at('https://API.Bank.example', 'other.org  bank.example,x')).toBe(true);
    expect(at('https://anything.test', '*')).toBe(true);
    expect(at('https://anything.test', '')).toBe(false);
    expect(at('https://anything.test', undefined)).toBe(false);
  });
  it("HOST:PORT matches that port only (the scheme's default when the URL has none)", () => {
    expect(at('https://gw.example:8443', 'gw.example:8443')).toBe(true);
    expect(at('https://gw.example', 'gw.example:8443')).toBe(false);
    expect(at('https://gw.example', 'gw.example:443')).toBe(true);
    expect(at('http://127.0.0.1:9000', '127.0.0.1')).toBe(true);
  });
  it('an IPv6 literal, bracketed or not', () => {
    expect(at('https://[::1]:8443', '::1')).toBe(true);
    expect(at('https://[::1]:8443', '[::1]')).toBe(true);
    expect(at('https://[::2]:8443', '::1')).toBe(false);
  });
});

describe('TLS options of a route', () => {
  it("nothing given: undefined, so Node's defaults (and NODE_EXTRA_CA_CERTS) serve", () => {
    expect(tlsConnectOf({}, undefined)).toBeUndefined();
  });
  it('a CA file adds to the bundled roots and to NODE_EXTRA_CA_CERTS, never replaces them', () => {
    const t = tlsConnectOf({ extraCa: 'PRIVATE-CA' }, 'EXTRA-CA')!;
    expect(t.ca).toEqual([...rootCertificates, 'EXTRA-CA', 'PRIVATE-CA']);
  });
  it("a client certificate alone keeps Node's CAs (no `ca` option)", () => {
    const t = tlsConnectOf({ cert: 'C', key: 'K', passphrase: 'P' }, 'EXTRA')!;
    expect(t).toEqual({ cert: 'C', key: 'K', passphrase: 'P' });
  });
  it('a route: the proxy by NO_PROXY, TLS only for https:// origins, per service', () => {
    const tls = { cert: 'C', key: 'K' };
    const n: NetworkSettings = {
      proxy: { httpsProxy: 'http://u:pw@proxy:3128', noProxy: 'direct.example' },
      tls: { workflow: tls, bureau: {}, account: tls },
    };
    expect(routeOf('workflow', 'https://gw.example', n)).toEqual({
      proxy: 'http://u:pw@proxy:3128',
      tls: { cert: 'C', key: 'K' },
    });
    expect(routeOf('bureau', 'https://direct.example', n)).toEqual({ proxy: undefined, tls: undefined });
    expect(routeOf('account', 'http://127.0.0.1:1', n)).toEqual({ proxy: undefined, tls: undefined });
    expect(routeOf('workflow', 'https://gw.example', undefined)).toEqual({ proxy: undefined, tls: undefined });
  });
});

describe('secrets of the network settings', () => {
  it("a proxy's password (as written and decoded) and a key's passphrase go to the scrubber; a proxy is shown by its origin", () => {
    const n: NetworkSettings = {
      proxy: { httpsProxy: 'http://egress:p%40ss@proxy:3128' },
      tls: { workflow: { passphrase: 'kp' }, bureau: {}, account: {} },
    };
    expect(networkSecrets(n)).toEqual(expect.arrayContaining(['p%40ss', 'p@ss', 'kp']));
    expect(shownProxy('http://egress:p%40ss@proxy:3128')).toBe('http://proxy:3128');
  });
});
