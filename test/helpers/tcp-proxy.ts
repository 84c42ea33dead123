/**
 * A TCP proxy of a test's own in front of a database server: "the database goes away" is played by cutting
 * the proxy's connections and refusing new ones (`down`), "it is back" by listening again on the same port
 * (`up`), and a network that drops packets without a word by `stall` (the open connections carry nothing
 * more, new ones work). The shared server itself is never stopped.
 */
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  readonly port: number;
  /** Connections made through it so far. */
  readonly connections: () => number;
  /** Cuts every connection and stops listening: new connections are refused. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  /** The connections open now carry nothing more either way (and are not closed); new ones work. */
  stall(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const pairs = new Set<[Socket, Socket]>();
  let made = 0;
  let port = 0;
  let server: Server;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer((client) => {
        made += 1;
        const upstream = createConnection({ host: targetHost, port: targetPort });
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => undefined);
        }
        client.pipe(upstream);
        upstream.pipe(client);
        const pair: [Socket, Socket] = [client, upstream];
        pairs.add(pair);
        client.on('close', () => {
          upstream.destroy();
          pairs.delete(pair);
        });
        upstream.on('close', () => client.destroy());
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  await listen();
  const down = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    get port() {
      return port;
    },
    connections: () => made,
    down,
    stall: () => {
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        // Read and dropped: what a black-holing network does to the bytes.
        client.on('data', () => undefined);
        upstream.on('data', () => undefined);
      }
      pairs.clear();
    },
    up: listen,
    close: async () => {
      if (server.listening) await down();
    },
  };
}
