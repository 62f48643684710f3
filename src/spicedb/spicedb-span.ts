import { Metadata } from '@grpc/grpc-js';
import { SpanKind } from '@opentelemetry/api';
import {
  activeRequestId,
  injectTraceContext,
  tracingOn,
  type SpanDescription,
} from '../observability/tracing.js';

/** The gRPC metadata key SpiceDB reads a caller's request id from (and logs, and answers back). */
export const SPICEDB_REQUEST_ID_KEY = 'x-request-id';

const SCHEMA_METHODS = new Set(['ReadSchema', 'WriteSchema', 'DiffSchema']);

function serviceOf(method: string): string {
  if (SCHEMA_METHODS.has(method)) return 'authzed.api.v1.SchemaService';
  if (method === 'Watch') return 'authzed.api.v1.WatchService';
  return 'authzed.api.v1.PermissionsService';
}

/** The client span of one SpiceDB call, named as OpenTelemetry's RPC conventions say: `service/method`. */
export function spicedbSpan(method: string): SpanDescription {
  const service = serviceOf(method);
  return {
    name: `${service}/${method}`,
    kind: SpanKind.CLIENT,
    attributes: { 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': method },
  };
}

/**
 * The metadata of a call: while tracing is on, the active span's `traceparent` and the request id of the
 * HTTP request the call serves; empty otherwise (gRPC would create an empty one all the same).
 */
export function callMetadata(): Metadata {
  const metadata = new Metadata();
  if (!tracingOn()) return metadata;
  const carrier: Record<string, string> = {};
  injectTraceContext(carrier);
  for (const [key, value] of Object.entries(carrier)) metadata.set(key, value);
  const requestId = activeRequestId();
  if (requestId !== undefined) metadata.set(SPICEDB_REQUEST_ID_KEY, asMetadataValue(requestId));
  return metadata;
}

/**
 * A request id as a gRPC metadata value, which allows printable ASCII only: any other character (a tab, or a
 * latin1 one an HTTP header may carry) percent-encoded, and `%` itself, so that the value stays unambiguous.
 */
export function asMetadataValue(requestId: string): string {
  return requestId.replace(
    /[^\x20-\x24\x26-\x7e]/g,
    (char) => `%${char.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
}
