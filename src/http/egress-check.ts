/**
 * Before a run with --local-address sends any row: every address must be on this machine and reach every
 * service origin the run calls. One TCP connection per address and origin, bound to the address, closed at
 * once (no request: nothing is counted against a limit). A run that found out mid-way would have sent part
 * of the input from the good addresses and left the user to guess why one address never took a row.
 */
import { connect } from 'node:net';
import { BreError } from '@bre-batch/core/errors';

/** What a socket error code means for a source address, in words. */
const REASONS: Readonly<Record<string, string>> = {
  EADDRNOTAVAIL: 'the address is not on this machine',
  EADDRINUSE: 'no free port on the address',
  EINVAL: 'the address cannot reach this destination (another address family?)',
  ECONNREFUSED: 'the service refused the connection from it',
  ENETUNREACH: 'no route from it to the service',
  EHOSTUNREACH: 'no route from it to the service',
  ETIMEDOUT: 'the connection from it timed out',
};

/** Connects from `address` to the origin of `baseUrl`; resolves, or rejects with LOCAL_ADDRESS_UNUSABLE naming both. */
function checkLocalAddress(address: string, baseUrl: string, timeoutMs = 10_000): Promise<void> {
  const url = new URL(baseUrl);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise<void>((resolve, reject) => {
    const socket = connect({ host, port, localAddress: address, timeout: timeoutMs });
    const fail = (code: string, err?: Error) => {
      socket.destroy();
      const why = REASONS[code] ?? err?.message ?? code;
      reject(
        new BreError(
          'LOCAL_ADDRESS_UNUSABLE',
          `--local-address ${address} cannot be used: ${code} (${why}) connecting to ${url.origin}`,
          { cause: err },
        ),
      );
    };
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('timeout', () => fail('ETIMEDOUT'));
    socket.once('error', (err: NodeJS.ErrnoException) => fail(err.code ?? 'ERROR', err));
  });
}

/** Every address against every origin, one at a time (a handful of connections): the first failure is thrown. */
export async function checkLocalAddresses(addresses: readonly string[], baseUrls: readonly string[]): Promise<void> {
  const origins = [...new Set(baseUrls.map((u) => new URL(u).origin))];
  for (const address of addresses) for (const origin of origins) await checkLocalAddress(address, origin);
}
