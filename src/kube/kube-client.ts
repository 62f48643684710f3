import http from 'node:http';
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import { injectTraceContext, inSpan } from '../observability/tracing.js';
import { KubeApiError, KubernetesUnreachableError } from './api-error.js';
import type { KubeMethod, QueryParams } from './kube-request.js';
import { kubeSpan } from './kube-span.js';
import { linkedTimeout } from './linked-timeout.js';

export interface KubeCall {
  method: KubeMethod;
  /** Built by paths.ts, every segment encoded. */
  path: string;
  query?: QueryParams;
  body?: unknown;
  /** PATCH only: defaults to a JSON merge patch. */
  contentType?: string;
  /** Deadline of the whole call, answer included; default the client's. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface KubeClientOptions {
  /** Named on every write (managedFields); absent for a process that writes nothing it would be audited for. */
  fieldManager?: string;
  /** Default deadline of a call. */
  timeoutMs?: number;
}

export const DEFAULT_KUBE_TIMEOUT_MS = 10_000;
export const MERGE_PATCH = 'application/merge-patch+json';
const WRITES = new Set<KubeMethod>(['POST', 'PUT', 'PATCH']);
const MAX_SOCKETS = 64;

/**
 * The project's one transport to the kube-apiserver: every list, watch, Lease, Event, TokenReview, status and
 * object write of src/, dev/, the test harnesses and the benchmarks goes through a KubeClient. Plain JSON over
 * node:http(s), with the options KubeConfig.applyToHTTPSOptions fills in per call (TLS material, a refreshed
 * bearer token or exec/OIDC credentials, a proxy agent), so client-node stays the library for kubeconfig
 * loading and authentication. Hand-rolled rather than client-node's generated clients and Watch, because
 * - they open a new TLS connection per request (applyToHTTPSOptions builds a new agent every time): here one
 *   keep-alive pool per client, which a grant's three writes and the ACL API's creates would otherwise pay
 *   a handshake for each;
 * - they set no deadline, and Watch cannot be aborted before the response headers arrive, so a silent
 *   apiserver would hang a request or a watch: here every call has a deadline and a signal, at any moment;
 * - Watch drops unparsable lines silently, and the generated list functions turn objects into model classes
 *   (timestamps become Date) while a watch yields plain JSON: an informer fed by both would hold two shapes.
 * A non-2xx answer rejects with KubeApiError, no answer (refused, reset, timed out, aborted, TLS failed) with
 * KubernetesUnreachableError.
 */
export class KubeClient {
  private agent?: http.Agent;

  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly options: KubeClientOptions = {},
  ) {}

  /** One JSON call, answered within its deadline, in a client span when tracing is on. */
  call<T>(call: KubeCall): Promise<T> {
    return inSpan(
      () => kubeSpan(call.method, call.path, call.query),
      () => this.send<T>(call),
    );
  }

  private async send<T>({ timeoutMs, ...call }: KubeCall): Promise<T> {
    const { signal, dispose } = linkedTimeout(
      call.signal,
      timeoutMs ?? this.options.timeoutMs ?? DEFAULT_KUBE_TIMEOUT_MS,
    );
    try {
      const response = await this.open({ ...call, signal });
      const body = await readBody(response).catch((error: unknown) => {
        throw unreachable(call, error);
      });
      const status = response.statusCode ?? 0;
      if (status < 200 || status >= 300) throw KubeApiError.fromBody(status, body);
      return JSON.parse(body) as T;
    } finally {
      dispose();
    }
  }

  /**
   * Sends a call and resolves with the response once its headers arrived (a watch reads it as a stream). The
   * active span's `traceparent` goes with it; a watch opened alone is no span of its own (its list is one).
   */
  async open(call: Omit<KubeCall, 'timeoutMs'>): Promise<IncomingMessage> {
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
    injectTraceContext(options.headers as Record<string, string>);
    const transport = url.protocol === 'http:' ? http : https;
    return new Promise((resolve, reject) => {
      const request = transport.request(url, { ...options, signal: call.signal }, resolve);
      request.on('error', (error) => reject(unreachable(call, error)));
      request.end(payload);
    });
  }

  /** Closes the pooled connections. */
  close(): void {
    this.agent?.destroy();
  }

  private url(call: Pick<KubeCall, 'method' | 'path' | 'query'>): URL {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new KubernetesUnreachableError('kubeconfig has no current cluster');
    const url = new URL(cluster.server.replace(/\/+$/, '') + call.path);
    // Names the writer in the object's managedFields: the grant audit tells the ACL API's and the controller's
    // changes apart by it.
    if (this.options.fieldManager !== undefined && WRITES.has(call.method)) {
      url.searchParams.set('fieldManager', this.options.fieldManager);
    }
    for (const [name, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    return url;
  }

  /** A proxy agent from the KubeConfig is used as given; otherwise one pooled agent with its TLS material. */
  private agentFor(url: URL, options: https.RequestOptions): http.Agent {
    if (this.kubeConfig.getCurrentCluster()?.proxyUrl) return options.agent as http.Agent;
    this.agent ??=
      url.protocol === 'http:'
        ? new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS })
        : new https.Agent({
            keepAlive: true,
            maxSockets: MAX_SOCKETS,
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
}

function unreachable(
  call: Pick<KubeCall, 'method' | 'path' | 'signal'>,
  error: unknown,
): KubernetesUnreachableError {
  const why = call.signal?.aborted
    ? String(call.signal.reason)
    : error instanceof Error
      ? error.message
      : String(error);
  return new KubernetesUnreachableError(`${call.method} ${call.path}: ${why}`, { cause: error });
}

export async function readBody(response: IncomingMessage): Promise<string> {
  response.setEncoding('utf8');
  let body = '';
  for await (const chunk of response) body += chunk as string;
  return body;
}
