import { SpanKind } from '@opentelemetry/api';
import type { SpanDescription } from '../observability/tracing.js';
import type { KubeMethod, QueryParams } from './kube-request.js';

/** What a request to the kube-apiserver does, in Kubernetes' words (the audit log's verbs). */
export interface KubeRequestTarget {
  verb: string;
  /** The plural resource (`policygrants`), or the path of a non-resource URL (`/version`). */
  resource: string;
  subresource?: string;
  namespace?: string;
}

/** Reads a path built by paths.ts: `/api/v1/...` or `/apis/<group>/<version>/...`, then an optional namespace. */
export function kubeRequestTarget(
  method: KubeMethod,
  path: string,
  query: QueryParams = {},
): KubeRequestTarget {
  const segments = path.split('/').filter(Boolean).map(decodeURIComponent);
  const resourceStart = segments[0] === 'api' ? 2 : segments[0] === 'apis' ? 3 : -1;
  if (resourceStart < 0) return { verb: method.toLowerCase(), resource: path };
  let rest = segments.slice(resourceStart);
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length > 2) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [resource = '', name, subresource] = rest;
  return {
    verb: verbOf(method, name !== undefined, query),
    resource,
    ...(subresource === undefined ? {} : { subresource }),
    ...(namespace === undefined ? {} : { namespace }),
  };
}

function verbOf(method: KubeMethod, named: boolean, query: QueryParams): string {
  switch (method) {
    case 'GET':
      return named ? 'get' : query.watch ? 'watch' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return named ? 'delete' : 'deletecollection';
  }
}

/** The client span of a call: `create policygrants`, `patch policygrants/status`, `list leases`. */
export function kubeSpan(method: KubeMethod, path: string, query?: QueryParams): SpanDescription {
  const target = kubeRequestTarget(method, path, query);
  const resource =
    target.subresource === undefined ? target.resource : `${target.resource}/${target.subresource}`;
  return {
    name: `${target.verb} ${resource}`,
    kind: SpanKind.CLIENT,
    attributes: {
      'http.request.method': method,
      'k8s.request.verb': target.verb,
      'k8s.request.resource': target.resource,
      ...(target.subresource === undefined ? {} : { 'k8s.request.subresource': target.subresource }),
      ...(target.namespace === undefined ? {} : { 'k8s.namespace.name': target.namespace }),
    },
  };
}
