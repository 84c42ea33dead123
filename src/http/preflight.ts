/**
 * Before the first row: each service origin the run calls is resolved and connected to, the TLS handshake
 * (client certificate included) done, through the proxy's CONNECT tunnel when the calls take one (./network.ts:
 * the same route the transport takes). No request is sent: nothing is counted against a limit. A mistyped
 * host, a closed port or a missing CA is exit 2 naming the service, the host and the cause, before any output
 * folder exists or any row is tried (a run that found out per row burnt the input into errors).
 */
import { lookup } from 'node:dns/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { BreError } from '@bre-batch/core/errors';
import type { ServiceName } from '@bre-batch/core/types';
import { routeOf, shownProxy, type NetworkSettings, type Route } from './network.js';
import { errorCodeOf, tlsFailure } from './tls-failure.js';

const REASONS: Readonly<Record<string, string>> = {
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved now (DNS unreachable?)',
  ECONNREFUSED: 'the connection was refused (nothing listens on that port)',
  ECONNRESET: 'the connection was reset',
  ETIMEDOUT: 'the connection timed out',
  EHOSTUNREACH: 'no route to the host',
  ENETUNREACH: 'no route to the host',
};

function unreachable(service: ServiceName, origin: string, why: string, err?: unknown): BreError {
  return new BreError('SERVICE_UNREACHABLE', `the ${service} service at ${origin} cannot be reached: ${why}`, {
    service,
    cause: err,
  });
}

function causeOf(service: ServiceName, origin: string, err: unknown, via: string): BreError {
  const tls = tlsFailure(service, origin, err);
  if (tls) return new BreError('SERVICE_UNREACHABLE', `${tls.message}${via}`, { service, cause: err });
  const code = errorCodeOf(err);
  const why = (code && REASONS[code]) ?? (err instanceof Error ? err.message : String(err));
  return unreachable(service, origin, `${why}${code && REASONS[code] ? ` (${code})` : ''}${via}`, err);
}

/** A socket to `host:port`, through the proxy's CONNECT when there is one. */
function open(host: string, port: number, proxy: string | undefined, timeoutMs: number): Promise<Socket> {
  if (!proxy) {
    return new Promise((resolve, reject) => {
      const s = netConnect({ host, port, timeout: timeoutMs });
      s.once('connect', () => resolve(s));
      s.once('timeout', () => {
        s.destroy();
        reject(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' }));
      });
      s.once('error', reject);
    });
  }
  const p = new URL(proxy);
  const auth =
    p.username || p.password
      ? {
          'proxy-authorization': `Basic ${Buffer.from(`${decodeURIComponent(p.username)}:${decodeURIComponent(p.password)}`).toString('base64')}`,
        }
      : {};
  const target = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  return new Promise((resolve, reject) => {
    const req = (p.protocol === 'https:' ? httpsRequest : httpRequest)({
      host: p.hostname,
      port: p.port || (p.protocol === 'https:' ? 443 : 80),
      method: 'CONNECT',
      path: target,
      headers: { host: target, ...auth },
      timeout: timeoutMs,
    });
    req.once('connect', (res, socket) => {
      if (res.statusCode === 200) return resolve(socket);
      socket.destroy();
      reject(
        new Error(
          `the proxy ${shownProxy(proxy)} refused the tunnel (HTTP ${res.statusCode}${res.statusCode === 407 ? ': its credentials are missing or wrong' : ''})`,
        ),
      );
    });
    req.once('timeout', () => {
      req.destroy();
      reject(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' }));
    });
    req.once('error', (err) => reject(Object.assign(err, { proxyError: true })));
    req.end();
  });
}

function handshake(socket: Socket, host: string, route: Route, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = tlsConnect({ socket, servername: host.includes(':') ? undefined : host, ...(route.tls ?? {}) });
    const timer = setTimeout(() => {
      t.destroy();
      reject(Object.assign(new Error('the TLS handshake timed out'), { code: 'ETIMEDOUT' }));
    }, timeoutMs);
    t.once('secureConnect', () => {
      clearTimeout(timer);
      t.destroy();
      resolve();
    });
    t.once('error', (err) => {
      clearTimeout(timer);
      t.destroy();
      reject(err);
    });
  });
}

/** One service's origin: resolve (unless proxied: the proxy resolves), connect, handshake. */
async function checkService(
  service: ServiceName,
  baseUrl: string,
  network: NetworkSettings | undefined,
  timeoutMs = 10_000,
): Promise<void> {
  const url = new URL(baseUrl);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const route = routeOf(service, baseUrl, network);
  const via = route.proxy ? ` (through the proxy ${shownProxy(route.proxy)})` : '';
  if (!route.proxy) {
    try {
      await lookup(host);
    } catch (err) {
      throw causeOf(service, url.origin, err, via);
    }
  }
  let socket: Socket;
  try {
    socket = await open(host, port, route.proxy, timeoutMs);
  } catch (err) {
    if (route.proxy && (err as { proxyError?: boolean }).proxyError)
      throw unreachable(
        service,
        url.origin,
        `the proxy ${shownProxy(route.proxy)} cannot be reached (${errorCodeOf(err) ?? (err as Error).message})`,
        err,
      );
    throw causeOf(service, url.origin, err, via);
  }
  if (url.protocol !== 'https:') {
    socket.destroy();
    return;
  }
  try {
    await handshake(socket, host, route, timeoutMs);
  } catch (err) {
    throw causeOf(service, url.origin, err, via);
  }
}

/** Every service the run calls, one at a time (a handful of connections): the first failure is thrown. */
export async function preflight(
  services: readonly ServiceName[],
  baseUrls: Readonly<Record<ServiceName, string>>,
  network: NetworkSettings | undefined,
): Promise<void> {
  const seen = new Set<string>();
  for (const s of services) {
    const key = `${baseUrls[s]}|${JSON.stringify(network ? routeOf(s, baseUrls[s], network) : null)}`;
    if (seen.has(key)) continue;
    seen.add(key);
    await checkService(s, baseUrls[s], network);
  }
}
