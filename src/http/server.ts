import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RequestListener } from 'node:http';

export interface ListenOptions {
  /** 0 picks a free port. */
  port: number;
  host: string;
  /** How long close() lets in-flight requests finish before it cuts connections. */
  closeGraceMs?: number;
}

export interface RunningServer {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

export const DEFAULT_CLOSE_GRACE_MS = 10_000;

export function listen(app: RequestListener, options: ListenOptions): Promise<RunningServer> {
  const server = createServer(app);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://${connectableHost(options.host)}:${port}`,
        port,
        close: () => closeServer(server, options.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS),
      });
    });
  });
}

// A server bound to every interface is reached, from this machine, on loopback.
function connectableHost(bound: string): string {
  if (bound === '0.0.0.0' || bound === '') return '127.0.0.1';
  if (bound === '::') return '[::1]';
  return bound.includes(':') ? `[${bound}]` : bound;
}

/** Stops accepting, lets in-flight requests finish within the grace period, then drops what is left. */
function closeServer(server: ReturnType<typeof createServer>, graceMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close((error) => {
      clearTimeout(force);
      if (error) reject(error);
      else resolve();
    });
    server.closeIdleConnections();
  });
}
