/**
 * A TCP proxy of a test's own in front of a database server: "the database goes away" is played by cutting
 * the proxy's connections and refusing new ones (`down`), and "it is back" by listening again on the same
 * port (`up`). The shared server itself is never stopped.
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
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let made = 0;
  let port = 0;
  let server: Server;
  const listen = () => new Promise<void>((resolve, reject) => {
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
      client.on('close', () => upstream.destroy());
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
    up: listen,
    close: async () => {
      if (server.listening) await down();
    },
  };
}
