import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * How a paused proxy treats its connections. `hold`: a partition that heals; every connection stays open,
 * nothing is read or delivered while paused, and what was sent meanwhile arrives after `resume()`, late, as
 * TCP retransmits would deliver it. `drop`: a partition whose bytes are lost; every open connection is reset
 * at `pause()`, and connections accepted while paused get nothing and are reset at `resume()`. `refuse`: a
 * target that is down; every open connection is reset at `pause()`, and each new one is reset on arrival.
 */
export type PauseMode = 'hold' | 'drop' | 'refuse';

export interface TcpProxyOptions {
  /** host:port to forward to; loopback only. */
  target: string;
  /** Port to listen on (on 127.0.0.1); default: a free one. */
  port?: number;
}

interface Connection {
  client: Socket;
  /** Undefined until the upstream connection is opened (it is not while paused). */
  upstream?: Socket;
}

const LOOPBACK = '127.0.0.1';

function parseTarget(target: string): { host: string; port: number } {
  const separator = target.lastIndexOf(':');
  const host = target.slice(0, separator);
  const port = Number(target.slice(separator + 1));
  if (!['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host) || !Number.isInteger(port)) {
    throw new Error(`tcp proxy: target must be a loopback host:port, got ${target}`);
  }
  return { host: host.replace(/^\[|\]$/g, ''), port };
}

/** A TCP forwarder on loopback that a test can partition (pause) and heal (resume), or cut. */
export class TcpProxy {
  private readonly connections = new Set<Connection>();
  private paused: PauseMode | undefined;

  private constructor(
    private readonly server: Server,
    private readonly target: { host: string; port: number },
    /** host:port clients connect to. */
    readonly endpoint: string,
  ) {}

  static async start(options: TcpProxyOptions): Promise<TcpProxy> {
    const target = parseTarget(options.target);
    const server = createServer({ pauseOnConnect: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, LOOPBACK, () => resolve());
    });
    const address = server.address();
    if (!address || typeof address !== 'object') throw new Error('tcp proxy: no port assigned');
    const proxy = new TcpProxy(server, target, `${LOOPBACK}:${address.port}`);
    server.on('connection', (client) => proxy.accept(client));
    return proxy;
  }

  get isPaused(): boolean {
    return this.paused !== undefined;
  }

  get openConnections(): number {
    return this.connections.size;
  }

  /** Stops forwarding in both directions; see PauseMode. Pausing a paused proxy changes nothing. */
  pause(mode: PauseMode = 'hold'): void {
    if (this.paused) return;
    this.paused = mode;
    if (mode !== 'hold') return this.cutAll();
    for (const { client, upstream } of this.connections) {
      client.pause();
      upstream?.pause();
    }
  }

  /** Forwards again: held bytes flow (hold), connections accepted while paused are reset (drop). */
  resume(): void {
    const mode = this.paused;
    if (!mode) return;
    this.paused = undefined;
    if (mode === 'drop') return this.cutAll();
    for (const connection of this.connections) {
      if (connection.upstream) {
        connection.client.resume();
        connection.upstream.resume();
      } else {
        this.openUpstream(connection);
      }
    }
  }

  /** Resets every connection (both ends see ECONNRESET); the proxy keeps listening. */
  cutAll(): void {
    for (const connection of this.connections) this.reset(connection);
  }

  async close(): Promise<void> {
    this.cutAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    if (this.paused === 'refuse') return void client.resetAndDestroy();
    const connection: Connection = { client };
    this.connections.add(connection);
    this.watchEnd(connection, client);
    if (!this.paused) this.openUpstream(connection);
  }

  private openUpstream(connection: Connection): void {
    const { client } = connection;
    const upstream = connect({ ...this.target, noDelay: true });
    connection.upstream = upstream;
    upstream.pause();
    this.watchEnd(connection, upstream);
    upstream.once('connect', () => {
      this.forward(client, upstream);
      this.forward(upstream, client);
      if (this.paused) return;
      client.resume();
      upstream.resume();
    });
  }

  /** Copies `from` to `to` by hand (not pipe(), whose drain handling would resume a paused socket). */
  private forward(from: Socket, to: Socket): void {
    from.on('data', (chunk: Buffer) => {
      if (!to.write(chunk)) from.pause();
    });
    to.on('drain', () => {
      if (!this.paused) from.resume();
    });
    from.on('end', () => to.end());
  }

  /** A connection ends with either side: cleanly (the other side is ended) or by error (it is reset). */
  private watchEnd(connection: Connection, socket: Socket): void {
    socket.on('error', () => this.reset(connection));
    socket.on('close', () => {
      const other = socket === connection.client ? connection.upstream : connection.client;
      if (other && !other.destroyed) other.end();
      else this.connections.delete(connection);
    });
  }

  private reset(connection: Connection): void {
    this.connections.delete(connection);
    connection.client.resetAndDestroy();
    connection.upstream?.resetAndDestroy();
  }
}
