// A TCP proxy in front of PostgreSQL that can stop answering: a database that accepts connections and
// then says nothing (a hung server, a network that drops its packets), for tests of what waits on it.
import net from 'node:net';

export interface StallingProxy {
  /** The connection string `url` with its host and port replaced by the proxy's. */
  url: string;
  /** From now on nothing is forwarded, on open connections or new ones; new connections are accepted. */
  stall(): void;
  /** Forwards again, what was held back first. */
  resume(): void;
  close(): Promise<void>;
}

export async function startStallingProxy(target: string): Promise<StallingProxy> {
  const upstream = new URL(target);
  let stalled = false;
  const pairs = new Set<{ client: net.Socket; server: net.Socket }>();
  const proxy = net.createServer((client) => {
    const server = net.connect(Number(upstream.port || 5432), upstream.hostname);
    const pair = { client, server };
    pairs.add(pair);
    const close = () => {
      pairs.delete(pair);
      client.destroy();
      server.destroy();
    };
    client.on('error', close).on('close', close);
    server.on('error', close).on('close', close);
    client.pipe(server);
    server.pipe(client);
    if (stalled) {
      client.pause();
      server.pause();
    }
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as net.AddressInfo;
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    stall() {
      stalled = true;
      for (const { client, server } of pairs) {
        client.pause();
        server.pause();
      }
    },
    resume() {
      stalled = false;
      for (const { client, server } of pairs) {
        client.resume();
        server.resume();
      }
    },
    async close() {
      for (const { client, server } of pairs) {
        client.destroy();
        server.destroy();
      }
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}
