import { connect, createServer } from 'node:net';
import type { Socket } from 'node:net';

/**
 * A loopback TCP proxy whose connections a test can cut (a network partition: connections reset) or pause (a
 * stall: connections stay open and nothing moves, as behind a hung middlebox), between a client and a server.
 */
export interface TcpProxy {
  /** host:port to connect to instead of the target. */
  endpoint: string;
  /** Drops every connection and refuses new ones until restore(). */
  cut(): void;
  restore(): void;
  /** Stops forwarding in both directions, keeping every connection open, until resume(). */
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket;
}

function forward({ client, upstream }: Pair): void {
  client.pipe(upstream);
  upstream.pipe(client);
}

function hold({ client, upstream }: Pair): void {
  client.unpipe(upstream);
  upstream.unpipe(client);
  client.pause();
  upstream.pause();
}

export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const [host = '127.0.0.1', port = '0'] = target.split(':');
  const pairs = new Set<Pair>();
  let open = true;
  let paused = false;
  const server = createServer((client) => {
    if (!open) {
      client.destroy();
      return;
    }
    const pair = { client, upstream: connect(Number(port), host) };
    const drop = () => {
      client.destroy();
      pair.upstream.destroy();
      pairs.delete(pair);
    };
    for (const socket of [client, pair.upstream]) socket.on('error', drop).on('close', drop);
    pairs.add(pair);
    if (paused) hold(pair);
    else forward(pair);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cutAll = () => {
    for (const { client, upstream } of pairs) {
      client.destroy();
      upstream.destroy();
    }
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
    pause() {
      paused = true;
      for (const pair of pairs) hold(pair);
    },
    resume() {
      paused = false;
      for (const pair of pairs) forward(pair);
    },
    async close() {
      cutAll();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
