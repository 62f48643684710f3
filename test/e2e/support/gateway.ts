import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Route {
  /** Public path prefix, e.g. `/acl`. */
  prefix: string;
  /** Upstream URL the prefix is replaced with, e.g. `http://127.0.0.1:8080/v2`. */
  upstream: string;
}

export interface Gateway {
  url: string;
  close(): Promise<void>;
}

/**
 * The spec's gateway contract in miniature: a public prefix is stripped and replaced with the service's
 * base path (strip-prefix), everything else passes through untouched. The end-to-end suite talks only
 * to this, as a REST client behind the real gateway would. Written by hand because it is twenty lines
 * of test scaffolding, not product code.
 */
export async function startGateway(routes: Route[]): Promise<Gateway> {
  const server = createServer((req, res) => forward(routes, req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => closeServer(server) };
}

function forward(routes: Route[], req: IncomingMessage, res: ServerResponse): void {
  const path = req.url ?? '/';
  const route = routes.find(
    (r) => path === r.prefix || path.startsWith(`${r.prefix}/`) || path.startsWith(`${r.prefix}?`),
  );
  if (!route) {
    res.writeHead(404).end();
    return;
  }
  const target = new URL(route.upstream + path.slice(route.prefix.length));
  const upstream = request(
    target,
    { method: req.method, headers: { ...req.headers, host: target.host } },
    (reply) => {
      res.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(res);
    },
  );
  upstream.on('error', () => res.writeHead(502).end());
  req.pipe(upstream);
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}
