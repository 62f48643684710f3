import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { TcpProxy } from '../../support/tcp-proxy.js';
import { until } from '../../../dev/wait/until.js';
import { sleep } from '../../../dev/wait/sleep.js';

// Real sockets on loopback: the proxy is plumbing, and its contract is what bytes reach the other side.

/** A target that records what each connection sent and keeps its sockets to answer on. */
class RecordingTarget {
  readonly sockets: Socket[] = [];
  received = '';
  private constructor(
    private readonly server: Server,
    readonly endpoint: string,
  ) {}

  static async start(): Promise<RecordingTarget> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const target = new RecordingTarget(server, `127.0.0.1:${port}`);
    server.on('connection', (socket) => {
      target.sockets.push(socket);
      socket.on('data', (chunk: Buffer) => (target.received += chunk.toString()));
      socket.on('error', () => undefined);
    });
    return target;
  }

  async close(): Promise<void> {
    this.sockets.forEach((socket) => socket.destroy());
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** A client of the proxy that records what it receives and how its connection ended. */
class RecordingClient {
  received = '';
  ended: 'reset' | 'closed' | undefined;
  readonly socket: Socket;

  constructor(endpoint: string) {
    const [host, port] = endpoint.split(':');
    this.socket = connect({ host, port: Number(port) });
    this.socket.on('data', (chunk: Buffer) => (this.received += chunk.toString()));
    this.socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNRESET') this.ended = 'reset';
    });
    this.socket.on('close', () => (this.ended ??= 'closed'));
  }

  connected(): Promise<void> {
    return new Promise((resolve) => this.socket.once('connect', () => resolve()));
  }
}

/** Long enough for loopback bytes to arrive if they were going to. */
const settle = () => sleep(300);

let target: RecordingTarget;
let proxy: TcpProxy;
const clients: RecordingClient[] = [];

async function start(): Promise<void> {
  target = await RecordingTarget.start();
  proxy = await TcpProxy.start({ target: target.endpoint });
}

async function connectedClient(): Promise<RecordingClient> {
  const client = new RecordingClient(proxy.endpoint);
  clients.push(client);
  await client.connected();
  return client;
}

afterEach(async () => {
  clients.splice(0).forEach((client) => client.socket.destroy());
  await proxy?.close();
  await target?.close();
});

describe('TcpProxy', () => {
  it('forwards bytes both ways and a clean close', async () => {
    await start();
    const client = await connectedClient();
    client.socket.write('ping');
    await until(() => target.received === 'ping', 'the target to receive ping');
    target.sockets[0]?.end('pong');
    await until(() => client.ended === 'closed', 'the client to see the close');
    expect(client.received).toBe('pong');
  });

  it('holds bytes in both directions while paused and delivers them after resume', async () => {
    await start();
    const client = await connectedClient();
    client.socket.write('before;');
    await until(() => target.sockets.length === 1 && target.received === 'before;', 'first bytes');
    proxy.pause('hold');
    client.socket.write('during;');
    target.sockets[0]?.write('answer');
    await settle();
    expect(target.received).toBe('before;');
    expect(client.received).toBe('');
    expect(client.ended).toBeUndefined();

    proxy.resume();
    await until(() => target.received === 'before;during;', 'the held request');
    await until(() => client.received === 'answer', 'the held answer');
  });

  it('does not connect to the target while paused, and connects on resume', async () => {
    await start();
    proxy.pause('hold');
    const client = await connectedClient();
    client.socket.write('late');
    await settle();
    expect(target.sockets).toHaveLength(0);

    proxy.resume();
    await until(() => target.received === 'late', 'the connection made during the pause');
  });

  it('in drop mode resets open connections at pause and those made meanwhile at resume, delivering nothing', async () => {
    await start();
    const open = await connectedClient();
    await until(() => target.sockets.length === 1, 'the first connection');
    proxy.pause('drop');
    await until(() => open.ended === 'reset', 'the open connection to be reset');
    const meanwhile = await connectedClient();
    meanwhile.socket.write('lost');
    await settle();
    expect(meanwhile.ended).toBeUndefined();

    proxy.resume();
    await until(() => meanwhile.ended === 'reset', 'the held connection to be reset');
    await settle();
    expect(target.received).toBe('');
    expect(target.sockets).toHaveLength(1);
  });

  it('in refuse mode resets open connections at pause and each new one on arrival, and forwards after resume', async () => {
    await start();
    const open = await connectedClient();
    await until(() => target.sockets.length === 1, 'the first connection');
    proxy.pause('refuse');
    await until(() => open.ended === 'reset', 'the open connection to be reset');
    const refused = new RecordingClient(proxy.endpoint);
    clients.push(refused);
    await until(() => refused.ended === 'reset', 'a new connection to be reset on arrival');

    proxy.resume();
    const after = await connectedClient();
    after.socket.write('back');
    await until(() => target.received === 'back', 'a connection after resume to be forwarded');
    expect(target.sockets).toHaveLength(2);
  });

  it('cutAll resets every connection and keeps forwarding new ones', async () => {
    await start();
    const first = await connectedClient();
    await until(() => target.sockets.length === 1, 'the first connection');
    proxy.cutAll();
    await until(() => first.ended === 'reset', 'the reset');
    expect(proxy.openConnections).toBe(0);

    const second = await connectedClient();
    second.socket.write('again');
    await until(() => target.received === 'again', 'a new connection to be forwarded');
  });

  it('close stops listening', async () => {
    await start();
    await proxy.close();
    const client = new RecordingClient(proxy.endpoint);
    clients.push(client);
    const error = await new Promise<NodeJS.ErrnoException>((resolve) => client.socket.once('error', resolve));
    expect(error.code).toBe('ECONNREFUSED');
  });

  it('refuses a target that is not on loopback', async () => {
    await expect(TcpProxy.start({ target: '10.0.0.1:443' })).rejects.toThrow(/loopback/);
  });
});
