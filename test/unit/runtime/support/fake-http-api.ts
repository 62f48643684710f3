import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

export type Route = (request: IncomingMessage, url: URL, response: ServerResponse) => void;

/** A plain HTTP server standing in for the kube-apiserver, with a KubeConfig pointing at it. */
export class FakeHttpApi {
  readonly requests: { method: string; url: URL; authorization?: string; body: string }[] = [];
  private readonly server: Server;
  private readonly open = new Set<ServerResponse>();
  route: Route = (_req, _url, res) => res.writeHead(404).end();

  constructor() {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://fake');
        this.requests.push({ method: req.method ?? '', url, authorization: req.headers.authorization, body });
        this.open.add(res);
        res.on('close', () => this.open.delete(res));
        this.route(req, url, res);
      });
    });
  }

  async listen(): Promise<KubeConfig> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'fake', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'user', token: 'secret-token' }],
      contexts: [{ name: 'fake', cluster: 'fake', user: 'user' }],
      currentContext: 'fake',
    });
    return kubeConfig;
  }

  /** Responses still open (e.g. watches). */
  openResponses(): ServerResponse[] {
    return [...this.open];
  }

  /** Cuts every open connection without ending its response, as a crashing server would. */
  dropConnections(): void {
    for (const res of this.open) {
      res.socket?.destroy();
    }
  }

  async close(): Promise<void> {
    this.dropConnections();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}

export function startStream(res: ServerResponse): (event: unknown) => void {
  res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
  res.flushHeaders();
  return (event) => res.write(`${JSON.stringify(event)}\n`);
}
