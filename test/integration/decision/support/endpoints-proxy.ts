import { connect, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { sleep } from '../../../../dev/wait/sleep.js';

/** How often readiness is probed, as a kubelet's periodSeconds would (shorter: the test runs for seconds). */
const PROBE_PERIOD_MS = 100;
/** A probe that has not answered by then counts as failed, as a kubelet's timeoutSeconds. */
const PROBE_TIMEOUT_MS = 5_000;

interface Backend {
  port: number;
  ready: boolean;
}

/**
 * A Service on loopback, as an endpoints controller and kube-proxy make one: each client connection goes to
 * the next backend, round-robin, among those whose GET /healthz/ready last answered 200; a backend whose
 * probe fails leaves the rotation (its open connections stay, as conntrack keeps them). With no ready
 * backend, or when the chosen one refuses, the client's connection is reset.
 */
export class EndpointsProxy {
  private readonly backends = new Map<number, Backend>();
  private next = 0;
  private closed = false;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<EndpointsProxy> {
    const server = createServer({ pauseOnConnect: true });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const proxy = new EndpointsProxy(
      server,
      `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    );
    server.on('connection', (client) => proxy.route(client));
    return proxy;
  }

  /** Probes the backend on `port` from now on; it joins the rotation once ready. */
  add(port: number): void {
    const backend: Backend = { port, ready: false };
    this.backends.set(port, backend);
    void this.probe(backend);
  }

  isReady(port: number): boolean {
    return this.backends.get(port)?.ready ?? false;
  }

  async close(): Promise<void> {
    this.closed = true;
    await new Promise((resolve) => this.server.close(resolve));
  }

  private async probe(backend: Backend): Promise<void> {
    while (!this.closed && this.backends.get(backend.port) === backend) {
      backend.ready = await fetch(`http://127.0.0.1:${backend.port}/healthz/ready`, {
        signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
      }).then(
        async (response) => {
          await response.body?.cancel();
          return response.status === 200;
        },
        () => false,
      );
      await sleep(PROBE_PERIOD_MS);
    }
  }

  private route(client: Socket): void {
    client.on('error', () => undefined);
    const ready = [...this.backends.values()].filter((backend) => backend.ready);
    const backend = ready[this.next++ % Math.max(ready.length, 1)];
    if (!backend) return void client.resetAndDestroy();
    const upstream = connect({ host: '127.0.0.1', port: backend.port, noDelay: true });
    upstream.on('error', () => client.resetAndDestroy());
    client.on('error', () => upstream.resetAndDestroy());
    upstream.once('connect', () => {
      client.pipe(upstream).pipe(client);
      client.resume();
    });
  }
}
