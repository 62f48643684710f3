import {
  context,
  createContextKey,
  propagation,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import type { Context, Link, Span, SpanOptions, Tracer } from '@opentelemetry/api';

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
  const active = context.active();
  const links = active.getValue(LINKS) as Link[] | undefined;
  if (links === undefined) return tracer().startActiveSpan(name, options, (span) => settle(span, work));
  // The links are the next span's alone: its children do not inherit them.
  const linked = { ...options, links: [...(options.links ?? []), ...links] };
  return tracer().startActiveSpan(name, linked, active.deleteValue(LINKS), (span) => settle(span, work));
}

const LINKS = createContextKey('policygrant.links');

/**
 * Runs `work` outside any trace (a new root), the first span it starts linked to the spans active in each of
 * `contexts`: a SpiceDB call that serves several requests at once is the child of none of them.
 */
export function linkedToEach<T>(
  contexts: readonly (Context | undefined)[],
  work: () => Promise<T>,
): Promise<T> {
  if (!on) return work();
  const links = contexts.flatMap((each) => {
    const spanContext = each === undefined ? undefined : trace.getSpanContext(each);
    return spanContext ? [{ context: spanContext }] : [];
  });
  return context.with(ROOT_CONTEXT.setValue(LINKS, links), work);
}

/** The active context while tracing is on (to resume it later with inContext), else undefined. */
export function activeContextIfTracing(): Context | undefined {
  return on ? context.active() : undefined;
}

/** Runs `work` in a context captured by activeContextIfTracing; as is when there is none. */
export function inContext<T>(captured: Context | undefined, work: () => T): T {
  return captured === undefined ? work() : context.with(captured, work);
}

/**
 * Runs `work` that serves the callers whose contexts are given: in the one caller's context, or, for several,
 * in a new trace linked to each of them.
 */
export function onBehalfOf<T>(
  contexts: readonly (Context | undefined)[],
  work: () => Promise<T>,
): Promise<T> {
  return contexts.length === 1 ? inContext(contexts[0], work) : linkedToEach(contexts, work);
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
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
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

/**
 * The annotation on which a writer of an object (the ACL API) leaves the W3C traceparent of the request that
 * wrote it; the controller's reconciles of the object link to it. Objects written by others have none.
 */
export const TRACEPARENT_ANNOTATION = 'acl.policygrant.dev/traceparent';

/** `annotations` with the active span's traceparent added while tracing is on; as they are otherwise. */
export function withTraceparent(annotations: Record<string, string>): Record<string, string> {
  const traceparent = activeTraceparent();
  return traceparent === undefined ? annotations : { ...annotations, [TRACEPARENT_ANNOTATION]: traceparent };
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
