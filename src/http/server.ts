import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RequestListener, Server, ServerResponse } from 'node:http';
import { Drain } from './drain.js';
import { expressServerOptions, type ExpressPrototypes } from './express-messages.js';

export interface ListenOptions {
  /** 0 picks a free port. */
  port: number;
  host: string;
  /** How long close() lets in-flight requests finish before it cuts connections. */
  closeGraceMs?: number;
  /** The drain close() runs first; the app's readiness shares it. Default: none (close at once). */
  drain?: Drain;
}

export interface RunningServer {
  readonly url: string;
  readonly port: number;
  /** Drains (readiness fails, keeps serving for the drain's delay), then stops and closes every connection. */
  close(): Promise<void>;
}

export const DEFAULT_CLOSE_GRACE_MS = 10_000;

/** An express app, or any request listener (served with node's own request and response classes). */
export type ServedApp = RequestListener & Partial<ExpressPrototypes>;

export function listen(app: ServedApp, options: ListenOptions): Promise<RunningServer> {
  const server = createServer(isExpressApp(app) ? expressServerOptions(app) : {}, app);
  const drain = options.drain ?? new Drain();
  const endKeepAlive = endKeepAliveWhileDraining(server, drain);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      const { port } = server.address() as AddressInfo;
      const graceMs = options.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS;
      resolve({
        url: `http://${connectableHost(options.host)}:${port}`,
        port,
        close: () => {
          const drained = drain.run(() => closeServer(server, graceMs));
          endKeepAlive();
          return drained;
        },
      });
    });
  });
}

/**
 * Every answer of a draining server ends its connection: the client's next request opens one elsewhere.
 * Answers of requests that arrived before the drain get it from the function returned, called as it begins.
 */
function endKeepAliveWhileDraining(server: Server, drain: Drain): () => void {
  const unanswered = new Set<ServerResponse>();
  const endConnection = (response: ServerResponse) => {
    if (!response.headersSent) response.setHeader('connection', 'close');
  };
  // Before the app's listener, so that the header is set before any handler can send its answer.
  server.prependListener('request', (_request, response) => {
    if (drain.draining) return endConnection(response);
    unanswered.add(response);
    response.once('close', () => unanswered.delete(response));
  });
  return () => unanswered.forEach(endConnection);
}

function isExpressApp(app: ServedApp): app is RequestListener & ExpressPrototypes {
  return typeof app.request === 'object' && typeof app.response === 'object';
}

// A server bound to every interface is reached, from this machine, on loopback.
function connectableHost(bound: string): string {
  if (bound === '0.0.0.0' || bound === '') return '127.0.0.1';
  if (bound === '::') return '[::1]';
  return bound.includes(':') ? `[${bound}]` : bound;
}

/**
 * Stops accepting, closes idle keep-alive connections, lets in-flight requests finish within the grace
 * period (their answers close their connections), then drops what is left.
 */
function closeServer(server: Server, graceMs: number): Promise<void> {
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
