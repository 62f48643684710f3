import http from 'node:http';
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeApiError } from './api-error.js';
import { linkedTimeout } from './timing.js';

// Transport: node:http(s) with the options KubeConfig.applyToHTTPSOptions fills in (TLS material, bearer
// token or exec/OIDC credentials, proxy agent), rather than client-node's Watch class or its generated
// clients, because
// - Watch cannot be aborted before the response headers arrive (its AbortController is returned only
//   then), so a connection that hangs while opening could be neither detected as a stall nor closed;
// - Watch drops unparsable lines silently, and sets no timeout;
// - the generated list functions turn objects into model classes (timestamps become Date) while the watch
//   yields plain JSON, so an informer fed by both would hold objects of two shapes.
// Here list, watch and Lease calls all speak plain JSON over one code path, abortable at any moment.

export type QueryParams = Record<string, string | number | boolean | undefined>;

export interface KubeRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  /** Of the body; default `application/json` (a PATCH names its patch type, e.g. MERGE_PATCH). */
  contentType?: string;
  query?: QueryParams;
  body?: unknown;
  signal?: AbortSignal;
}

const DEFAULT_TIMEOUT_MS = 30_000;
export const MERGE_PATCH = 'application/merge-patch+json';

function requestUrl(kubeConfig: KubeConfig, path: string, query: QueryParams = {}): URL {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) {
    throw new Error('kubeconfig has no current cluster');
  }
  const url = new URL(cluster.server.replace(/\/+$/, '') + path);
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined) {
      url.searchParams.set(name, String(value));
    }
  }
  return url;
}

/** Sends a request and resolves with the response as soon as its headers arrived. */
export async function sendRequest(kubeConfig: KubeConfig, request: KubeRequest): Promise<IncomingMessage> {
  const url = requestUrl(kubeConfig, request.path, request.query);
  const payload = request.body === undefined ? undefined : JSON.stringify(request.body);
  const options: https.RequestOptions = {
    method: request.method,
    headers:
      payload === undefined
        ? { Accept: 'application/json' }
        : { Accept: 'application/json', 'Content-Type': request.contentType ?? 'application/json' },
  };
  await kubeConfig.applyToHTTPSOptions(options);
  const transport = url.protocol === 'http:' ? http : https;
  return new Promise((resolve, reject) => {
    const req = transport.request(url, { ...options, signal: request.signal }, resolve);
    req.on('error', reject);
    req.end(payload);
  });
}

export async function readBody(response: IncomingMessage): Promise<string> {
  response.setEncoding('utf8');
  let body = '';
  for await (const chunk of response) {
    body += chunk as string;
  }
  return body;
}

/** One JSON request, answer included within `timeoutMs` (default 30 s); a non-2xx answer rejects with a KubeApiError. */
export async function requestJson<T>(
  kubeConfig: KubeConfig,
  { timeoutMs = DEFAULT_TIMEOUT_MS, ...request }: KubeRequest & { timeoutMs?: number },
): Promise<T> {
  const { signal, dispose } = linkedTimeout(request.signal, timeoutMs);
  try {
    const response = await sendRequest(kubeConfig, { ...request, signal });
    const body = await readBody(response);
    const statusCode = response.statusCode ?? 0;
    if (statusCode < 200 || statusCode >= 300) {
      throw KubeApiError.fromBody(statusCode, body);
    }
    return JSON.parse(body) as T;
  } finally {
    dispose();
  }
}
