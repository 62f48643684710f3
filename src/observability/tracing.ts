import {
  context,
  createContextKey,
  propagation,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  type Context,
  type Link,
  type Span,
  type SpanOptions,
  type Tracer,
} from '@opentelemetry/api';

/**
 * The spans of the project's own chokepoints (HTTP routes, the Kubernetes transport, the SpiceDB client, the
 * audit store, reconciles, check batches). Every hook asks tracingOn() first: while tracing is off (the
 * default) no span, context or header is built, so the hot paths pay one boolean test. tracing-sdk.ts turns it
 * on once a TracerProvider is registered.
 */
export const INSTRUMENTATION_SCOPE = 'policy-grant-operator';

/** The attribute that carries the request id (`x-request-id`) on a server span. */
export const REQUEST_ID_ATTRIBUTE = 'policygrant.request_id';

let on = false;

export function tracingOn(): boolean {
  return on;
}

/** Called by the SDK set-up only. */
export function setTracingOn(value: boolean): void {
  on = value;
}

export function tracer(): Tracer {
  return trace.getTracer(INSTRUMENTATION_SCOPE);
}

const REQUEST_ID = createContextKey(REQUEST_ID_ATTRIBUTE);

/** `parent` carrying the request id, which the SpiceDB client sends on every call made within it. */
export function withRequestId(parent: Context, requestId: string): Context {
  return parent.setValue(REQUEST_ID, requestId);
}

export function activeRequestId(): string | undefined {
  return context.active().getValue(REQUEST_ID) as string | undefined;
}

/** A span to start: its name and options. */
export interface SpanDescription extends SpanOptions {
  name: string;
}

/**
 * Runs `work` inside a new active span that ends when the work settles; a failure records the exception and
 * marks the span as an error. Off: runs `work` alone, without even describing the span.
 */
export function inSpan<T>(describe: () => SpanDescription, work: () => Promise<T>): Promise<T> {
  if (!on) return work();
  const { name, ...options } = describe();
  return tracer().startActiveSpan(name, options, (span) => settle(span, work));
}

async function settle<T>(span: Span, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    markFailed(span, error);
    throw error;
  } finally {
    span.end();
  }
}

export function markFailed(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

/** Writes `traceparent` (and `tracestate`) of the active span into `carrier`; nothing while tracing is off. */
export function injectTraceContext(carrier: Record<string, string>): void {
  if (on) propagation.inject(context.active(), carrier);
}

/** The W3C traceparent of the active span, or undefined (tracing off, no span). */
export function activeTraceparent(): string | undefined {
  const carrier: Record<string, string> = {};
  injectTraceContext(carrier);
  return carrier.traceparent;
}

/** A link to the span a W3C traceparent names; none for an absent or malformed one. */
export function linksToTraceparent(traceparent: string | undefined): Link[] {
  if (traceparent === undefined) return [];
  const spanContext = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent }));
  return spanContext && trace.isSpanContextValid(spanContext) ? [{ context: spanContext }] : [];
}

interface TraceFields {
  trace_id?: string;
  span_id?: string;
}

/** pino's mixin: the active span's ids, on every line written inside a span. */
export function traceFields(): TraceFields {
  if (!on) return NO_TRACE_FIELDS;
  const spanContext = trace.getActiveSpan()?.spanContext();
  return spanContext ? { trace_id: spanContext.traceId, span_id: spanContext.spanId } : NO_TRACE_FIELDS;
}

/** Returned when there is nothing to add; mergeTraceFields never writes into it. */
export const NO_TRACE_FIELDS: TraceFields = Object.freeze({});

/** pino's mixinMergeStrategy: the line's own fields win, and a line without a span allocates nothing. */
export function mergeTraceFields(line: object, fields: object): object {
  return fields === NO_TRACE_FIELDS ? line : Object.assign(fields, line);
}
