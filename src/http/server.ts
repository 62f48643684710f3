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
      const host = options.host.includes(':') ? `[${options.host}]` : options.host;
      resolve({
        url: `http://${host}:${port}`,
        port,
        close: () => closeServer(server, options.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS),
      });
    });
  });
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
