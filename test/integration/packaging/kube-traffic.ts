import { writeFile } from 'node:fs/promises';
import { createServer, request, type RequestOptions, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { createCertificateAuthority } from '../../../dev/localplane/certificates.js';

// What a service under test asks the API server and what it is answered: a TLS relay on loopback between the
// service and the API server, for one ServiceAccount. The RBAC proof reads it to see, without timing anything,
// which calls were refused (403) and whether each informer got its watch.

/** One call the service made, with the status it was answered. */
export interface KubeCall {
  method: string;
  /** The plural of the resource called, e.g. `policygrants`, `namespaces`, `leases`. */
  resource: string;
  watch: boolean;
  status: number;
}

export class KubeTraffic {
  readonly calls: KubeCall[] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(
    /** Acts as the same user as the target, through the relay. */
    readonly kubeConfig: KubeConfig,
    private readonly server: Server,
  ) {}

  /** Starts a relay to `target`'s API server that forwards with `target`'s credentials. */
  static async start(target: KubeConfig): Promise<KubeTraffic> {
    const authority = await createCertificateAuthority('kube-traffic-ca');
    const leaf = await authority.issue({
      commonName: 'kube-traffic',
      usage: 'server',
      ipAddresses: ['127.0.0.1'],
    });
    const server = createServer({ cert: leaf.certificate, key: leaf.privateKey });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const traffic = new KubeTraffic(relayKubeConfig(target, url, authority.certificate), server);
    server.on('request', (incoming: IncomingMessage, answer: ServerResponse) =>
      traffic.forward(target, incoming, answer),
    );
    server.on('secureConnection', (socket: Socket) => {
      traffic.sockets.add(socket);
      socket.on('close', () => traffic.sockets.delete(socket));
    });
    return traffic;
  }

  /** Writes a kubeconfig file of the relay, for a service started with KUBECONFIG. */
  writeKubeconfig(path: string): Promise<void> {
    return writeFile(path, this.kubeConfig.exportConfig(), { mode: 0o600 });
  }

  /** The calls answered 403. */
  refusals(matching: (call: KubeCall) => boolean = () => true): KubeCall[] {
    return this.calls.filter((call) => call.status === 403 && matching(call));
  }

  async stop(): Promise<void> {
    const closed = new Promise((resolve) => this.server.close(resolve));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  private async forward(
    target: KubeConfig,
    incoming: IncomingMessage,
    answer: ServerResponse,
  ): Promise<void> {
    const cluster = target.getCurrentCluster();
    const url = new URL(incoming.url ?? '/', cluster?.server);
    const options: RequestOptions = {
      method: incoming.method,
      headers: { ...incoming.headers, host: url.host },
    };
    await target.applyToHTTPSOptions(options);
    const upstream = request(url, options, (response) => {
      this.calls.push(describeCall(incoming.method ?? 'GET', url, response.statusCode ?? 0));
      answer.writeHead(response.statusCode ?? 502, response.headers);
      response.pipe(answer);
    });
    upstream.on('error', () => answer.destroy());
    answer.on('close', () => upstream.destroy());
    incoming.pipe(upstream);
  }
}

function relayKubeConfig(target: KubeConfig, server: string, caPem: string): KubeConfig {
  const cluster = target.getCurrentCluster();
  const user = target.getCurrentUser();
  if (!cluster || !user) throw new Error('the kubeconfig has no current cluster or user');
  const { namespace } = target.getContextObject(target.getCurrentContext()) ?? {};
  const relayed = new KubeConfig();
  relayed.loadFromOptions({
    clusters: [
      { name: cluster.name, server, caData: Buffer.from(caPem).toString('base64'), skipTLSVerify: false },
    ],
    users: [user],
    contexts: [
      { name: 'relayed', cluster: cluster.name, user: user.name, ...(namespace ? { namespace } : {}) },
    ],
    currentContext: 'relayed',
  });
  return relayed;
}

/** `/api/v1/namespaces/ns/configmaps/x` → configmaps; `/apis/g/v/policygrants?watch=1` → policygrants, watch. */
function describeCall(method: string, url: URL, status: number): KubeCall {
  const segments = url.pathname.split('/').filter((segment) => segment !== '');
  const rest = segments[0] === 'api' ? segments.slice(2) : segments.slice(3);
  const resource = rest[0] === 'namespaces' && rest.length > 2 ? rest[2] : rest[0];
  const watch = ['1', 'true'].includes(url.searchParams.get('watch') ?? '');
  return { method, resource: resource ?? '', watch, status };
}
