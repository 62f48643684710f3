import { connect, createServer } from 'node:net';
import type { Socket } from 'node:net';

/** A loopback TCP proxy whose connections a test can cut: a network partition between a client and a server. */
export interface TcpProxy {
  /** host:port to connect to instead of the target. */
  endpoint: string;
  /** Drops every connection and refuses new ones until restore(). */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const [host = '127.0.0.1', port = '0'] = target.split(':');
  const sockets = new Set<Socket>();
  let open = true;
  const server = createServer((client) => {
    if (!open) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(port), host);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', drop).on('close', drop);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cutAll = () => {
    for (const socket of sockets) socket.destroy();
  };
  return {
    endpoint: `127.0.0.1:${(server.address() as { port: number }).port}`,
    cut() {
      open = false;
      cutAll();
    },
    restore() {
      open = true;
    },
    async close() {
      cutAll();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
