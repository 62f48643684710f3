import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { ACL_API_FIELD_MANAGER } from '../audit/field-managers.js';
import { KubeApiError } from '../runtime/index.js';

export type KubeMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface KubeCall {
  method: KubeMethod;
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  /** PATCH only: defaults to a JSON merge patch. */
  contentType?: string;
  timeoutMs?: number;
}

/** The request never got an answer: refused, reset, timed out, TLS failed. */
export class KubernetesUnreachableError extends Error {
  override readonly name = 'KubernetesUnreachableError';
}

export const DEFAULT_KUBE_TIMEOUT_MS = 10_000;
const MERGE_PATCH = 'application/merge-patch+json';
const WRITES = new Set<KubeMethod>(['POST', 'PUT', 'PATCH']);

/**
 * Plain-JSON calls to the kube-apiserver for the ACL API's writes and point reads, with a deadline on every
 * call and one keep-alive connection pool. Credentials come from the KubeConfig per call (so rotating
 * tokens keep working); client-node's own clients open a new TLS connection per request and set no
 * deadline, which would cap create throughput and hang a request on a silent apiserver.
 * Answers other than 2xx reject with the runtime's KubeApiError; no answer rejects with
 * KubernetesUnreachableError.
 */
export class KubeClient {
  private agent?: http.Agent;

  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly defaultTimeoutMs = DEFAULT_KUBE_TIMEOUT_MS,
  ) {}

  async call<T>(call: KubeCall): Promise<T> {
    const url = this.url(call);
    const payload = call.body === undefined ? undefined : JSON.stringify(call.body);
    const options: https.RequestOptions = { method: call.method, headers: {} };
    await this.kubeConfig.applyToHTTPSOptions(options);
    options.agent = this.agentFor(url, options);
    options.headers = {
      ...options.headers,
      accept: 'application/json',
      // Always a length: node sends DELETE bodies unframed otherwise, which corrupts a kept-alive connection.
      ...(payload === undefined
        ? {}
        : {
            'content-type': call.method === 'PATCH' ? (call.contentType ?? MERGE_PATCH) : 'application/json',
            'content-length': String(Buffer.byteLength(payload)),
          }),
    };
    const { status, body } = await this.send(url, options, payload, call.timeoutMs ?? this.defaultTimeoutMs);
    if (status < 200 || status >= 300) throw KubeApiError.fromBody(status, body);
    return JSON.parse(body) as T;
  }

  close(): void {
    this.agent?.destroy();
  }

  private url(call: KubeCall): URL {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new KubernetesUnreachableError('kubeconfig has no current cluster');
    const url = new URL(cluster.server.replace(/\/+$/, '') + call.path);
    // Names the ACL API in the object's managedFields: the controller does not audit these changes again.
    if (WRITES.has(call.method)) url.searchParams.set('fieldManager', ACL_API_FIELD_MANAGER);
    for (const [name, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, value);
    }
    return url;
  }

  /** A proxy agent from the KubeConfig is used as given; otherwise one pooled agent with its TLS material. */
  private agentFor(url: URL, options: https.RequestOptions): http.Agent {
    if (this.kubeConfig.getCurrentCluster()?.proxyUrl) return options.agent as http.Agent;
    this.agent ??=
      url.protocol === 'http:'
        ? new http.Agent({ keepAlive: true, maxSockets: 64 })
        : new https.Agent({
            keepAlive: true,
            maxSockets: 64,
            ca: options.ca,
            cert: options.cert,
            key: options.key,
            pfx: options.pfx,
            passphrase: options.passphrase,
            ...(options.rejectUnauthorized === undefined
              ? {}
              : { rejectUnauthorized: options.rejectUnauthorized }),
            ...(options.servername === undefined ? {} : { servername: options.servername }),
          });
    return this.agent;
  }

  private send(
    url: URL,
    options: https.RequestOptions,
    payload: string | undefined,
    timeoutMs: number,
  ): Promise<{ status: number; body: string }> {
    const transport = url.protocol === 'http:' ? http : https;
    return new Promise((resolve, reject) => {
      const fail = (message: string, cause?: unknown) =>
        reject(new KubernetesUnreachableError(`${options.method} ${url.pathname}: ${message}`, { cause }));
      const request = transport.request(url, options, (response) => {
        response.setEncoding('utf8');
        let body = '';
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        response.on('error', (error) => fail(error.message, error));
      });
      request.setTimeout(timeoutMs, () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      request.on('error', (error) => fail(error.message, error));
      request.end(payload);
    });
  }
}
